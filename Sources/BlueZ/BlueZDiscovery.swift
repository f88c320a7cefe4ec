public import BeaconKit
public import DBus
public import MainLoopKit
import Foundation

/// One Bluetooth adapter as bluetoothd describes it (`org.bluez.Adapter1`).
public struct BlueZAdapter: Hashable, Sendable {
    public var path: String
    public var name: String
    public var address: String
    public var powered: Bool
    public var discovering: Bool

    /// The kernel's index (`hci0` → 0), for the HCI socket.
    public var index: Int32? { name.hasPrefix("hci") ? Int32(name.dropFirst(3)) : nil }
}

/// An advertisement bluetoothd reported for a device (`org.bluez.Device1` ManufacturerData and RSSI).
public struct BlueZAdvertisement: Sendable {
    public var frame: IBeaconFrame
    public var rssi: Int8?
    public var address: BluetoothAddress
    public var addressType: UInt8
}

/// LE discovery through bluetoothd, shared politely: beacond holds one discovery session with a filter
/// (Transport le, DuplicateData true so every advertisement is reported, RSSI -127 so RSSI changes are not
/// coalesced by the delta threshold) and releases it when nobody needs scanning. It follows bluetoothd and the
/// adapter as they come and go (bluetoothd restarting, the adapter removed, powered off, rfkill) and reports
/// whether discovery runs now; with `reportsAdvertisements` it also turns Device1 changes into iBeacon sightings
/// (the scanner that needs no capabilities).
///
/// Use on the loop thread only, like the `DBusObjectServer` it calls through.
public final class BlueZDiscovery {
    public enum State: Equatable, Sendable {
        case stopped
        /// Discovery runs on this adapter.
        case discovering(BlueZAdapter)
        /// Wanted but impossible now; the reason says why and what would fix it. Recovers by itself.
        case waiting(String)
    }

    static let service = "org.bluez"
    static let adapterInterface = "org.bluez.Adapter1"
    static let deviceInterface = "org.bluez.Device1"
    static let objectManager = "org.freedesktop.DBus.ObjectManager"
    static let properties = "org.freedesktop.DBus.Properties"

    let server: DBusObjectServer
    /// `hciN`, or nil for the first powered adapter.
    public let adapterName: String?
    public let reportsAdvertisements: Bool
    public private(set) var state: State = .stopped { didSet { if state != oldValue { stateChanged?(state) } } }
    public private(set) var adapters: [String: BlueZAdapter] = [:]
    public var stateChanged: ((State) -> Void)?
    public var advertisement: ((BlueZAdvertisement) -> Void)?

    private var wanted = false
    private var subscribed: [Int] = []
    /// Per device path: the last manufacturer data (Apple's payload) and RSSI, because PropertiesChanged
    /// carries only what changed.
    private var devices: [String: (payload: [UInt8]?, rssi: Int8?, address: BluetoothAddress, addressType: UInt8)] = [:]
    private var refreshing = false
    private var startingDiscovery = false
    private let loop: MainLoop

    public init(server: DBusObjectServer, loop: MainLoop, adapterName: String?, reportsAdvertisements: Bool) {
        self.server = server
        self.loop = loop
        self.adapterName = adapterName
        self.reportsAdvertisements = reportsAdvertisements
    }

    /// Starts (or keeps) discovery; state changes follow asynchronously.
    public func start() throws(DBusCallError) {
        guard !wanted else { return }
        wanted = true
        if subscribed.isEmpty {
            let sender = "sender='\(Self.service)'"
            subscribed.append(try server.addSignalHandler(matchRule: "type='signal',\(sender),interface='\(Self.objectManager)'") {
                [weak self] message in self?.objectManagerSignal(message)
            })
            subscribed.append(try server.addSignalHandler(
                matchRule: "type='signal',\(sender),interface='\(Self.properties)',member='PropertiesChanged',path_namespace='/org/bluez'") {
                [weak self] message in self?.propertiesChanged(message)
            })
            subscribed.append(try server.addSignalHandler(
                matchRule: "type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(Self.service)'") {
                [weak self] message in
                guard message.sender == "org.freedesktop.DBus", message.member == "NameOwnerChanged",
                      message.signature == "sss", let arguments = try? message.arguments(),
                      case .string(Self.service) = arguments[0], case .string(let newOwner) = arguments[2] else { return }
                self?.bluetoothdChanged(running: !newOwner.isEmpty)
            })
        }
        refresh()
    }

    deinit {
        for id in subscribed { server.removeSignalHandler(id) }
    }

    /// Releases beacond's discovery session (bluetoothd stops scanning when no client holds one).
    public func stop() {
        for id in subscribed { server.removeSignalHandler(id) }
        subscribed = []
        guard wanted else { return }
        wanted = false
        if case .discovering(let adapter) = state {
            server.callAsync(destination: Self.service, path: adapter.path, interface: Self.adapterInterface,
                             member: "StopDiscovery") { _ in }
        }
        devices.removeAll()
        state = .stopped
    }

    // MARK: Finding the adapter

    /// Reads bluetoothd's objects and starts discovery on the adapter if it can.
    func refresh() {
        guard wanted, !refreshing else { return }
        refreshing = true
        server.callAsync(destination: Self.service, path: "/", interface: Self.objectManager, member: "GetManagedObjects") {
            [weak self] result in
            guard let self else { return }
            self.refreshing = false
            guard self.wanted else { return }
            switch result {
            case .failure(let error):
                if error.name == "org.freedesktop.DBus.Error.ServiceUnknown" || error.name == "org.freedesktop.DBus.Error.NameHasNoOwner" {
                    self.state = .waiting("bluetoothd is not running (org.bluez is not on the bus). Fix: systemctl start bluetooth")
                } else {
                    self.state = .waiting("bluetoothd did not answer GetManagedObjects: \(error.message)")
                    self.retry()
                }
            case .success(let arguments):
                self.adapters = [:]
                for (path, interfaces) in Self.objects(arguments.first) {
                    if let properties = interfaces[Self.adapterInterface] { self.updateAdapter(path, properties) }
                    if let properties = interfaces[Self.deviceInterface] { self.updateDevice(path, properties, report: false) }
                }
                self.chooseAdapter()
            }
        }
    }

    private func retry() {
        loop.schedule(at: .now + .seconds(1)) { [weak self] in self?.refresh() }
    }

    private func chooseAdapter() {
        guard wanted else { return }
        let candidates = adapters.values.sorted { $0.name < $1.name }
        let adapter: BlueZAdapter? = if let adapterName { adapters["/org/bluez/\(adapterName)"] }
            else { candidates.first(where: \.powered) ?? candidates.first }
        guard let adapter else {
            let which = adapterName.map { "adapter \($0)" } ?? "Bluetooth adapter"
            let known = candidates.map(\.name).joined(separator: ", ")
            state = .waiting("no \(which) in bluetoothd" + (known.isEmpty ? "" : " (it has \(known))")
                + ". Plug one in, or check rfkill list and dmesg")
            return
        }
        guard adapter.powered else {
            state = .waiting("adapter \(adapter.name) is powered off. Fix: bluetoothctl power on (and rfkill unblock bluetooth if it is blocked)")
            return
        }
        if case .discovering(let current) = state, current.path == adapter.path { return }
        startDiscovery(on: adapter)
    }

    private func startDiscovery(on adapter: BlueZAdapter) {
        guard !startingDiscovery else { return }
        startingDiscovery = true
        let filter = DBusValue.vardict([
            "Transport": .string("le"),
            "DuplicateData": .boolean(true),
            "RSSI": .int16(-127),
        ])
        server.callAsync(destination: Self.service, path: adapter.path, interface: Self.adapterInterface,
                         member: "SetDiscoveryFilter", arguments: [filter]) { [weak self] filterResult in
            guard let self else { return }
            self.server.callAsync(destination: Self.service, path: adapter.path, interface: Self.adapterInterface,
                                  member: "StartDiscovery") { [weak self] result in
                guard let self else { return }
                self.startingDiscovery = false
                guard self.wanted else { return }
                switch result {
                case .success:
                    self.state = .discovering(self.adapters[adapter.path] ?? adapter)
                case .failure(let error) where error.name == "org.bluez.Error.InProgress":
                    // bluetoothd answers InProgress both when our session already exists and when its start
                    // failed because the controller is busy (e.g. discovery left running by a bluetoothd that was
                    // killed): then it has dropped our session. Release whatever is ours and start afresh.
                    self.state = .waiting("bluetoothd could not start discovery on \(adapter.name) (\(error.message)); retrying")
                    self.server.callAsync(destination: Self.service, path: adapter.path, interface: Self.adapterInterface,
                                          member: "StopDiscovery") { [weak self] _ in self?.retry() }
                case .failure(let error):
                    let filterNote = (try? filterResult.get()) == nil ? " (SetDiscoveryFilter failed too)" : ""
                    self.state = .waiting("bluetoothd refused StartDiscovery on \(adapter.name): \(error.name): \(error.message)\(filterNote)")
                    self.retry()
                }
            }
        }
    }

    // MARK: bluetoothd's signals

    private func bluetoothdChanged(running: Bool) {
        guard wanted else { return }
        if running {
            // Adapters appear through InterfacesAdded as bluetoothd registers them; ask as well.
            refresh()
        } else {
            adapters = [:]
            devices.removeAll()
            state = .waiting("bluetoothd stopped (org.bluez left the bus); scanning resumes when it is back. Fix: systemctl start bluetooth")
        }
    }

    private func objectManagerSignal(_ message: DBusMessage) {
        guard message.interface == Self.objectManager, let arguments = try? message.arguments(), arguments.count == 2,
              case .objectPath(let path) = arguments[0] else { return }
        switch message.member {
        case "InterfacesAdded":
            for (interface, properties) in Self.interfaces(arguments[1]) {
                if interface == Self.adapterInterface {
                    updateAdapter(path, properties)
                    if wanted, !isDiscovering { chooseAdapter() }
                } else if interface == Self.deviceInterface {
                    updateDevice(path, properties, report: true)
                }
            }
        case "InterfacesRemoved":
            guard case .array(_, let names) = arguments[1] else { return }
            let removed = Set(names.compactMap { value -> String? in
                if case .string(let name) = value { return name }
                return nil
            })
            if removed.contains(Self.adapterInterface) {
                adapters[path] = nil
                if case .discovering(let adapter) = state, adapter.path == path {
                    state = .waiting("adapter \(adapter.name) was removed; scanning resumes when it is back")
                    devices = devices.filter { !$0.key.hasPrefix(path + "/") }
                }
                chooseAdapterIfWaiting()
            }
            if removed.contains(Self.deviceInterface) { devices[path] = nil }
        default:
            break
        }
    }

    private var isDiscovering: Bool {
        if case .discovering = state { return true }
        return false
    }

    private func chooseAdapterIfWaiting() {
        if wanted, !isDiscovering { chooseAdapter() }
    }

    private func propertiesChanged(_ message: DBusMessage) {
        guard message.interface == Self.properties, let path = message.path,
              let arguments = try? message.arguments(), arguments.count >= 2,
              case .string(let interface) = arguments[0], let changed = arguments[1].vardictEntries else { return }
        if interface == Self.adapterInterface {
            updateAdapter(path, changed)
            guard let adapter = adapters[path] else { return }
            if case .discovering(let current) = state, current.path == path {
                if !adapter.powered {
                    state = .waiting("adapter \(adapter.name) was powered off (or blocked by rfkill); scanning resumes when it is on")
                } else if changed["Discovering"] == .boolean(false) {
                    // bluetoothd stopped discovering under us (a controller reset, its own restart of the scan).
                    // If it is not back on within 2 s, we are blind: say so and start a fresh session.
                    loop.schedule(at: .now + .seconds(2)) { [weak self] in
                        guard let self, self.wanted, case .discovering(let current) = self.state,
                              current.path == path, self.adapters[path]?.discovering == false else { return }
                        self.state = .waiting("discovery on \(current.name) stopped; restarting it")
                        self.server.callAsync(destination: Self.service, path: path, interface: Self.adapterInterface,
                                              member: "StopDiscovery") { [weak self] _ in self?.retry() }
                    }
                } else {
                    state = .discovering(adapter)
                }
            } else if adapter.powered {
                chooseAdapterIfWaiting()
            }
        } else if interface == Self.deviceInterface {
            updateDevice(path, changed, report: true)
        }
    }

    // MARK: Objects

    private func updateAdapter(_ path: String, _ properties: [String: DBusValue]) {
        var adapter = adapters[path] ?? BlueZAdapter(path: path, name: String(path.split(separator: "/").last ?? ""),
                                                     address: "", powered: false, discovering: false)
        if case .string(let address)? = properties["Address"] { adapter.address = address }
        if case .boolean(let powered)? = properties["Powered"] { adapter.powered = powered }
        if case .boolean(let discovering)? = properties["Discovering"] { adapter.discovering = discovering }
        adapters[path] = adapter
    }

    /// Keeps the device's last Apple payload and RSSI; with `report`, a change that means "an advertisement
    /// was heard" (new ManufacturerData, or a new RSSI: both come only from advertisements) becomes a sighting.
    private func updateDevice(_ path: String, _ properties: [String: DBusValue], report: Bool) {
        var entry = devices[path] ?? (payload: nil, rssi: nil, address: BluetoothAddress(rawValue: 0), addressType: 0)
        if case .string(let text)? = properties["Address"], let address = BluetoothAddress(text) { entry.address = address }
        if case .string(let type)? = properties["AddressType"] { entry.addressType = type == "random" ? 1 : 0 }
        var heard = false
        if case .int16(let rssi)? = properties["RSSI"] {
            entry.rssi = rssi == 127 ? nil : Int8(clamping: rssi)
            heard = true
        }
        if let data = properties["ManufacturerData"], let payload = Self.applePayload(data) {
            entry.payload = payload
            heard = true
        }
        devices[path] = entry
        guard report, heard, reportsAdvertisements, state != .stopped, let payload = entry.payload,
              let frame = IBeaconParser.parse(appleManufacturerPayload: payload.span) else { return }
        advertisement?(BlueZAdvertisement(frame: frame, rssi: entry.rssi, address: entry.address, addressType: entry.addressType))
    }

    /// Apple's manufacturer data (company 0x004C) from `a{qv}` with `ay` values.
    static func applePayload(_ value: DBusValue) -> [UInt8]? {
        guard case .dictionary("q", "v", let entries) = value else { return nil }
        for entry in entries {
            guard case .uint16(IBeaconParser.appleCompanyIdentifier) = entry.key,
                  case .variant(.array("y", let bytes)) = entry.value else { continue }
            return bytes.compactMap { value -> UInt8? in
                if case .byte(let byte) = value { return byte }
                return nil
            }
        }
        return nil
    }

    /// `a{oa{sa{sv}}}` → path → interface → properties.
    static func objects(_ value: DBusValue?) -> [(String, [String: [String: DBusValue]])] {
        guard case .dictionary("o", _, let entries)? = value else { return [] }
        return entries.compactMap { entry in
            guard case .objectPath(let path) = entry.key else { return nil }
            return (path, Dictionary(interfaces(entry.value), uniquingKeysWith: { $1 }))
        }
    }

    /// `a{sa{sv}}` → [(interface, properties)].
    static func interfaces(_ value: DBusValue) -> [(String, [String: DBusValue])] {
        guard case .dictionary("s", _, let entries) = value else { return [] }
        return entries.compactMap { entry in
            guard case .string(let name) = entry.key, let properties = entry.value.vardictEntries else { return nil }
            return (name, properties)
        }
    }
}
