import BeaconKit
import BeacondAPI
@testable import BeacondService
@testable import BeacondCore
import DBus
import Foundation
import TestKit
import Testing

/// The whole daemon in-process on a private bus: takeover of a disconnected client's regions with the events
/// queued meanwhile, the order of commit and signal, and a restart. The Python integration tests check the same
/// through the binary; these run in seconds, without root, and stop at the first broken seam.
@Suite("beacond on a private bus", .serialized)
struct DaemonOnPrivateBusTests {
    /// A started daemon for `body`, stopped afterwards whatever happened.
    static func withDaemon(
        settings: String = "", exitTimeout: Int = 1, _ body: (RunningDaemon) async throws -> Void
    ) async throws {
        let running = try RunningDaemon(settings: settings, exitTimeout: exitTimeout)
        try await running.start()
        do {
            try await body(running)
        } catch {
            await running.stop()
            throw error
        }
        await running.stop()
    }

    static func admin(_ running: RunningDaemon) throws -> DBusConnection {
        try DBusConnection(.address(running.bus.address))
    }

    static func authorizeAlways(_ running: RunningDaemon) throws {
        _ = try admin(running).call(
            destination: BeacondBus.name, path: BeacondBus.managerPath,
            interface: BeacondInterface.admin, member: BeacondMember.setAuthorization,
            arguments: [.string(RunningDaemon.app), .string("authorizedAlways")])
    }

    static func number(_ client: TestClient) throws -> Int {
        guard let number = client.path.split(separator: "/").last.flatMap({ Int($0) }) else {
            throw TestFailure("no client number in \(client.path)")
        }
        return number
    }

    /// Whether Admin1.ListClients shows the client as disconnected (detached).
    static func isDetached(_ running: RunningDaemon, path: String) throws -> Bool {
        let reply = try admin(running).call(
            destination: BeacondBus.name, path: BeacondBus.managerPath,
            interface: BeacondInterface.admin, member: BeacondMember.listClients,
            arguments: [.uint32(0), .uint32(0)])
        guard case .array(_, let clients)? = reply.first else { return false }
        for client in clients {
            guard case .dictionary(_, _, let entries) = client else { continue }
            let values = Dictionary(
                entries.compactMap { entry -> (String, DBusValue)? in
                    guard case .string(let key) = entry.key else { return nil }
                    if case .variant(let value) = entry.value { return (key, value) }
                    return (key, entry.value)
                }, uniquingKeysWith: { first, _ in first })
            if values[BeacondClientKey.path] == .objectPath(path) || values[BeacondClientKey.path] == .string(path) {
                return values[BeacondClientKey.connected] == .boolean(false)
            }
        }
        return false
    }

    static func isLate(_ message: DBusMessage) throws -> Bool {
        let arguments = try message.arguments()
        guard case .dictionary(_, _, let entries)? = arguments.last else { return false }
        for entry in entries where entry.key == .string(BeacondEventInfoKey.late) {
            return entry.value == .variant(.boolean(true)) || entry.value == .boolean(true)
        }
        return false
    }

    /// An Always client whose connection closes keeps its region; the enter seen meanwhile is saved and queued;
    /// the app's next client takes the region over as it is (inside, no new DidEnterRegion for the beacon still
    /// there) and gets the queued DidEnterRegion, marked late. (A long exit timeout: the beacon is "still there"
    /// however slow the machine is between its two sightings.)
    @Test func theAppsNextClientTakesOverTheRegionAndItsQueuedEvents() async throws {
        try await Self.withDaemon(exitTimeout: 60) { running in
            try Self.authorizeAlways(running)
            var first: TestClient? = try TestClient(running)
            try first?.call(BeacondMember.startMonitoring, [try RunningDaemon.region("lobby", minor: 1)])
            let firstPath = try #require(first?.path)
            let firstNumber = try Self.number(try #require(first))
            first = nil // its connection closes
            #expect(await eventually { (try? Self.isDetached(running, path: firstPath)) == true }, "the client was not detached")

            try await running.advertise(minor: 1)
            #expect(
                await eventually { (try? running.savedState(client: firstNumber, identifier: "lobby")) == "inside" },
                "the enter of the detached client's region was not saved")

            let second = try TestClient(running)
            #expect(try second.monitoredIdentifiers() == ["lobby"])
            let late = try #require(try second.next(BeacondMember.didEnterRegion), "no queued DidEnterRegion")
            #expect(try Self.isLate(late))
            // Taken over as it is: the beacon still there enters nothing new. Shown by a marker, not a wait: a
            // second region's beacon, advertised after it, must enter. Both lines go through the one FIFO, which
            // beacond reads in order, handling each line to its end (the engine's events, the signals queued) before
            // the next; the signals go out in that order on its one connection, and the bus keeps one sender's order
            // to one receiver. So once the marker's DidEnterRegion is here, any DidEnterRegion of lobby is too.
            try second.call(BeacondMember.startMonitoring, [try RunningDaemon.region("marker", minor: 9)])
            try await running.advertise(minor: 1)
            try await running.advertise(minor: 9)
            let signals = try second.signals(through: BeacondMember.didEnterRegion, region: "marker")
            #expect(!signals.contains(.init(member: BeacondMember.didEnterRegion, region: "lobby")), "\(signals)")
            #expect(try running.savedState(client: try Self.number(second), identifier: "lobby") == "inside")
        }
    }

    /// What a signal tells a client is in the database before the client hears it, so a crash right after cannot
    /// take back what the client was told.
    @Test func theStateIsSavedBeforeTheSignalGoesOut() async throws {
        try await Self.withDaemon { running in
            try Self.authorizeAlways(running)
            let client = try TestClient(running)
            try client.call(BeacondMember.startMonitoring, [try RunningDaemon.region("desk", minor: 2)])
            let number = try Self.number(client)
            #expect(try running.savedState(client: number, identifier: "desk") == "unknown")
            try await running.advertise(minor: 2)
            _ = try #require(try client.next(BeacondMember.didEnterRegion))
            #expect(try running.savedState(client: number, identifier: "desk") == "inside")
            // The exit too: saved before DidExitRegion arrives (exit_timeout 1 s after the last sighting).
            _ = try #require(try client.next(BeacondMember.didExitRegion))
            #expect(try running.savedState(client: number, identifier: "desk") == "outside")
        }
    }

    /// After a restart the region resumes with its state: the app's client takes it over, the beacon still there
    /// gives no new DidEnterRegion, and RequestState says inside. (A long exit timeout: a slow restart is no exit.)
    @Test func aRestartResumesRegionsWithoutAFalseEnter() async throws {
        try await Self.withDaemon(exitTimeout: 60) { running in
            try Self.authorizeAlways(running)
            let before = try TestClient(running)
            try before.call(BeacondMember.startMonitoring, [try RunningDaemon.region("hall", minor: 3)])
            try await running.advertise(minor: 3)
            _ = try #require(try before.next(BeacondMember.didEnterRegion))
            await running.stop()

            try await running.start()
            let after = try TestClient(running)
            #expect(try after.monitoredIdentifiers() == ["hall"])
            // A marker region, whose beacon is advertised last: its DidEnterRegion comes after whatever the hall's
            // sighting and RequestState caused (the FIFO's lines are handled in order, each to its end; RequestState's
            // signal is queued before its reply, which comes before the marker's line is written; the signals go out
            // in the order queued, and the bus keeps one sender's order to one receiver).
            try after.call(BeacondMember.startMonitoring, [try RunningDaemon.region("marker", minor: 9)])
            try await running.advertise(minor: 3)
            try after.call(BeacondMember.requestState, [.string("hall")])
            try await running.advertise(minor: 9)
            let signals = try after.signals(through: BeacondMember.didEnterRegion, region: "marker")
            #expect(!signals.contains(.init(member: BeacondMember.didEnterRegion, region: "hall")), "signals after the restart: \(signals)")
            #expect(signals.contains(.init(member: BeacondMember.didDetermineState, region: "hall")), "\(signals)")
        }
    }
}
