import BeaconKit
import BlueZ
public import DBus
public import MainLoopKit
public import BeacondCore

/// `hci[:hciN]` and `bluez[:hciN]`: scanning through bluetoothd.
///
/// Both ask bluetoothd for LE discovery (`BlueZDiscovery`), so beacond never takes the controller from it and
/// other clients keep working. `hci` then reads every advertising report from a raw HCI socket (needs
/// CAP_NET_RAW): each advertisement with its own RSSI, decoded by BeaconKit. `bluez` needs no capability and
/// takes what bluetoothd reports on D-Bus (Device1 ManufacterData/RSSI). docs/scanning.md compares them.
public final class BlueZScannerSource: BeaconScanner {
    public enum Mode: String, Sendable {
        case hci, bluez
    }

    public let mode: Mode
    public let adapterName: String?
    /// Why this mode was chosen, when `auto` chose it (for the log and status).
    public let choice: String?
    private let discovery: BlueZDiscovery
    private var socket: HCISocket?
    private var socketSource: MainLoop.SourceID?
    private weak var loop: MainLoop?
    private var deliver: ((ScannerInput) -> Void)?
    private var status: ((ScannerStatus) -> Void)?

    public init(mode: Mode, adapterName: String?, server: DBusObjectServer, loop: MainLoop, choice: String? = nil) {
        self.mode = mode
        self.adapterName = adapterName
        self.choice = choice
        self.loop = loop
        discovery = BlueZDiscovery(server: server, loop: loop, adapterName: adapterName, reportsAdvertisements: mode == .bluez)
    }

    public var label: String {
        "\(mode.rawValue)" + (adapterName.map { ":\($0)" } ?? "") + (choice.map { " (\($0))" } ?? "")
    }

    public var adapters: [ScannerAdapter] {
        discovery.adapters.values.sorted { $0.name < $1.name }.map {
            ScannerAdapter(name: $0.name, address: $0.address, powered: $0.powered)
        }
    }

    @discardableResult
    public func start(
        loop: MainLoop, deliver: @escaping (ScannerInput) -> Void,
        status: @escaping (ScannerStatus) -> Void
    ) throws(ScannerError) -> ScannerStatus {
        self.deliver = deliver
        self.status = status
        discovery.stateChanged = { [weak self] state in self?.discoveryChanged(state) }
        discovery.advertisement = { advertisement in
            deliver(
                .advertisement(
                    advertisement.content, rssi: advertisement.rssi, address: advertisement.address,
                    addressType: advertisement.addressType))
        }
        do {
            try discovery.start()
        } catch {
            throw ScannerError("cannot listen to bluetoothd's signals: \(error.message)")
        }
        return .waiting("asking bluetoothd for LE discovery")
    }

    public func stop() {
        closeSocket()
        discovery.stop()
        deliver = nil
        status = nil
    }

    deinit {
        closeSocket()
    }

    private func discoveryChanged(_ state: BlueZDiscovery.State) {
        switch state {
        case .stopped:
            closeSocket()
        case .waiting(let reason):
            closeSocket()
            status?(.waiting(reason))
        case .discovering(let adapter):
            switch mode {
            case .bluez:
                status?(.scanning("\(adapter.name) (\(adapter.address)) through bluetoothd's D-Bus reports"))
            case .hci:
                openSocket(on: adapter)
            }
        }
    }

    private func openSocket(on adapter: BlueZAdapter) {
        guard socket == nil else { return }
        guard let index = adapter.index, let loop else {
            status?(.waiting("adapter \(adapter.name) has no HCI index"))
            return
        }
        do {
            let socket = try HCISocket(deviceIndex: index)
            self.socket = socket
            socketSource = loop.addDescriptor(socket.descriptor, events: .readable) { [weak self] _ in
                self?.readSocket()
            }
            status?(.scanning("\(adapter.name) (\(adapter.address)): every advertising report from an HCI socket, discovery by bluetoothd"))
        } catch {
            status?(.waiting("\(error)"))
        }
    }

    private func readSocket() {
        guard let socket, let deliver else { return }
        do {
            try socket.readEvents { deliver(.packet(.hciEvent, $0)) }
        } catch {
            // The adapter went away under the socket; bluetoothd's signals say when it is back. If discovery
            // still runs (a transient error), try the socket again shortly.
            closeSocket()
            status?(.waiting("\(error)"))
            loop?.schedule(at: .now + .seconds(1)) { [weak self] in
                guard let self, self.deliver != nil, case .discovering(let adapter) = self.discovery.state else { return }
                self.openSocket(on: adapter)
            }
        }
    }

    private func closeSocket() {
        if let socketSource { loop?.removeDescriptor(socketSource) }
        socketSource = nil
        socket = nil
    }
}
