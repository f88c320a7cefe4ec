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
    /// The table, computed once for every test here (about 50 s in a debug build before the fleet variants and room regions;
    /// 5 min on a loaded 2-core machine with them); a fixture missing or unreadable is
    /// every test's failure, with why, not a crash.
    static let table: Result<[PresenceSuite.Row], any Error> = Result {
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/monitoring").path
        let survey = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/flat-calib2021").path
        return try PresenceSuite.table(
            hours: 2, beacons: 10, seed: 1, room: .default,
            monitoring: try PresenceSuite.beacondMonitoring(), fixtures: fixtures, survey: try SurveyFlat.load(directory: survey))
    }
    static var rows: [PresenceSuite.Row] { (try? table.get()) ?? [] }

    @Test("the table can be made (fixtures present and readable)")
    func tableIsMade() throws {
        _ = try Self.table.get()
    }

    /// The four simulated scenarios the targets were set on; the fleet variants have their own tests below.
    static var scenarios: [String] { PresenceSuite.scenarios.filter { $0.variantOf == nil && !$0.realRadio }.map(\.name) }
    static var fleetScenarios: [String] { PresenceSuite.fleetScenarios.map(\.name) }
    static var latencyScenarios: [String] { PresenceSuite.fleetScenarios.filter { $0.fleet.latency != nil }.map(\.name) }
    static var offlineScenarios: [String] { PresenceSuite.fleetScenarios.filter { $0.fleet.offline != nil }.map(\.name) }

    /// The row of `algorithm` on the scenario whose trace `variant` is.
    static func original(of variant: String, algorithm: String) throws -> PresenceSuite.Row {
        let scenario = try #require(PresenceSuite.scenarios.first { $0.name == variant })
        let base = PresenceSuite.scenarios[try #require(scenario.variantOf)].name
        return try #require(Self.rows.first { $0.scenario == base && $0.algorithm == algorithm })
    }

    static func row(_ scenario: String, _ algorithm: String) throws -> PresenceSuite.Row {
        try #require(Self.rows.first { $0.scenario == scenario && $0.algorithm == algorithm })
    }

    static let beacondRows = [PresenceSuite.beacondName, PresenceSuite.calibratedName]

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

    @Test(
        "exits at most half as late as the best peer with no false exit (the noisy trace: shorter, not half)",
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

    /// The real flat (issue 41's yardstick): far below the simulated scenarios' 91–99 %. Asserted as it stands, per
    /// fold of the survey drive's minutes, so a change cannot make it worse unseen; docs/presence.md has the table.
    @Test(
        "real flat: right room as it stands (at least 61 % uncalibrated, 65 % calibrated on the other minutes), calibration cuts the flaps",
        arguments: ["even", "odd"])
    func realFlat(fold: String) throws {
        let name = PresenceSuite.surveyName(fold: fold, fittedOn: fold == "even" ? "odd" : "even")
        let (found, calibrated, _) = Self.rows(name)
        let beacond = try #require(found)
        let fitted = try #require(calibrated)
        #expect(beacond.correctRoomRate >= 0.61)
        #expect(fitted.correctRoomRate >= 0.65)
        #expect(fitted.flapsPerHour <= beacond.flapsPerHour * 0.7)
        #expect(beacond.falseExitsPerHour == 0, "the robot never leaves the flat")
    }

    /// The real flat's radio on the simulated floor and on the flat's own plan, with people walking: where beacond
    /// stands once the simulator's radio is the real one (docs/presence.md, "Is the simulator the real flat?").
    /// Asserted as it stands, so it cannot grow worse unseen; the targets are for positions, not yet built.
    @Test("the real flat's radio: right room as it stands (87 % on the simulated floor, 76 % on the flat's plan), no false exit")
    func realRadio() throws {
        let floor = try #require(PresenceSuite.realRadioScenarios.first).name
        let (onFloor, calibratedOnFloor, _) = Self.rows(floor)
        let (inFlat, calibratedInFlat, _) = Self.rows(PresenceSuite.flatPeopleName)
        let (a, b, c, d) = (try #require(onFloor), try #require(calibratedOnFloor), try #require(inFlat), try #require(calibratedInFlat))
        #expect(a.correctRoomRate >= 0.87 && b.correctRoomRate >= 0.96)
        #expect(c.correctRoomRate >= 0.76 && d.correctRoomRate >= 0.79)
        for row in [a, b, c, d] {
            #expect(row.falseExitsPerHour == 0, "\(row.scenario): \(row.algorithm)")
            #expect(row.missedExits == 0, "\(row.scenario): \(row.algorithm)")
        }
        // The plain radio's typical trace, the same floor, walkers and receivers: the real radio costs beacond over 5
        // points of right room.
        let typical = try #require(Self.rows(PresenceSuite.scenarios[0].name).beacond)
        #expect(typical.correctRoomRate - a.correctRoomRate > 0.05)
    }

    // MARK: A fleet of Wi-Fi receivers (issue 22)

    @Test(
        "no false exit when readings come late, out of order, in bursts of loss, or with a receiver offline",
        arguments: fleetScenarios)
    func fleetNoFalseExits(scenario: String) throws {
        // A beacon gone while a receiver that heard it lately is offline may rightly wait for it (blind, not absent).
        let blindAllowed = PresenceSuite.scenarios.first { $0.name == scenario }?.fleet.offline != nil
        for algorithm in Self.beacondRows {
            let row = try Self.row(scenario, algorithm)
            #expect(row.falseExitsPerHour == 0, "\(algorithm): \(row.falseExitsPerHour) false exits/h")
            if !blindAllowed { #expect(row.missedExits == 0, "\(algorithm): \(row.missedExits) departures never exited") }
        }
    }

    /// Exit delays with 5–60 ms reading latency match those without, within one advertising interval (the issue's
    /// done-when): compared on one trace, for each advertising interval its beacons have, median and 95th percentile.
    /// Scores are sampled every second, so a difference under 1 s cannot be seen: the bound is at least 1 s.
    @Test("exit delays with 5–60 ms reading latency within one advertising interval of those without", arguments: latencyScenarios)
    func latencyKeepsExitDelays(scenario: String) throws {
        for algorithm in Self.beacondRows {
            let late = try Self.row(scenario, algorithm)
            let timely = try Self.original(of: scenario, algorithm: algorithm)
            for interval in Set(late.advertisingIntervals).sorted() {
                func delays(_ row: PresenceSuite.Row) -> [Double] {
                    row.exits.filter { row.advertisingIntervals[$0.beacon] == interval }.compactMap(\.delay)
                }
                for quantile in [0.5, 0.95] {
                    let with = try #require(PresenceScore.quantile(quantile, of: delays(late)))
                    let without = try #require(PresenceScore.quantile(quantile, of: delays(timely)))
                    #expect(
                        abs(with - without) <= max(interval, 1),
                        "\(algorithm), \(interval) s adverts, p\(Int(quantile * 100)): \(with) s late against \(without) s")
                }
            }
        }
    }

    /// A beacon that online receivers place in another room leaves its old room's region on time, whatever an
    /// offline receiver of a third room heard: compared with the same trace and that receiver online, over the walks
    /// from one room to another that neither start nor end in the offline receiver's room.
    @Test("a room region's exit is not held by an offline receiver of an unrelated room", arguments: offlineScenarios)
    func roomExitNotHeldByUnrelatedReceiver(scenario: String) throws {
        let offline = try #require(PresenceSuite.scenarios.first { $0.name == scenario }?.fleet.offline)
        // Only beacond's uncalibrated row monitors regions per room (`Scenario.roomRegions`).
        for algorithm in [PresenceSuite.beacondName] {
            func walks(_ row: PresenceSuite.Row) -> [ExitRecord] {
                row.roomExits.filter { $0.to != nil && $0.to != offline.receiver && $0.room != offline.receiver }
            }
            let held = walks(try Self.row(scenario, algorithm))
            let online = walks(try Self.original(of: scenario, algorithm: algorithm))
            let p95 = try #require(PresenceScore.quantile(0.95, of: held.compactMap(\.delay)))
            let onlineP95 = try #require(PresenceScore.quantile(0.95, of: online.compactMap(\.delay)))
            // One advertising interval (1 s) of slack, as for latency.
            #expect(p95 <= onlineP95 + 1, "\(algorithm): room exit p95 \(p95) s against \(onlineP95) s with the receiver online")
            #expect(
                held.count { $0.delay == nil } <= online.count { $0.delay == nil },
                "\(algorithm): room exits never made")
        }
    }
}
