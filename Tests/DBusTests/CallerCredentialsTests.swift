@testable import DBus
import MainLoopKit
import Foundation
import TestKit
import Testing

/// An object that needs its callers' credentials, beside one that does not, served on a private bus.
final class CheckedObject: @unchecked Sendable {
    let bus: PrivateBus
    let loop: MainLoop
    let serverConnection: DBusConnection
    var server: DBusObjectServer?
    /// The order in which calls were handled ("checked:a", "plain:b").
    let handled = Locked<[String]>([])
    static let name = "org.beacond.Test"
    static let checkedPath = "/org/beacond/checked"
    static let plainPath = "/org/beacond/plain"
    static let interface = "org.beacond.Test1"

    init() throws {
        bus = try PrivateBus()
        loop = try MainLoop()
        serverConnection = try DBusConnection(.address(bus.address))
        _ = try serverConnection.requestName(Self.name)
        let server = try DBusObjectServer(connection: serverConnection, loop: loop)
        server.export(
            DBusObject(
                path: Self.checkedPath, interfaces: [Self.interface(server, "checked", handled)],
                needsCallerCredentials: true))
        server.export(DBusObject(path: Self.plainPath, interfaces: [Self.interface(server, "plain", handled)]))
        self.server = server
        try loop.startThread()
    }

    deinit {
        loop.stopAndWait()
        server = nil
    }

    static func interface(_ server: DBusObjectServer, _ label: String, _ handled: Locked<[String]>) -> DBusInterface {
        DBusInterface(
            interface,
            methods: [
                // What the server knew of the caller when the handler ran: uid and pid, or 0/0 for nothing.
                DBusMethod("WhoAmI", out: [DBusArgument("uid", "u"), DBusArgument("pid", "u")]) { [unowned server] call in
                    guard case .success(let peer)? = server.callerCredentials(of: call.sender) else { return [.uint32(0), .uint32(0)] }
                    return [.uint32(peer.unixUserID ?? 0), .uint32(peer.processID ?? 0)]
                },
                DBusMethod("Record", in: [DBusArgument("token", "s")]) { call in
                    if case .string(let token)? = call.arguments.first { handled.withLock { $0.append("\(label):\(token)") } }
                    return []
                },
            ])
    }
}

@Suite("Caller credentials asked of the bus without blocking the loop")
struct CallerCredentialsTests {
    /// The handler of an object that needs credentials finds them: the server asked the bus before dispatching.
    @Test func handlersOfACheckedObjectKnowTheCaller() throws {
        let served = try CheckedObject()
        let client = try DBusConnection(.address(served.bus.address))
        let reply = try client.call(
            destination: CheckedObject.name, path: CheckedObject.checkedPath,
            interface: CheckedObject.interface, member: "WhoAmI")
        #expect(reply == [.uint32(getuid()), .uint32(UInt32(getpid()))])
        // Asked once per connection: a second call is answered from what the server keeps.
        #expect(
            try client.call(
                destination: CheckedObject.name, path: CheckedObject.checkedPath,
                interface: CheckedObject.interface, member: "WhoAmI") == reply)
        // An object that does not need them does not cause the question.
        let other = try DBusConnection(.address(served.bus.address))
        #expect(
            try other.call(
                destination: CheckedObject.name, path: CheckedObject.plainPath,
                interface: CheckedObject.interface, member: "WhoAmI") == [.uint32(0), .uint32(0)])
    }

    /// A sender's calls keep their order: those sent while its first call waits for credentials wait behind it,
    /// even when they are for an object that needs none.
    @Test func callsWaitingForCredentialsKeepTheirOrder() throws {
        let served = try CheckedObject()
        let client = try DBusConnection(.address(served.bus.address))
        func record(_ path: String, _ token: String) throws {
            let message = try DBusMessage.methodCall(
                destination: CheckedObject.name, path: path,
                interface: CheckedObject.interface, member: "Record")
            try message.append([.string(token)])
            try client.send(message)
        }
        try record(CheckedObject.checkedPath, "a")
        try record(CheckedObject.plainPath, "b")
        try record(CheckedObject.checkedPath, "c")
        client.flush()
        // A blocking call last: when it returns, everything before it was handled.
        _ = try client.call(
            destination: CheckedObject.name, path: CheckedObject.plainPath,
            interface: CheckedObject.interface, member: "Record", arguments: [.string("d")])
        #expect(served.handled.withLock { $0 } == ["checked:a", "plain:b", "checked:c", "plain:d"])
    }

    /// A caller that leaves while its call waits for credentials costs nothing: the others are still answered.
    @Test func aCallerThatLeavesWhileWaitingIsForgotten() throws {
        let served = try CheckedObject()
        for round in 0..<20 {
            let leaving = try DBusConnection(.address(served.bus.address))
            let message = try DBusMessage.methodCall(
                destination: CheckedObject.name, path: CheckedObject.checkedPath,
                interface: CheckedObject.interface, member: "Record")
            try message.append([.string("gone\(round)")])
            try leaving.send(message)
            leaving.flush()
        }
        let client = try DBusConnection(.address(served.bus.address))
        #expect(
            try client.call(
                destination: CheckedObject.name, path: CheckedObject.checkedPath,
                interface: CheckedObject.interface, member: "WhoAmI") == [.uint32(getuid()), .uint32(UInt32(getpid()))])
    }

    /// Where GetConnectionCredentials cannot be read (newer buses add a unix fd), the server asks the same facts
    /// one by one; both ways give the same answer, and a peer that left is an error, not a hang.
    @Test func askingOneByOneGivesTheSameAnswer() throws {
        let served = try CheckedObject()
        let client = try DBusConnection(.address(served.bus.address))
        let name = client.uniqueName
        let answers = Locked<[String: Result<DBusPeerCredentials, DBusCallError>]>([:])
        served.loop.execute {
            guard let server = served.server else { return }
            server.askCredentials(of: name) { result in answers.withLock { $0["whole"] = result } }
            server.askCredentialsOneByOne(of: name) { result in answers.withLock { $0["oneByOne"] = result } }
            server.askCredentialsOneByOne(of: ":1.9999") { result in answers.withLock { $0["gone"] = result } }
        }
        let deadline = Date().addingTimeInterval(10)
        while answers.withLock({ $0.count }) < 3, Date() < deadline { usleep(10_000) }
        let got = answers.withLock { $0 }
        let whole = try #require(try got["whole"]?.get())
        #expect(try got["oneByOne"]?.get() == whole)
        #expect(whole.unixUserID == getuid())
        #expect(whole.processID == UInt32(getpid()))
        #expect(throws: DBusCallError.self) { try got["gone"]?.get() }
    }
}
