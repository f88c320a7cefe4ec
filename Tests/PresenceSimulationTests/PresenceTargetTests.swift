import BeaconKit
import Foundation
import PresenceSimulation
import Testing

/// The targets, held on the table docs/presence.md prints (`beacond-bench presence`, seed 1, 10 beacons,
/// 2 h per simulated scenario, the recorded starksm64 runs): this fails if a change to the room locator, the adaptive
/// exits or the monitor makes beacond miss a target it meets today. Where it does not meet one, the shortfall is
/// asserted as it stands (and said in docs/presence.md), so it cannot silently grow.
@Suite("presence targets")
struct PresenceTargetTests {
    /// The table, computed once for every test here (about 50 s in a debug build); a fixture missing or unreadable is
    /// every test's failure, with why, not a crash.
    static let table: Result<[PresenceSuite.Row], any Error> = Result {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/monitoring").path
        return try PresenceSuite.table(hours: 2, beacons: 10, seed: 1, room: .default,
                                       monitoring: try PresenceSuite.beacondMonitoring(), fixtures: fixtures)
    }
    static var rows: [PresenceSuite.Row] { (try? table.get()) ?? [] }

    @Test("the table can be made (fixtures present and readable)")
    func tableIsMade() throws {
        _ = try Self.table.get()
    }

    static var scenarios: [String] { PresenceSuite.scenarios.map(\.name) }

    static func rows(_ scenario: String) -> (beacond: PresenceSuite.Row?, calibrated: PresenceSuite.Row?, peers: [PresenceSuite.Row]) {
        let rows = Self.rows.filter { $0.scenario == scenario }
        let beacond = rows.first { $0.algorithm == PresenceSuite.beacondName }
        let calibrated = rows.first { $0.algorithm == PresenceSuite.calibratedName }
        // beacond as it was before this evaluation is not a peer.
        let peers = rows.filter { !$0.algorithm.hasPrefix("beacond") }
        return (beacond, calibrated, peers)
    }

    @Test("no false exit on any simulated trace, and fewer room flaps than every peer", arguments: scenarios)
    func noFalseExitsFewerFlaps(scenario: String) throws {
        let (found, calibrated, peers) = Self.rows(scenario)
        let beacond = try #require(found)
        #expect(beacond.falseExitsPerHour == 0)
        #expect(calibrated?.falseExitsPerHour == 0)
        for peer in peers { #expect(beacond.flapsPerHour < peer.flapsPerHour, "\(peer.algorithm)") }
    }

    @Test("exits at most half as late as the best peer with no false exit (the noisy trace: shorter, not half)",
          arguments: scenarios)
    func exitDelay(scenario: String) throws {
        let (found, _, peers) = Self.rows(scenario)
        let beacond = try #require(found)
        let best = try #require(peers.filter { $0.falseExitsPerHour == 0 }.compactMap(\.exitDelayMedian).min())
        let median = try #require(beacond.exitDelayMedian)
        if scenario.hasPrefix("noisy") {
            // 50 % loss per receiver: at exit_chance 0.001 beacond waits 5 s where AltBeacon's fixed 10 s happened to
            // make no false exit in these 20 beacon-hours (docs/presence.md).
            #expect(median < best)
        } else {
            #expect(median <= best / 2, "beacond \(median) s, best peer \(best) s")
        }
        #expect(beacond.missedExits == 0)
    }

    @Test("right room: calibrated at least 93 % on every simulated trace, uncalibrated at least 91 %", arguments: scenarios)
    func rightRoom(scenario: String) throws {
        let (found, calibrated, _) = Self.rows(scenario)
        let beacond = try #require(found)
        #expect(beacond.correctRoomRate >= 0.91)
        #expect((calibrated?.correctRoomRate ?? 0) >= 0.93)
    }

    @Test("recorded runs: right room at least 94 %; false exits no more than any rule that exits within 30 s")
    func recordedRuns() throws {
        for timeline in [RecordedTimeline.starksm64FullPower, .starksm64LowPower] {
            let (found, _, peers) = Self.rows(timeline.name)
            let beacond = try #require(found)
            #expect(beacond.correctRoomRate >= 0.94, "\(timeline.name)")
            for peer in peers where peer.algorithm.hasPrefix("Bermuda") || peer.algorithm.hasPrefix("AltBeacon") {
                #expect(beacond.falseExitsPerHour <= peer.falseExitsPerHour, "\(timeline.name): \(peer.algorithm)")
            }
            // The one false exit of the low-power run: beacon 7, heard every 0.3 s, then not at all for over 30 s.
            #expect(beacond.falseExitsPerHour <= (timeline.fixture.contains("03-07") ? 1.3 : 0))
        }
    }
}
