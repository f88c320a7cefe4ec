import DBus
import MainLoopKit
import Foundation
import TestKit

/// Just enough of bluetoothd (`org.bluez`) on a private bus, in its own connection and loop as a separate
/// process would be: ObjectManager, one adapter with discovery methods, and signals for devices and power.
final class FakeBluetoothd: @unchecked Sendable {
    let loop: MainLoop
    let connection: DBusConnection
    let server: DBusObjectServer
    /// Method calls received, e.g. `SetDiscoveryFilter string("le") boolean(true) int16(-127)`, "StartDiscovery".
    let calls = Locked<[String]>([])
    let powered = Locked<Bool>(true)
    static let adapterPath = "/org/bluez/hci0"

    init(bus: PrivateBus) throws {
        loop = try MainLoop()
        connection = try DBusConnection(.address(bus.address))
        server = try DBusObjectServer(connection: connection, loop: loop)
        let calls = self.calls
        let powered = self.powered
        server.export(
            DBusObject(
                path: "/",
                interfaces: [
                    DBusInterface(
                        "org.freedesktop.DBus.ObjectManager",
                        methods: [
                            DBusMethod("GetManagedObjects", out: [DBusArgument("objects", "a{oa{sa{sv}}}")]) { _ in
                                calls.withLock { $0.append("GetManagedObjects") }
                                let adapter = DBusValue.dictionary(
                                    keySignature: "s", valueSignature: "a{sv}",
                                    [
                                        DBusDictionaryEntry(
                                            key: .string("org.bluez.Adapter1"),
                                            value: .vardict([
                                                "Address": .string("00:AA:01:00:00:00"), "Powered": .boolean(powered.withLock { $0 }),
                                                "Discovering": .boolean(false),
                                            ]))
                                    ])
                                return [
                                    .dictionary(
                                        keySignature: "o", valueSignature: "a{sa{sv}}",
                                        [
                                            DBusDictionaryEntry(key: .objectPath(Self.adapterPath), value: adapter)
                                        ])
                                ]
                            }
                        ])
                ]))
        server.export(
            DBusObject(
                path: Self.adapterPath,
                interfaces: [
                    DBusInterface(
                        "org.bluez.Adapter1",
                        methods: [
                            DBusMethod("SetDiscoveryFilter", in: [DBusArgument("filter", "a{sv}")]) { call in
                                let filter = call.arguments[0].vardictEntries ?? [:]
                                calls.withLock {
                                    $0.append(
                                        "SetDiscoveryFilter \(filter["Transport"] ?? .string("?")) "
                                            + "\(filter["DuplicateData"] ?? .string("?")) \(filter["RSSI"] ?? .string("?"))")
                                }
                                return []
                            },
                            DBusMethod("StartDiscovery") { _ throws(DBusCallError) in
                                calls.withLock { $0.append("StartDiscovery") }
                                guard powered.withLock({ $0 }) else {
                                    throw DBusCallError(name: "org.bluez.Error.NotReady", message: "Resource Not Ready")
                                }
                                return []
                            },
                            DBusMethod("StopDiscovery") { _ in
                                calls.withLock { $0.append("StopDiscovery") }
                                return []
                            },
                        ])
                ]))
        _ = try connection.requestName("org.bluez")
        try loop.startThread()
    }

    /// Runs `body` with the server on the fake's loop thread (where it must be used).
    func onLoop(_ body: @escaping @Sendable (DBusObjectServer) -> Void) {
        let server = UncheckedBox(self.server)
        loop.execute { body(server.value) }
    }

    func setPowered(_ on: Bool) {
        powered.withLock { $0 = on }
        onLoop { server in
            try? server.emit(
                path: Self.adapterPath, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                arguments: [
                    .string("org.bluez.Adapter1"), .vardict(["Powered": .boolean(on)]),
                    .array(elementSignature: "s", []),
                ])
        }
    }

    /// A device advertising an iBeacon: InterfacesAdded the first time, then PropertiesChanged.
    func advertise(device: String, payload: [UInt8], rssi: Int16, first: Bool) {
        let path = Self.adapterPath + "/" + device
        let manufacturer = DBusValue.dictionary(
            keySignature: "q", valueSignature: "v",
            [
                DBusDictionaryEntry(key: .uint16(0x004C), value: .variant(.array(elementSignature: "y", payload.map { .byte($0) })))
            ])
        onLoop { server in
            if first {
                let interfaces = DBusValue.dictionary(
                    keySignature: "s", valueSignature: "a{sv}",
                    [
                        DBusDictionaryEntry(
                            key: .string("org.bluez.Device1"),
                            value: .vardict([
                                "Address": .string("C4:7C:8D:6A:5B:4C"), "AddressType": .string("random"),
                                "RSSI": .int16(rssi), "ManufacturerData": manufacturer,
                            ]))
                    ])
                try? server.emit(
                    path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded",
                    arguments: [.objectPath(path), interfaces])
            } else {
                try? server.emit(
                    path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                    arguments: [
                        .string("org.bluez.Device1"),
                        .vardict(["RSSI": .int16(rssi), "ManufacturerData": manufacturer]),
                        .array(elementSignature: "s", []),
                    ])
            }
        }
    }

    func stop() {
        loop.stopAndWait()
    }
}

struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
