@testable import DBus
import Foundation
import TestKit
import Testing

/// Connections to a real `dbus-daemon` (a private one per test).
@Suite("D-Bus connection on a private bus")
struct DBusConnectionTests {
    @Test func connectsAndGetsAUniqueName() throws {
        let bus = try PrivateBus()
        let connection = try DBusConnection(.address(bus.address))
        #expect(connection.uniqueName.hasPrefix(":"))
        #expect(connection.isConnected)
        let id = try connection.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus", member: "GetId")
        guard case .string(let text)? = id.first else { Issue.record("GetId replied \(id)"); return }
        #expect(text.count == 32)
    }

    /// Names are owned exclusively: a second owner is refused, not queued (a second daemon must fail).
    @Test func ownsANameExclusively() throws {
        let bus = try PrivateBus()
        let first = try DBusConnection(.address(bus.address))
        let second = try DBusConnection(.address(bus.address))
        #expect(try first.requestName("org.beacond") == .primaryOwner)
        #expect(try first.requestName("org.beacond") == .alreadyOwner)
        #expect(try second.requestName("org.beacond") == .exists)
        #expect(try second.nameHasOwner("org.beacond"))
        #expect(try !second.nameHasOwner("org.beacond.Nobody"))
        #expect(throws: DBusCallError.self) { try first.requestName("not a name") }
    }

    @Test func errorRepliesCarryTheirNameAndMessage() throws {
        let bus = try PrivateBus()
        let connection = try DBusConnection(.address(bus.address))
        #expect {
            _ = try connection.call(destination: "org.beacond.Absent", path: "/x", interface: "org.example.I", member: "M")
        } throws: { error in
            guard let error = error as? DBusCallError else { return false }
            return error.name == "org.freedesktop.DBus.Error.ServiceUnknown" && error.message.contains("org.beacond.Absent")
        }
        #expect {
            _ = try connection.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus", member: "NameHasOwner", arguments: [.int32(1)])
        } throws: { error in
            (error as? DBusCallError)?.name == "org.freedesktop.DBus.Error.InvalidArgs"
        }
    }

    @Test func unreachableBusIsAnErrorNotACrash() {
        #expect(throws: DBusCallError.self) { try DBusConnection(.address("unix:path=/nonexistent/beacond-test-bus")) }
        #expect(throws: DBusCallError.self) { try DBusConnection(.address("not an address")) }
    }

    /// A signal sent by one connection reaches a real client (`dbus-monitor`-free check: the bus
    /// accepts it and the connection stays up).
    @Test func sendsSignals() throws {
        let bus = try PrivateBus()
        let connection = try DBusConnection(.address(bus.address))
        let signal = try DBusMessage.signal(path: "/org/beacond", interface: "org.beacond.Admin1", member: "Event")
        try signal.append([.string("DidEnterRegion"), .vardict(["Identifier": .string("lobby")])])
        try connection.send(signal)
        #expect(connection.isConnected)
    }
}
