#if canImport(Glibc)
    @preconcurrency import Glibc
#endif
import Foundation
import Testing

/// The examples docs/clients.md shows, and `beaconctl client` (the library's first user), run as users run them:
/// the built programs, against the real beacond, through a `kill -9` of beacond.
@Suite("the examples and beaconctl client on the library", .serialized)
struct ExamplesTests {
    /// Line-buffered output, as a terminal would get it (stdbuf; the examples use plain `print`).
    static let lineBuffered = ["/usr/bin/stdbuf", "-oL"]

    @Test(
        "each example asks for Always, waits for the administrator, and prints one entry and one exit across a kill -9",
        arguments: [
            ("example-monitor-region", "entered lobby", "exited lobby"),
            ("example-monitor-events", "lobby inside", "lobby outside"),
        ])
    func example(name: String, entered: String, exited: String) async throws {
        let world = try await World.running()
        let program = try world.start(name, [World.demo], prefix: Self.lineBuffered)
        try await until("\(name)'s request") {
            try world.admin("ListPendingRequests", "uu", ["0", "10"]).contains(World.demo)
        }
        try world.grant()
        let beacon = Advertiser(world)
        beacon.on()
        try await until("\(name) to print the entry: \(program.output)") { program.lines.contains(entered) }
        world.killDaemon()
        try await world.startDaemon()
        try await until("\(name) to register again") { try world.clients().contains("\"Connected\" b true") }
        await beacon.off()
        try await until("\(name) to print the exit: \(program.output)") { program.lines.contains(exited) }
        // One entry and one exit across the restart. The marker is a whole second visit, whose exit prints
        // exit_timeout after the beacon left again: after anything the restart could have repeated.
        beacon.on()
        try await until("\(name) to print the entry again: \(program.output)") { program.lines.filter { $0 == entered }.count >= 2 }
        await beacon.off()
        try await until("\(name) to print the exit again: \(program.output)") { program.lines.filter { $0 == exited }.count >= 2 }
        #expect(program.lines.filter { $0 == entered || $0 == exited } == [entered, exited, entered, exited], "\(program.output)")
        program.signal(SIGTERM)
        _ = try await program.finish()
    }

    @Test("the library needs no root: an example running as nobody registers, asks and is granted")
    func runsAsNobody() async throws {
        let world = try await World.running()
        let program = try world.start(
            "example-monitor-events", ["org.example.Unprivileged"],
            prefix: ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + Self.lineBuffered)
        try await until("the request of the program running as nobody") {
            try world.admin("ListPendingRequests", "uu", ["0", "10"]).contains("org.example.Unprivileged")
        }
        let clients = try world.clients()
        #expect(clients.contains("\"UnixUserID\" u 65534"), "\(clients)")
        try world.grant(app: "org.example.Unprivileged")
        try await until("ready once granted: \(program.output)") { program.lines.last == "lobby ready" }
        #expect(program.lines.contains { $0.hasPrefix("lobby waiting: waiting for an administrator") }, "\(program.output)")
        program.signal(SIGTERM)
        _ = try await program.finish()
    }

    /// Issue 39: against a beacond that owns its name and answers nothing, `beaconctl client` said "not running
    /// (nobody owns org.beacond)"; it says beacond did not answer, as `beaconctl status` does.
    @Test("beaconctl client against a hung beacond says it did not answer, not that it is not running")
    func beaconctlClientAgainstAHungDaemon() async throws {
        let world = try await World.running(granting: "authorizedAlways")
        world.signalDaemon(SIGSTOP)
        defer { world.signalDaemon(SIGCONT) }
        let client = try world.start(
            "beaconctl", ["--bus", world.address, "client", "--app", World.demo, "monitor", World.demoUUID.uuidString])
        // The registration waits 25 s for its answer.
        try await until("beaconctl client to give up: \(client.output)", timeout: .seconds(60)) { !client.output.isEmpty }
        #expect(try await client.finish() == 69, "\(client.output)")
        #expect(client.output.contains("did not answer RegisterClient"), "\(client.output)")
        #expect(!client.output.contains("not running"), "\(client.output)")
    }

    @Test("beaconctl client registers again after a kill -9 and prints one entry and one exit")
    func beaconctlClientSurvivesKill9() async throws {
        let world = try await World.running(granting: "authorizedAlways")
        let client = try world.start(
            "beaconctl",
            ["--bus", world.address, "client", "--app", World.demo, "monitor", "\(World.demoUUID.uuidString):1", "--identifier", "door"])
        try await until("monitoring: \(client.output)") { client.output.contains("monitoring door") }
        let beacon = Advertiser(world)
        beacon.on()
        try await until("the entry: \(client.output)") { client.output.contains("DidEnterRegion") }
        world.killDaemon()
        try await world.startDaemon()
        try await until("registered again: \(client.output)") { client.output.contains("beacond is back: registered again") }
        await beacon.off()
        try await until("the exit: \(client.output)") { client.output.contains("DidExitRegion") }
        // One entry and one exit across the restart. The marker is a whole second visit, whose exit prints
        // exit_timeout after the beacon left again: after anything the restart could have repeated.
        beacon.on()
        try await until("the entry again: \(client.output)") { client.lines.filter { $0.contains("DidEnterRegion") }.count >= 2 }
        await beacon.off()
        try await until("the exit again: \(client.output)") { client.lines.filter { $0.contains("DidExitRegion") }.count >= 2 }
        let events = client.lines.filter { $0.contains("DidEnterRegion") || $0.contains("DidExitRegion") }
        #expect(events.map { $0.contains("DidEnterRegion") } == [true, false, true, false], "\(client.output)")
        client.signal(SIGINT)
        #expect(try await client.finish() == 0, "\(client.output)")
        // It stopped what it started, on the beacond it was registered with at the end.
        #expect(try !world.regions().contains("door"))
    }

    @Test("an example given a bad UUID says so and exits, no crash")
    func exampleRefusesABadUUID() async throws {
        let world = try World()
        for name in ["example-monitor-region", "example-monitor-events"] {
            let program = try world.start(name, [World.demo, "not-a-uuid"])
            let status = try await program.finish()
            #expect(status == 64 || status == 1, "\(name) exited \(status): \(program.output)")
            #expect(program.output.contains("'not-a-uuid' is not a UUID"), "\(program.output)")
        }
    }
}
