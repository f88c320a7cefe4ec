import DBus
import MainLoopKit
import Foundation
import Synchronization
import TestKit
import Testing

/// A served object on a real private bus, called by real clients (`busctl`, `gdbus`) and by our client.
final class ServedObject: @unchecked Sendable {
    let bus: PrivateBus
    let loop: MainLoop
    let serverConnection: DBusConnection
    var server: DBusObjectServer?
    let closedNames = Locked<[String]>([])
    let owner: String
    static let name = "org.beacond.Test"
    static let path = "/org/beacond/test"
    static let interface = "org.beacond.Test1"

    /// `owner`: the only unique name allowed to call `/org/beacond/test/private` (nil: no such object).
    init(privateOwner: String? = nil, bus: PrivateBus? = nil) throws {
        self.bus = try bus ?? PrivateBus()
        loop = try MainLoop()
        serverConnection = try DBusConnection(.address(self.bus.address))
        owner = privateOwner ?? ""
        _ = try serverConnection.requestName(Self.name)
        let server = try DBusObjectServer(connection: serverConnection, loop: loop)
        let closed = closedNames
        server.connectionClosed = { name in closed.withLock { $0.append(name) } }
        server.export(DBusObject(path: Self.path, interfaces: [Self.testInterface(server)]))
        if let privateOwner {
            server.export(
                DBusObject(path: Self.path + "/private", interfaces: [Self.testInterface(server)]) { sender throws(DBusCallError) in
                    guard sender == privateOwner else {
                        throw DBusCallError(name: "org.beacond.Error.AccessDenied", message: "only \(privateOwner) may call this object")
                    }
                })
        }
        self.server = server
        try loop.startThread()
    }

    deinit {
        loop.stopAndWait()
        server = nil
    }

    static func testInterface(_ server: DBusObjectServer) -> DBusInterface {
        DBusInterface(
            interface,
            methods: [
                DBusMethod("Echo", in: [DBusArgument("text", "s")], out: [DBusArgument("text", "s")]) { call in
                    call.arguments
                },
                DBusMethod("Describe", in: [DBusArgument("region", "a{sv}")], out: [DBusArgument("keys", "as")]) { call in
                    let keys = call.arguments.first?.vardictEntries?.keys.sorted() ?? []
                    return [.array(elementSignature: "s", keys.map { .string($0) })]
                },
                DBusMethod("Fail") { _ throws(DBusCallError) in
                    throw DBusCallError(name: "org.beacond.Error.InvalidRegion", message: "UUID 'x' is not a UUID; use the 8-4-4-4-12 form")
                },
                DBusMethod("Ping", in: [DBusArgument("token", "s")]) { [unowned server] call throws(DBusCallError) in
                    // Replies, then signals the caller only (unicast).
                    try server.emit(path: path, interface: interface, member: "Pong", arguments: call.arguments, destination: call.sender)
                    return []
                },
                DBusMethod("PingEveryone", in: [DBusArgument("token", "s")]) { [unowned server] call throws(DBusCallError) in
                    // Replies, then signals every connection with a matching rule (broadcast).
                    try server.emit(path: path, interface: interface, member: "Pong", arguments: call.arguments)
                    return []
                },
                DBusMethod("Wrong", out: [DBusArgument("n", "u")]) { _ in [.string("not a u")] },
                // Signals that do not match the declaration: the server must refuse to send them.
                DBusMethod("PongWrongly") { [unowned server] call throws(DBusCallError) in
                    try server.emit(path: path, interface: interface, member: "Pong", arguments: [.int32(1)], destination: call.sender)
                    return []
                },
                DBusMethod("PongTwice") { [unowned server] call throws(DBusCallError) in
                    try server.emit(
                        path: path, interface: interface, member: "Pong", arguments: [.string("a"), .string("b")],
                        destination: call.sender)
                    return []
                },
                DBusMethod("Pang") { [unowned server] call throws(DBusCallError) in
                    try server.emit(path: path, interface: interface, member: "Pang", arguments: [], destination: call.sender)
                    return []
                },
            ],
            properties: [
                DBusProperty("Version", "s") { _ in .string("1.2.3") },
                DBusProperty("Caller", "s") { sender in .string(sender) },
            ], signals: [DBusSignalDescription("Pong", [DBusArgument("token", "s")])])
    }
}

@Suite("D-Bus exported objects on a private bus")
struct DBusObjectServerTests {
    let busctl = "/usr/bin/busctl"
    let gdbus = "/usr/bin/gdbus"

    @Test func busctlIntrospectsTheObjectAndItsParents() throws {
        let served = try ServedObject()
        let result = try runCommand(busctl, ["--address=\(served.bus.address)", "introspect", ServedObject.name, ServedObject.path])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("org.beacond.Test1"))
        #expect(result.output.contains(".Echo"))
        #expect(result.output.contains(".Version"))
        #expect(result.output.contains(".Pong"))
        #expect(result.output.contains("org.freedesktop.DBus.Properties"))
        let tree = try runCommand(busctl, ["--address=\(served.bus.address)", "tree", "--list", ServedObject.name])
        #expect(tree.output.contains("/org/beacond/test"), "\(tree.output) \(tree.error)")
    }

    @Test func gdbusCallsMethodsAndReadsProperties() throws {
        let served = try ServedObject()
        let echo = try runCommand(
            gdbus,
            [
                "call", "--address", served.bus.address, "--dest", ServedObject.name,
                "--object-path", ServedObject.path, "--method", "org.beacond.Test1.Echo", "héllo",
            ])
        #expect(echo.status == 0, "\(echo.error)")
        #expect(echo.output.contains("('héllo',)"))
        let describe = try runCommand(
            gdbus,
            [
                "call", "--address", served.bus.address, "--dest", ServedObject.name,
                "--object-path", ServedObject.path, "--method", "org.beacond.Test1.Describe",
                "{'UUID': <'E2C56DB5-DFFB-48D2-B060-D0F5A71096E0'>, 'Major': <uint16 1>}",
            ])
        #expect(describe.output.contains("['Major', 'UUID']"), "\(describe.output) \(describe.error)")
        let property = try runCommand(
            busctl,
            [
                "--address=\(served.bus.address)", "get-property", ServedObject.name,
                ServedObject.path, ServedObject.interface, "Version",
            ])
        #expect(property.output.trimmingCharacters(in: .whitespacesAndNewlines) == "s \"1.2.3\"", "\(property.error)")
        let all = try runCommand(
            gdbus,
            [
                "call", "--address", served.bus.address, "--dest", ServedObject.name,
                "--object-path", ServedObject.path, "--method", "org.freedesktop.DBus.Properties.GetAll",
                ServedObject.interface,
            ])
        #expect(all.output.contains("'Version': <'1.2.3'>"), "\(all.output) \(all.error)")
    }

    /// Everything a caller can get wrong is an error reply, never a crash or a silent drop.
    @Test func badCallsGetStandardErrors() throws {
        let served = try ServedObject()
        let client = try DBusConnection(.address(served.bus.address))
        func error(_ path: String, _ interface: String, _ member: String, _ arguments: [DBusValue] = []) -> DBusCallError? {
            do {
                _ = try client.call(destination: ServedObject.name, path: path, interface: interface, member: member, arguments: arguments)
                return nil
            } catch {
                return error
            }
        }
        #expect(error("/org/beacond/nothing", ServedObject.interface, "Echo", [.string("x")])?.name == DBusStandardError.unknownObject)
        #expect(error(ServedObject.path, "org.beacond.Nope", "Echo", [.string("x")])?.name == DBusStandardError.unknownInterface)
        #expect(error(ServedObject.path, ServedObject.interface, "Nope")?.name == DBusStandardError.unknownMethod)
        let wrongType = error(ServedObject.path, ServedObject.interface, "Echo", [.int32(7)])
        #expect(wrongType?.name == DBusStandardError.invalidArgs)
        #expect(wrongType?.message.contains("'s', not 'i'") == true)
        #expect(error(ServedObject.path, ServedObject.interface, "Echo")?.name == DBusStandardError.invalidArgs)
        let failed = error(ServedObject.path, ServedObject.interface, "Fail")
        #expect(failed?.name == "org.beacond.Error.InvalidRegion")
        #expect(failed?.message.contains("8-4-4-4-12") == true)
        #expect(error(ServedObject.path, ServedObject.interface, "Wrong")?.name == DBusStandardError.failed)
        let properties = "org.freedesktop.DBus.Properties"
        #expect(
            error(ServedObject.path, properties, "Get", [.string(ServedObject.interface), .string("Nope")])?.name
                == DBusStandardError.unknownProperty)
        #expect(
            error(ServedObject.path, properties, "Set", [.string(ServedObject.interface), .string("Version"), .variant(.string("9"))])?.name
                == DBusStandardError.propertyReadOnly)
        #expect(error(ServedObject.path, properties, "Get", [.int32(1)])?.name == DBusStandardError.invalidArgs)
        // A huge array: answered (InvalidArgs for the wrong type), and the server still works afterwards.
        let huge = DBusValue.array(elementSignature: "s", Array(repeating: .string("beacon"), count: 200_000))
        #expect(error(ServedObject.path, ServedObject.interface, "Echo", [huge])?.name == DBusStandardError.invalidArgs)
        #expect(
            try client.call(
                destination: ServedObject.name, path: ServedObject.path, interface: ServedObject.interface,
                member: "Echo", arguments: [.string("still here")]) == [.string("still here")])
    }

    /// A signal with a destination reaches that connection and nobody else, even one listening for it.
    @Test func unicastSignalsReachOnlyTheirDestination() throws {
        let served = try ServedObject()
        let caller = try DBusConnection(.address(served.bus.address))
        let bystander = try DBusConnection(.address(served.bus.address))
        try bystander.addMatch("type='signal',interface='\(ServedObject.interface)'")
        _ = try caller.call(
            destination: ServedObject.name, path: ServedObject.path, interface: ServedObject.interface,
            member: "Ping", arguments: [.string("token-1")])
        let signal = try #require(try caller.nextMessage(timeout: .seconds(5)))
        #expect(signal.member == "Pong")
        #expect(try signal.arguments() == [.string("token-1")])
        // The bystander's first signal is a broadcast sent after the unicast one, not the unicast one. Both come from
        // the server's one connection, and the bus keeps one sender's order to each receiver: had the unicast signal
        // reached the bystander, it would have come first.
        _ = try caller.call(
            destination: ServedObject.name, path: ServedObject.path, interface: ServedObject.interface,
            member: "PingEveryone", arguments: [.string("marker")])
        let first = try #require(try bystander.nextMessage(timeout: .seconds(10)), "the broadcast never came")
        #expect(first.member == "Pong")
        #expect(try first.arguments() == [.string("marker")], "the unicast signal reached the bystander")
    }

    /// Introspection is the one description of a signal: one that does not match its declaration (or is not
    /// declared on an interface that declares signals) is refused, never sent.
    @Test func signalsMustMatchTheirDeclaration() throws {
        let served = try ServedObject()
        let caller = try DBusConnection(.address(served.bus.address))
        for member in ["PongWrongly", "PongTwice", "Pang"] {
            do {
                _ = try caller.call(
                    destination: ServedObject.name, path: ServedObject.path, interface: ServedObject.interface,
                    member: member, arguments: [])
                Issue.record("\(member): a signal that does not match its declaration was sent")
            } catch {
                #expect(error.name == DBusStandardError.failed, "\(member): \(error)")
                #expect(error.message.contains("org.beacond.Test1"), "\(member): \(error.message)")
            }
        }
        // The declared signature still goes out, and it is the first signal the caller gets: the refused ones would
        // have come before it (each before its call's error reply), from the server's one connection, whose order
        // the bus keeps; libdbus queues what arrives while a call waits for its reply.
        _ = try caller.call(
            destination: ServedObject.name, path: ServedObject.path, interface: ServedObject.interface,
            member: "Ping", arguments: [.string("fine")])
        let first = try #require(try caller.nextMessage(timeout: .seconds(10)), "the declared signal never came")
        #expect(first.member == "Pong")
        #expect(try first.arguments() == [.string("fine")], "a refused signal was sent")
    }

    /// The object's access check runs before methods and properties; Introspect stays open.
    @Test func accessCheckGuardsPrivateObjects() throws {
        let bus = try PrivateBus()
        let ownerConnection = try DBusConnection(.address(bus.address))
        let served = try ServedObject(privateOwner: ownerConnection.uniqueName, bus: bus)
        let other = try DBusConnection(.address(served.bus.address))
        let path = ServedObject.path + "/private"
        #expect(
            try ownerConnection.call(
                destination: ServedObject.name, path: path, interface: ServedObject.interface,
                member: "Echo", arguments: [.string("mine")]) == [.string("mine")])
        #expect(throws: DBusCallError(name: "org.beacond.Error.AccessDenied", message: "only \(ownerConnection.uniqueName) may call this object")) {
            _ = try other.call(
                destination: ServedObject.name, path: path, interface: ServedObject.interface,
                member: "Echo", arguments: [.string("theirs")])
        }
        #expect(throws: DBusCallError.self) {
            _ = try other.call(
                destination: ServedObject.name, path: path, interface: "org.freedesktop.DBus.Properties",
                member: "GetAll", arguments: [.string(ServedObject.interface)])
        }
        let introspection = try other.call(
            destination: ServedObject.name, path: path,
            interface: "org.freedesktop.DBus.Introspectable", member: "Introspect")
        #expect(introspection.count == 1)
    }

    /// NameOwnerChanged: a client that disconnects is reported by its unique name.
    @Test func noticesClientsThatVanish() throws {
        let served = try ServedObject()
        var client: DBusConnection? = try DBusConnection(.address(served.bus.address))
        let name = try #require(client?.uniqueName)
        client = nil
        #expect(eventually { served.closedNames.withLock { $0.contains(name) } })
    }
}

/// An actor whose executor is the main loop: async callers reach it with `await`, loop callbacks enter it
/// synchronously with `assumeIsolated`.
actor LoopBoundCounter {
    let loop: MainLoop
    var count = 0

    init(loop: MainLoop) { self.loop = loop }

    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    func increment() -> Int {
        count += 1
        return count
    }
}

@Suite("Main loop")
struct MainLoopTests {
    @Test func actorsRunOnTheLoopThread() async throws {
        let loop = try MainLoop()
        try loop.startThread()
        defer { loop.stopAndWait() }
        let counter = LoopBoundCounter(loop: loop)
        #expect(await counter.increment() == 1)
        #expect(await counter.increment() == 2)
        let fromCallback = Locked<Int>(0)
        loop.execute {
            let value = counter.assumeIsolated { $0.increment() }
            fromCallback.withLock { $0 = value }
        }
        #expect(await eventually { fromCallback.withLock { $0 } == 3 })
    }

    @Test func timersFireInDeadlineOrder() throws {
        let loop = try MainLoop()
        let fired = Locked<[Int]>([])
        let start = ContinuousClock.now
        loop.schedule(at: start + .milliseconds(30)) { fired.withLock { $0.append(3) } }
        loop.schedule(at: start + .milliseconds(10)) { fired.withLock { $0.append(1) } }
        let cancelled = loop.schedule(at: start + .milliseconds(20)) { fired.withLock { $0.append(2) } }
        loop.cancelTimer(cancelled)
        try loop.startThread()
        defer { loop.stopAndWait() }
        #expect(eventually { fired.withLock { $0 } == [1, 3] })
    }

    /// A readable descriptor wakes the loop (no polling): bytes written to a pipe reach the handler.
    @Test func descriptorsWakeTheLoop() throws {
        let loop = try MainLoop()
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        let received = Locked<[UInt8]>([])
        let readEnd = ends[0]
        loop.addDescriptor(readEnd, events: .readable) { _ in
            var buffer = [UInt8](repeating: 0, count: 16)
            let count = read(readEnd, &buffer, buffer.count)
            if count > 0 { received.withLock { $0 += buffer[0..<count] } }
        }
        try loop.startThread()
        defer { loop.stopAndWait() }
        var bytes: [UInt8] = [0x04, 0x3E]
        #expect(write(ends[1], &bytes, 2) == 2)
        #expect(eventually { received.withLock { $0 } == [0x04, 0x3E] })
    }
}

/// The daemon as a client of other services (bluetoothd): asynchronous calls and signal handlers on the loop.
@Suite("D-Bus client side of the object server")
struct DBusObjectServerClientTests {
    @Test func asynchronousCallsComplete() throws {
        let served = try ServedObject()
        let loop = try MainLoop()
        let connection = try DBusConnection(.address(served.bus.address))
        let server = try DBusObjectServer(connection: connection, loop: loop)
        let results = Locked<[String]>([])
        server.callAsync(
            destination: ServedObject.name, path: ServedObject.path, interface: ServedObject.interface,
            member: "Echo", arguments: [.string("async")]
        ) { result in
            results.withLock { $0.append((try? result.get()) == [.string("async")] ? "echo" : "wrong: \(result)") }
        }
        server.callAsync(
            destination: ServedObject.name, path: ServedObject.path, interface: ServedObject.interface,
            member: "Fail"
        ) { result in
            if case .failure(let error) = result { results.withLock { $0.append(error.name) } }
        }
        // A peer that never answers: the call times out with an error, it does not hang the loop.
        let silent = try DBusConnection(.address(served.bus.address))
        server.callAsync(
            destination: silent.uniqueName, path: "/x", interface: "org.example.Silent", member: "Wait",
            timeout: .milliseconds(200)
        ) { result in
            if case .failure(let error) = result { results.withLock { $0.append(error.name) } }
        }
        try loop.startThread()
        defer { loop.stopAndWait() }
        #expect(
            eventually {
                results.withLock { Set($0) } == ["echo", "org.beacond.Error.InvalidRegion", "org.freedesktop.DBus.Error.NoReply"]
            }, "\(results.withLock { $0 })")
        _ = server
    }

    @Test func signalHandlersAndNameOwnerChanges() throws {
        let bus = try PrivateBus()
        let loop = try MainLoop()
        let connection = try DBusConnection(.address(bus.address))
        let server = try DBusObjectServer(connection: connection, loop: loop)
        let heard = Locked<[String]>([])
        try server.addSignalHandler(matchRule: "type='signal',interface='org.example.Beacons'") { message in
            if message.interface == "org.example.Beacons" { heard.withLock { $0.append(message.member ?? "") } }
        }
        server.nameOwnerChanged = { name, _, newOwner in
            if name == "org.example.Service" { heard.withLock { $0.append(newOwner.isEmpty ? "gone" : "owned") } }
        }
        try loop.startThread()
        defer { loop.stopAndWait() }
        var service: DBusConnection? = try DBusConnection(.address(bus.address))
        _ = try service?.requestName("org.example.Service")
        let signal = try DBusMessage.signal(path: "/org/example", interface: "org.example.Beacons", member: "Seen")
        try service?.send(signal)
        service = nil
        #expect(eventually { heard.withLock { $0 } == ["owned", "Seen", "gone"] }, "\(heard.withLock { $0 })")
        _ = server
    }
}
