import BeaconKit
import BeacondAPI
@testable import BeacondService
@testable import BeacondCore
import DBus
import Foundation
import TestKit
import Testing

/// Issue 40: the runtime takes inputs in one loop and is never re-entered. Effects that produce inputs (a scanner
/// that started and the status it started in, an `[mqtt]` node made or stopped) hand them back to that loop, and
/// the scanner and the node call back only from the main loop, later. A debug build traps on re-entry (the
/// precondition in `BeaconDaemon.run`), so these tests fail by crashing if a callback reaches the daemon while it
/// carries out effects.
@Suite("beacond's one loop", .serialized)
struct DaemonLoopTests {
    /// Nothing listens on port 1 of the loopback: libmosquitto's connection is refused at once, in `start`, which
    /// called the node's connection callback before `start` returned. Before the queue, that callback re-entered
    /// the daemon from inside the effect that made the node (start, and every reload that changed `[mqtt]`).
    static let refusingBroker = "mqtt://127.0.0.1:1"

    static func status(_ running: RunningDaemon) throws -> [String: DBusValue] {
        let reply = try DBusConnection(.address(running.bus.address)).call(
            destination: BeacondBus.name, path: BeacondBus.managerPath,
            interface: BeacondInterface.admin, member: BeacondMember.getStatus)
        guard case .dictionary(_, _, let entries)? = reply.first else { throw TestFailure("GetStatus: \(reply)") }
        var status: [String: DBusValue] = [:]
        for entry in entries {
            guard case .string(let key) = entry.key else { continue }
            if case .variant(let value) = entry.value { status[key] = value } else { status[key] = entry.value }
        }
        return status
    }

    @Test("a broker that refuses at once, at start and after a reload of [mqtt], and a scanner starting")
    func effectsThatProduceInputsAreQueued() async throws {
        let running = try RunningDaemon(settings: "[mqtt]\nbroker = \"\(Self.refusingBroker)\"\nroom = \"hall\"")
        try await running.start()
        do {
            #expect(
                await eventually { (try? Self.status(running))?[BeacondStatusKey.mqttState] == .string("waiting") },
                "the refused broker is not shown as waiting")
            // A reload that changes [mqtt] stops the node and makes a new one, both inside the reload's effects.
            try running.writeSettings("[mqtt]\nbroker = \"mqtt://127.0.0.1:9\"\nroom = \"hall\"")
            #expect(try running.reload() == "")
            #expect(
                await eventually {
                    let status = try? Self.status(running)
                    return status?[BeacondStatusKey.mqttBroker] == .string("mqtt://127.0.0.1:9")
                        && status?[BeacondStatusKey.mqttState] == .string("waiting")
                }, "the new broker is not shown as waiting")
            // A region starts the fifo scanner inside the call's effects; its first status comes back as an input.
            _ = try DBusConnection(.address(running.bus.address)).call(
                destination: BeacondBus.name, path: BeacondBus.managerPath,
                interface: BeacondInterface.admin, member: BeacondMember.setAuthorization,
                arguments: [.string(RunningDaemon.app), .string("authorizedAlways")])
            let client = try TestClient(running)
            try client.call(BeacondMember.startMonitoring, [try RunningDaemon.region("lobby", minor: 1)])
            #expect(
                await eventually { (try? Self.status(running))?[BeacondStatusKey.scannerState] == .string("scanning") },
                "the scanner's first status was not taken")
            try await running.advertise(minor: 1)
            #expect(try client.next(BeacondMember.didEnterRegion) != nil, "no DidEnterRegion through the started scanner")
        } catch {
            await running.stop()
            throw error
        }
        await running.stop()
    }
}
