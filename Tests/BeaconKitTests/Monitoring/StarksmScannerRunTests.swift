import BeaconKit
import Testing

/// Replays real scanner runs (four Raspberry Pi scanners, one per room, beacons carried between rooms by hand)
/// through one RegionMonitor per room and holds the entries and exits to the movement timeline written in
/// Tests/Fixtures/corpus/starksm64-scanner-runs/README.md.
///
/// Tolerance: the README's times are "rough" (when the author left or returned to his computer) and the Pis'
/// clocks are not his, so every window is widened by 10 s. An entry into a room must fall within a move's
/// window; an exit may come up to `exitTimeout` after the move ended, because that is when it is due.
@Suite("RegionMonitor on starksm64's scanner runs")
struct StarksmScannerRunTests {
    static let tolerance: Duration = .seconds(10)
    static let exitTimeout: Duration = MonitoringConfiguration.default.exitTimeout

    /// One move from the README: `beacons` carried from room `from` to room `to`, passing through `via`.
    struct Move {
        var beacons: [UInt16]
        var from: Int
        var to: Int
        var via: [Int] = []
        var start: String
        var end: String
    }

    /// The README's timeline on one day in one time zone; every beacon starts in `home`.
    struct Timeline {
        var dayStartUTC: Int64
        var utcOffsetHours: Int64
        var home: Int
        var moves: [Move]

        func time(_ clock: String) -> Timestamp {
            let parts = clock.split(separator: ":").compactMap { Int64($0) }
            let seconds = parts.count == 3 ? parts[0] * 3_600 + parts[1] * 60 + parts[2] : 0
            return Timestamp(microsecondsSinceEpoch: (dayStartUTC + seconds - utcOffsetHours * 3_600) * 1_000_000)
        }

        func clock(_ timestamp: Timestamp) -> String {
            let micros = timestamp.microsecondsSinceEpoch - (dayStartUTC - utcOffsetHours * 3_600) * 1_000_000
            let seconds = micros / 1_000_000
            func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
            return "\(two(seconds / 3_600)):\(two(seconds / 60 % 60)):\(two(seconds % 60)).\(micros % 1_000_000 / 100_000)"
        }

        /// When a move's entries (`exit == false`) or exits may happen.
        func window(_ move: Move, exit: Bool) -> ClosedRange<Timestamp> {
            time(move.start) - tolerance...time(move.end) + (exit ? exitTimeout : .zero) + tolerance
        }

        func describe(_ event: MonitoringEvent<UInt16>, room: Int) -> String {
            "\(clock(event.timestamp)) \(event.kind) beacon \(event.key) in \(room)"
        }
    }

    /// 7 March 2015, Pacific Standard Time (UTC-8).
    static let lowPower = Timeline(
        dayStartUTC: 1_425_686_400, utcOffsetHours: -8, home: 201,
        moves: [
            Move(beacons: [1, 2], from: 201, to: 204, start: "11:46:26", end: "11:47:24"),
            Move(beacons: [6], from: 201, to: 202, start: "11:48:23", end: "11:49:40"),
            Move(beacons: [7], from: 201, to: 203, start: "11:50:05", end: "11:51:32"),
            Move(beacons: [1], from: 204, to: 201, via: [202], start: "11:52:16", end: "11:53:39"),
            Move(beacons: [2], from: 204, to: 201, start: "11:54:48", end: "11:55:45"),
            Move(beacons: [7], from: 203, to: 201, start: "11:55:53", end: "11:56:54"),
            // Via 203, but scanner 203 never heard beacon 6 in this run: that visit is not asserted.
            Move(beacons: [6], from: 202, to: 201, start: "11:57:06", end: "11:58:20"),
        ])

    /// 10 March 2015, Pacific Daylight Time (UTC-7).
    static let fullPower = Timeline(
        dayStartUTC: 1_425_945_600, utcOffsetHours: -7, home: 201,
        moves: [
            Move(beacons: [1, 2], from: 201, to: 204, start: "12:42:10", end: "12:43:14"),
            Move(beacons: [1], from: 204, to: 201, via: [202], start: "12:50:56", end: "12:52:18"),
            Move(beacons: [2], from: 204, to: 201, start: "12:52:30", end: "12:53:28"),
        ])

    /// Every move of the listed beacons shows up: an entry where it went (and where it passed through) within the
    /// move's window, an exit where it left (and where it passed through) within the window plus `exitTimeout`.
    static func missingTransitions(
        _ timeline: Timeline, _ events: [Int: [MonitoringEvent<UInt16>]]
    ) -> [String] {
        var missing: [String] = []
        for move in timeline.moves {
            for beacon in move.beacons {
                func expect(_ kind: MonitoringEvent<UInt16>.Kind, in room: Int) {
                    let window = timeline.window(move, exit: kind == .didExitRegion)
                    let found = events[room, default: []].contains {
                        $0.key == beacon && $0.kind == kind && window.contains($0.timestamp)
                    }
                    if !found {
                        missing.append(
                            "no \(kind) of beacon \(beacon) in \(room) between "
                                + "\(timeline.clock(window.lowerBound)) and \(timeline.clock(window.upperBound))")
                    }
                }
                expect(.didExitRegion, in: move.from)
                expect(.didEnterRegion, in: move.to)
                for room in move.via {
                    expect(.didEnterRegion, in: room)
                    expect(.didExitRegion, in: room)
                }
            }
        }
        return missing
    }

    /// Entries and exits of `beacon` in `rooms` that no move explains: outside every window of the beacon's moves
    /// (any room, since the README does not give the path walked), except entries into the home room before the
    /// beacon first left it.
    static func unexplainedTransitions(
        _ timeline: Timeline, _ events: [Int: [MonitoringEvent<UInt16>]], beacon: UInt16, rooms: [Int]
    ) -> [String] {
        let moves = timeline.moves.filter { $0.beacons.contains(beacon) }
        let firstDeparture = moves.map { timeline.time($0.start) }.min() ?? .epoch
        var unexplained: [String] = []
        for room in rooms {
            for event in events[room, default: []] where event.key == beacon {
                let exit: Bool
                switch event.kind {
                case .didEnterRegion: exit = false
                case .didExitRegion: exit = true
                default: continue
                }
                let settling = !exit && room == timeline.home && event.timestamp < firstDeparture
                if !settling && !moves.contains(where: { timeline.window($0, exit: exit).contains(event.timestamp) }) {
                    unexplained.append(timeline.describe(event, room: room))
                }
            }
        }
        return unexplained
    }

    /// Rooms whose region for `beacon` is inside when the scanners stopped.
    static func roomsInside(_ monitors: [Int: RegionMonitor<UInt16>], beacon: UInt16) -> [Int] {
        monitors.filter { $0.value.state(of: beacon) == .inside }.keys.sorted()
    }

    @Test("low-power run, presence only: every move appears, nothing else happens, all end home")
    func lowPowerRun() throws {
        let run = try StarksmScannerRun(fixture: "starksm64-FourScannersRun1-2015-03-07")
        #expect(run.beacons.map(\.minor).sorted() == [1, 2, 6, 7])
        let (monitors, events) = run.replay(.default)
        let missing = Self.missingTransitions(Self.lowPower, events)
        #expect(missing.isEmpty, "\(missing)")
        var unexplained: [String] = []
        for beacon: UInt16 in [1, 2, 6] {
            unexplained += Self.unexplainedTransitions(Self.lowPower, events, beacon: beacon, rooms: [201, 202, 203, 204])
        }
        // Beacon 7 sat in 201 through reception gaps of 66 s (from 11:47:20) and 53 s (from 11:57:18), so any
        // exit timeout under a minute reports it leaving 201 twice; its other rooms are held to the timeline.
        unexplained += Self.unexplainedTransitions(Self.lowPower, events, beacon: 7, rooms: [202, 203, 204])
        #expect(unexplained.isEmpty, "\(unexplained)")
        for beacon: UInt16 in [1, 2, 6, 7] {
            #expect(Self.roomsInside(monitors, beacon: beacon) == [201], "beacon \(beacon)")
        }
    }

    @Test("full-power run: hysteresis follows the moves that presence alone cannot")
    func fullPowerRun() throws {
        let run = try StarksmScannerRun(fixture: "starksm64-FourScannersRun1-2015-03-10")
        #expect(run.beacons.map(\.minor) == [1, 2])
        // Thresholds read off this run: a beacon beside a scanner measures -60 to -72 dBm there, while the same
        // beacon in another room measures -82 to -100 dBm at that scanner.
        let banded = try MonitoringConfiguration(
            hysteresis: try RSSIHysteresis(enterAtOrAbove: -75, absentBelow: -80))
        let (monitors, events) = run.replay(banded)
        let missing = Self.missingTransitions(Self.fullPower, events)
        #expect(missing.isEmpty, "\(missing)")
        var unexplained: [String] = []
        for beacon: UInt16 in [1, 2] {
            unexplained += Self.unexplainedTransitions(Self.fullPower, events, beacon: beacon, rooms: [201, 202, 203, 204])
            #expect(Self.roomsInside(monitors, beacon: beacon) == [201], "beacon \(beacon)")
        }
        #expect(unexplained.isEmpty, "\(unexplained)")

        // Without hysteresis every scanner hears the full-power beacons across rooms: beacon 2 never leaves 201
        // and ends "inside" three rooms at once.
        let (presenceMonitors, presenceEvents) = run.replay(.default)
        #expect(!presenceEvents[201, default: []].contains { $0.key == 2 && $0.kind == .didExitRegion })
        #expect(Self.roomsInside(presenceMonitors, beacon: 2).count >= 3)
    }
}
