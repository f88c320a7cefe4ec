import BeaconKit
@testable import BeacondService
@testable import BeacondCore
import Foundation
import Testing

/// The engine every client shares, without a bus: takeover, replacement, reconfiguration, removal.
@Suite("beacon engine")
struct BeaconEngineTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let start = Timestamp(microsecondsSinceEpoch: 1_800_000_000_000_000)
    static let exitTimeout: Duration = .seconds(30)

    static func at(_ seconds: Int) -> Timestamp { start + .seconds(seconds) }

    static func region(_ identifier: String, minor: UInt16? = nil) throws -> BeaconRegion {
        try BeaconRegion(identifier: identifier, constraint: BeaconIdentityConstraint(uuid: uuid, major: 1, minor: minor))
    }

    static func sighting(minor: UInt16 = 1) -> ScannerInput {
        .advertisement(
            AdvertisementContent(beacon: BeaconFrame(identity: BeaconIdentity(uuid: uuid, major: 1, minor: minor), measuredPower: -59)), rssi: -60,
            address: BluetoothAddress(rawValue: 0xC0FFEE), addressType: 1)
    }

    static func engine() throws -> BeaconEngine { BeaconEngine(try MonitoringConfiguration(exitTimeout: exitTimeout)) }

    /// (client, identifier, kind) of every monitoring event, in order.
    static func monitoring(_ events: [BeaconEngine.Event]) -> [String] {
        events.compactMap { event -> String? in
            guard case .monitoring(let monitoring) = event, case .region(let client, let identifier) = monitoring.key else { return nil }
            return "\(client) \(identifier) \(monitoring.kind)"
        }
    }

    @Test("a sighting enters the region of the client that monitors it; the exit comes exit_timeout after the last")
    func sightingsEnterAndExit() throws {
        var engine = try Self.engine()
        #expect(!engine.needsScanning)
        _ = engine.startMonitoring(try Self.region("lobby"), client: 1, at: Self.at(0))
        #expect(engine.needsScanning)
        #expect(Self.monitoring(engine.ingest(Self.sighting(), at: Self.at(1))) == ["1 lobby didDetermineState(inside)", "1 lobby didEnterRegion"])
        #expect(engine.nextDeadline() == Self.at(31))
        #expect(Self.monitoring(engine.advance(to: Self.at(30))).isEmpty)
        #expect(Self.monitoring(engine.advance(to: Self.at(31))) == ["1 lobby didDetermineState(outside)", "1 lobby didExitRegion"])
    }

    /// A takeover moves the region as it is: no event, the same state and last sighting, and the exit still due
    /// from the old client's last sighting (not a fresh timer).
    @Test func takeoverKeepsStateAndPendingExit() throws {
        var engine = try Self.engine()
        _ = engine.startMonitoring(try Self.region("lobby"), client: 1, at: Self.at(0))
        _ = engine.ingest(Self.sighting(), at: Self.at(1))
        let moved = engine.moveRegion("lobby", from: 1, to: 2)
        #expect(moved?.state == .inside)
        #expect(moved?.lastSeen == Self.at(1))
        #expect(engine.monitoredRegion(client: 1, identifier: "lobby") == nil)
        #expect(engine.monitoredRegion(client: 2, identifier: "lobby")?.state == .inside)
        #expect(engine.moveRegion("lobby", from: 1, to: 3) == nil)
        #expect(Self.monitoring(engine.advance(to: Self.at(31))) == ["2 lobby didDetermineState(outside)", "2 lobby didExitRegion"])
    }

    /// StartMonitoring with an identifier the client already monitors replaces the region (Core Location): the
    /// old one stops without an exit, the new one starts unknown.
    @Test func sameIdentifierReplacesTheRegion() throws {
        var engine = try Self.engine()
        _ = engine.startMonitoring(try Self.region("desk", minor: 1), client: 1, at: Self.at(0))
        _ = engine.ingest(Self.sighting(minor: 1), at: Self.at(1))
        let events = engine.startMonitoring(try Self.region("desk", minor: 2), client: 1, at: Self.at(2))
        #expect(!Self.monitoring(events).contains { $0.hasSuffix("didExitRegion") })
        #expect(engine.monitoredCount == 1)
        #expect(engine.monitoredRegion(client: 1, identifier: "desk")?.region.constraint.minor == 2)
        #expect(engine.monitoredRegion(client: 1, identifier: "desk")?.state == .unknown)
    }

    /// RequestState reports what fell due first (the exit), then the state.
    @Test func requestStateAfterWhatFellDue() throws {
        var engine = try Self.engine()
        _ = engine.startMonitoring(try Self.region("lobby"), client: 1, at: Self.at(0))
        _ = engine.ingest(Self.sighting(), at: Self.at(1))
        #expect(
            Self.monitoring(engine.requestState(client: 1, identifier: "lobby", at: Self.at(40)))
                == ["1 lobby didDetermineState(outside)", "1 lobby didExitRegion", "1 lobby didDetermineState(outside)"])
    }

    /// Ranging starts once per constraint however often it is asked, and stops; removing a client takes out its
    /// regions and ranging, and scanning is no longer needed.
    @Test func rangingAndRemoval() throws {
        var engine = try Self.engine()
        let constraint = try BeaconIdentityConstraint(uuid: Self.uuid)
        _ = engine.startRanging([constraint], client: 1, at: Self.at(0))
        _ = engine.startRanging([constraint], client: 1, at: Self.at(0))
        _ = engine.ingest(Self.sighting(), at: Self.at(0))
        let cycle = engine.advance(to: Self.at(1)).compactMap { event -> [RangingResult<EngineKey>]? in
            if case .ranging(let results, _) = event { return results }
            return nil
        }.flatMap { $0 }
        #expect(cycle.map(\.key) == [.ranging(client: 1, constraint: constraint)])
        #expect(cycle.first?.beacons.count == 1)
        _ = engine.startMonitoring(try Self.region("lobby"), client: 1, at: Self.at(1))
        let removed = engine.remove(client: 1, regions: ["lobby"], ranging: [constraint], at: Self.at(2))
        #expect(!Self.monitoring(removed).contains { $0.hasSuffix("didExitRegion") })
        #expect(engine.monitoredCount == 0)
        #expect(!engine.needsScanning)
    }

    /// A new exit timeout keeps every region's state and, while blind, keeps it blind: a region last seen long ago
    /// does not exit at the rebuild, but a full new exit timeout after detection resumes.
    @Test func reconfigurationKeepsRegionsAndBlindness() throws {
        var engine = try Self.engine()
        _ = engine.startMonitoring(try Self.region("lobby"), client: 1, at: Self.at(0))
        _ = engine.ingest(Self.sighting(), at: Self.at(1))
        _ = engine.suspendDetection(at: Self.at(2))
        let constraint = try BeaconIdentityConstraint(uuid: Self.uuid)
        let (due, _) = engine.reconfigure(
            try MonitoringConfiguration(exitTimeout: .seconds(10)),
            ranging: [(client: 1, constraints: [constraint])], at: Self.at(100))
        #expect(!Self.monitoring(due).contains { $0.hasSuffix("didExitRegion") })
        #expect(engine.monitoredRegion(client: 1, identifier: "lobby")?.lastSeen == Self.at(1))
        #expect(engine.needsScanning)
        #expect(Self.monitoring(engine.advance(to: Self.at(200))).allSatisfy { !$0.hasSuffix("didExitRegion") })
        engine.resumeDetection(at: Self.at(200))
        #expect(Self.monitoring(engine.advance(to: Self.at(209))).allSatisfy { !$0.hasSuffix("didExitRegion") })
        #expect(Self.monitoring(engine.advance(to: Self.at(210))).contains("1 lobby didExitRegion"))
    }

    // MARK: Ranging what the fleet hears

    static let kitchen = ReceiverID(rawValue: 1)
    static let office = ReceiverID(rawValue: 2)

    /// An engine with rooms (this node in the hall) ranging the UUID for client 1.
    static func fleetEngine() throws -> (BeaconEngine, BeaconIdentityConstraint) {
        var engine = try Self.engine()
        engine.presence = RoomPresence(localRoom: "hall")
        let constraint = try BeaconIdentityConstraint(uuid: uuid)
        _ = engine.startRanging([constraint], client: 1, at: Self.at(0))
        return (engine, constraint)
    }

    static func remote(
        _ engine: inout BeaconEngine, minor: UInt16, rssi: Double, by receiver: ReceiverID, in room: String,
        at now: Timestamp
    ) -> [BeaconEngine.Event] {
        engine.observe(
            BeaconIdentity(uuid: uuid, major: 1, minor: minor), rssi: Int8(rssi), exactRSSI: rssi, measuredPower: -59,
            by: receiver, in: room, at: now)
    }

    static func rangedBeacons(_ events: [BeaconEngine.Event]) -> [[RangedBeacon]] {
        events.compactMap { event -> [RangedBeacon]? in
            guard case .ranging(let results, _) = event else { return nil }
            return results.first?.beacons
        }
    }

    /// Uncalibrated receivers: rssi@1m −59 and exponent 2.7.
    static func metres(_ rssi: Double) -> Double { pow(10, (-59 - rssi) / 27) }

    /// A node whose adapter hears nothing ranges what other receivers hear: every beacon, with the nearest receiver's
    /// calibrated distance as its accuracy and that receiver's RSSI, nearest first.
    @Test func rangingListsWhatOtherReceiversHear() throws {
        var (engine, _) = try Self.fleetEngine()
        let start = Self.at(0) + .milliseconds(100)
        _ = Self.remote(&engine, minor: 1, rssi: -75, by: Self.kitchen, in: "kitchen", at: start)
        _ = Self.remote(&engine, minor: 1, rssi: -85, by: Self.office, in: "office", at: start)
        _ = Self.remote(&engine, minor: 2, rssi: -62, by: Self.office, in: "office", at: start + .milliseconds(10))
        let cycles = Self.rangedBeacons(engine.advance(to: Self.at(1)))
        #expect(cycles.count == 1)
        let beacons = cycles.first ?? []
        #expect(beacons.map(\.identity.minor) == [2, 1])
        #expect(beacons.map(\.rssi) == [-62, -75])
        #expect(beacons.map { ($0.accuracy * 1000).rounded() } == [Self.metres(-62), Self.metres(-75)].map { ($0 * 1000).rounded() })
        #expect(beacons.map(\.proximity) == [.near, .far])
        #expect(beacons.map(\.measuredPower) == [-59, -59])
        #expect(beacons.map(\.receiver) == ["office", "kitchen"])
    }

    /// A beacon this adapter hears keeps this adapter's measurement (under this node's room), even with a nearer
    /// receiver; in a cycle only other receivers hear it, the nearest one's; in a cycle nobody does, none.
    @Test func whatThisAdapterHearsKeepsItsOwnMeasurement() throws {
        var (engine, _) = try Self.fleetEngine()
        _ = engine.ingest(Self.sighting(minor: 1), at: Self.at(0) + .milliseconds(100))
        _ = Self.remote(&engine, minor: 1, rssi: -50, by: Self.kitchen, in: "kitchen", at: Self.at(0) + .milliseconds(110))
        let own = Self.rangedBeacons(engine.advance(to: Self.at(1))).first?.first
        #expect(own?.rssi == -60)
        #expect(own?.accuracy == RangingConfiguration().distanceModel.accuracy(rssi: -60, measuredPower: -59))
        #expect(own?.receiver == "hall")
        _ = Self.remote(&engine, minor: 1, rssi: -50, by: Self.kitchen, in: "kitchen", at: Self.at(1) + .milliseconds(500))
        let remote = Self.rangedBeacons(engine.advance(to: Self.at(2))).first?.first
        #expect(remote?.rssi == -50)
        #expect(remote?.receiver == "kitchen")
        #expect(remote?.timestamp == Self.at(1) + .milliseconds(500))
        let silent = Self.rangedBeacons(engine.advance(to: Self.at(3))).first?.first
        #expect(silent.map { ($0.rssi, $0.accuracy, $0.receiver) } ?? (1, 1, "") == (0, -1, nil))
    }

    /// Ranging pauses after 60 empty cycles; a reading from another receiver resumes it, as a sighting of this
    /// adapter does.
    @Test func aRemoteReadingResumesPausedRanging() throws {
        var (engine, _) = try Self.fleetEngine()
        #expect(Self.rangedBeacons(engine.advance(to: Self.at(100))).count == 60)
        #expect(engine.nextDeadline() == nil)
        _ = Self.remote(&engine, minor: 1, rssi: -60, by: Self.kitchen, in: "kitchen", at: Self.at(100) + .milliseconds(500))
        let resumed = Self.rangedBeacons(engine.advance(to: Self.at(102)))
        #expect(resumed.map { $0.map(\.identity.minor) } == [[1], [1]])
    }
}
