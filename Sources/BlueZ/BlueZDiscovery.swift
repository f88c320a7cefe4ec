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

/// An advertisement bluetoothd reported for a device (`org.bluez.Device1` ManufacturerData, ServiceData, TxPower
/// and RSSI): what it carried, and who sent it (a private device is recognised by its address later).
public struct BlueZAdvertisement: Sendable {
    public var content: AdvertisementContent
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
    public var adapterName: String? { machine.adapterName }
    public let reportsAdvertisements: Bool
    public var state: BlueZDiscovery.State { machine.state }
    public var adapters: [String: BlueZAdapter] { machine.adapters }
    public var stateChanged: ((State) -> Void)?
    public var advertisement: ((BlueZAdvertisement) -> Void)?

    /// What is wanted, in flight and chosen; this object only carries out what it returns.
    private var machine: DiscoveryStateMachine
    private var subscribed: [Int] = []
    /// Per device path: what its advertisements last carried and its RSSI, because PropertiesChanged carries only
    /// what changed.
    private var devices: [String: (content: AdvertisementContent, rssi: Int8?, address: BluetoothAddress, addressType: UInt8)] = [:]
    private let loop: MainLoop

    public init(server: DBusObjectServer, loop: MainLoop, adapterName: String?, reportsAdvertisements: Bool) {
        self.server = server
        self.loop = loop
        self.machine = DiscoveryStateMachine(adapterName: adapterName)
        self.reportsAdvertisements = reportsAdvertisements
    }

    /// Starts (or keeps) discovery; state changes follow asynchronously.
    public func start() throws(DBusCallError) {
        guard !machine.wanted else { return }
        if subscribed.isEmpty {
            let sender = "sender='\(Self.service)'"
            subscribed.append(
                try server.addSignalHandler(matchRule: "type='signal',\(sender),interface='\(Self.objectManager)'") {
                    [weak self] message in self?.objectManagerSignal(message)
                })
            subscribed.append(
                try server.addSignalHandler(
                    matchRule: "type='signal',\(sender),interface='\(Self.properties)',member='PropertiesChanged',path_namespace='/org/bluez'"
                ) {
                    [weak self] message in self?.propertiesChanged(message)
                })
            subscribed.append(
                try server.addSignalHandler(
                    matchRule: "type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(Self.service)'"
                ) {
                    [weak self] message in
                    guard message.sender == "org.freedesktop.DBus", message.member == "NameOwnerChanged",
                        message.signature == "sss", let arguments = try? message.arguments(),
                        case .string(Self.service) = arguments[0], case .string(let newOwner) = arguments[2]
                    else { return }
                    self?.apply { $0.bluetoothd(running: !newOwner.isEmpty) }
                })
        }
        apply { $0.start() }
    }

    deinit {
        for id in subscribed { server.removeSignalHandler(id) }
    }

    /// Releases beacond's discovery session (bluetoothd stops scanning when no client holds one).
    public func stop() {
        for id in subscribed { server.removeSignalHandler(id) }
        subscribed = []
        apply { $0.stop() }
    }

    // MARK: Carrying out the state machine's actions

    /// Feeds one event to the state machine, reports a state change, and carries out what it returns.
    private func apply(_ event: (inout DiscoveryStateMachine) -> [DiscoveryStateMachine.Action]) {
        let before = machine.state
        let actions = event(&machine)
        if machine.state != before { stateChanged?(machine.state) }
        for action in actions { perform(action) }
    }

    private func perform(_ action: DiscoveryStateMachine.Action) {
        switch action {
        case .getManagedObjects:
            server.callAsync(destination: Self.service, path: "/", interface: Self.objectManager, member: "GetManagedObjects") {
                [weak self] result in self?.managedObjects(result)
            }
        case .startDiscovery(let adapter):
            let filter = DBusValue.vardict([
                "Transport": .string("le"),
                "DuplicateData": .boolean(true),
                "RSSI": .int16(-127),
            ])
            server.callAsync(
                destination: Self.service, path: adapter.path, interface: Self.adapterInterface,
                member: "SetDiscoveryFilter", arguments: [filter]
            ) { [weak self] filterResult in
                guard let self else { return }
                self.server.callAsync(
                    destination: Self.service, path: adapter.path, interface: Self.adapterInterface,
                    member: "StartDiscovery"
                ) { [weak self] result in
                    let started = result.map { _ in () }
                    self?.apply { $0.discoveryStarted(on: adapter, started, filterFailed: (try? filterResult.get()) == nil) }
                }
            }
        case .stopDiscovery(let path, let retryAfterwards):
            server.callAsync(destination: Self.service, path: path, interface: Self.adapterInterface, member: "StopDiscovery") {
                [weak self] _ in if retryAfterwards { self?.apply { $0.refreshDue() } }
            }
        case .scheduleRetry:
            loop.schedule(at: .now + .seconds(1)) { [weak self] in self?.apply { $0.refreshDue() } }
        case .scheduleDiscoveringCheck(let path):
            loop.schedule(at: .now + .seconds(2)) { [weak self] in self?.apply { $0.discoveringCheckDue(path: path) } }
        case .forgetDevices(let adapterPath):
            if let adapterPath { devices = devices.filter { !$0.key.hasPrefix(adapterPath + "/") } } else { devices.removeAll() }
        }
    }

    private func managedObjects(_ result: Result<[DBusValue], DBusCallError>) {
        switch result {
        case .failure(let error):
            apply { $0.managedObjectsFailed(error) }
        case .success(let arguments):
            var found: [String: [String: DBusValue]] = [:]
            let objects = Self.objects(arguments.first)
            for (path, interfaces) in objects {
                if let properties = interfaces[Self.adapterInterface] { found[path] = properties }
            }
            if machine.wanted {
                for (path, interfaces) in objects {
                    if let properties = interfaces[Self.deviceInterface] { updateDevice(path, properties, report: false) }
                }
            }
            apply { $0.managedObjects(adapters: found) }
        }
    }

    // MARK: bluetoothd's signals

    private func objectManagerSignal(_ message: DBusMessage) {
        guard message.interface == Self.objectManager, let arguments = try? message.arguments(), arguments.count == 2,
            case .objectPath(let path) = arguments[0]
        else { return }
        switch message.member {
        case "InterfacesAdded":
            for (interface, properties) in Self.interfaces(arguments[1]) {
                if interface == Self.adapterInterface {
                    apply { $0.adapterAdded(path, properties) }
                } else if interface == Self.deviceInterface {
                    updateDevice(path, properties, report: true)
                }
            }
        case "InterfacesRemoved":
            guard case .array(_, let names) = arguments[1] else { return }
            let removed = Set(
                names.compactMap { value -> String? in
                    if case .string(let name) = value { return name }
                    return nil
                })
            if removed.contains(Self.adapterInterface) { apply { $0.adapterRemoved(path) } }
            if removed.contains(Self.deviceInterface) { devices[path] = nil }
        default:
            break
        }
    }

    private func propertiesChanged(_ message: DBusMessage) {
        guard message.interface == Self.properties, let path = message.path,
            let arguments = try? message.arguments(), arguments.count >= 2,
            case .string(let interface) = arguments[0], let changed = arguments[1].vardictEntries
        else { return }
        if interface == Self.adapterInterface {
            apply { $0.adapterChanged(path, changed) }
        } else if interface == Self.deviceInterface {
            updateDevice(path, changed, report: true)
        }
    }

    // MARK: Objects

    /// Keeps what the device's advertisements last carried and its RSSI; with `report`, a change that means "an
    /// advertisement was heard" (new ManufacturerData or ServiceData, or a new RSSI: these come only from
    /// advertisements) becomes a sighting, with or without a beacon frame (a private device has none).
    private func updateDevice(_ path: String, _ properties: [String: DBusValue], report: Bool) {
        var entry = devices[path] ?? (content: .empty, rssi: nil, address: BluetoothAddress(rawValue: 0), addressType: 0)
        if case .string(let text)? = properties["Address"], let address = BluetoothAddress(text) { entry.address = address }
        if case .string(let type)? = properties["AddressType"] { entry.addressType = type == "random" ? 1 : 0 }
        var heard = false
        if case .int16(let rssi)? = properties["RSSI"] {
            entry.rssi = rssi == 127 ? nil : Int8(clamping: rssi)
            heard = true
        }
        if case .int16(let power)? = properties["TxPower"] { entry.content.txPowerLevel = Int8(clamping: power) }
        if let data = properties["ManufacturerData"] {
            entry.content.beacon = Self.manufacturerFrames(data).first
            heard = true
        }
        if let data = properties["ServiceData"], let frame = Self.eddystoneFrame(data) {
            if let uid = BeaconFrameParser.parse(eddystoneUID: frame.span) {
                entry.content.beacon = uid
            } else if let telemetry = BeaconFrameParser.parse(eddystoneTLM: frame.span) {
                entry.content.telemetry = telemetry
            }
            heard = true
        }
        devices[path] = entry
        guard report, heard, reportsAdvertisements, state != .stopped else { return }
        advertisement?(
            BlueZAdvertisement(content: entry.content, rssi: entry.rssi, address: entry.address, addressType: entry.addressType))
    }

    /// The beacon frames (iBeacon, AltBeacon) in ManufacturerData, `a{qv}` of company → `ay`.
    static func manufacturerFrames(_ value: DBusValue) -> [BeaconFrame] {
        guard case .dictionary("q", "v", let entries) = value else { return [] }
        return entries.compactMap { entry in
            guard case .uint16(let company) = entry.key, let bytes = bytes(entry.value) else { return nil }
            let data = [UInt8(truncatingIfNeeded: company), UInt8(truncatingIfNeeded: company >> 8)] + bytes
            return BeaconFrameParser.parse(manufacturerData: data.span)
        }
    }

    /// Apple's manufacturer data (company 0x004C) from `a{qv}` with `ay` values.
    static func applePayload(_ value: DBusValue) -> [UInt8]? {
        guard case .dictionary("q", "v", let entries) = value else { return nil }
        for entry in entries {
            guard case .uint16(IBeaconParser.appleCompanyIdentifier) = entry.key else { continue }
            return bytes(entry.value)
        }
        return nil
    }

    /// The 16-bit Eddystone service UUID 0xFEAA as bluetoothd's ServiceData keys it.
    static let eddystoneServiceUUID = "0000feaa-0000-1000-8000-00805f9b34fb"

    /// The Eddystone frame in ServiceData (`a{sv}` of service UUID → `ay`).
    static func eddystoneFrame(_ value: DBusValue) -> [UInt8]? {
        guard let entries = value.vardictEntries else { return nil }
        for (uuid, data) in entries where uuid.lowercased() == eddystoneServiceUUID {
            return bytes(data)
        }
        return nil
    }

    /// `v` holding `ay`, or `ay` itself.
    static func bytes(_ value: DBusValue) -> [UInt8]? {
        let array: [DBusValue]
        switch value {
        case .variant(.array("y", let values)), .array("y", let values): array = values
        default: return nil
        }
        return array.compactMap { value -> UInt8? in
            if case .byte(let byte) = value { return byte }
            return nil
        }
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
