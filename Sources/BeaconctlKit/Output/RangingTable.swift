public import DBus
public import BeaconKit
import BeacondAPI

/// `beaconctl beacons`: the latest ranging cycle of every (client, constraint), as a table on a terminal
/// or as plain lines elsewhere.
public struct RangingTable: Sendable {
    /// One `DidRangeBeacons`: who ranged what, and the beacons, nearest first (as the daemon sorted them).
    public struct Cycle: Sendable, Equatable {
        public var client: String
        public var app: String
        public var constraint: String
        public var beacons: [VarDict]
        public var time: Timestamp

        /// From `Event(DidRangeBeacons, data)`; nil for any other event.
        public init?(kind: String, data: VarDict, received: Timestamp) {
            guard kind == BeacondEventKind.didRangeBeacons else { return nil }
            client = data.string(BeacondEventKey.client) ?? "-"
            app = data.string(BeacondEventKey.appID) ?? "-"
            constraint = data.dictionary(BeacondEventKey.constraint).map(RegionText.constraint) ?? "?"
            beacons = data.dictionaries(BeacondEventKey.beacons)
            time = EventText.time(of: data, received: received)
        }

        var key: String { client + " " + constraint }
    }

    /// Latest cycle per client and constraint, in the order first seen.
    public private(set) var cycles: [Cycle] = []

    public init() {}

    public mutating func update(_ cycle: Cycle) {
        if let index = cycles.firstIndex(where: { $0.key == cycle.key }) {
            cycles[index] = cycle
        } else {
            cycles.append(cycle)
        }
    }

    static let columns: [TextTable.Column] = [
        .init("UUID"), .init("MAJOR", alignRight: true), .init("MINOR", alignRight: true), .init("RSSI", alignRight: true),
        .init("ACCURACY m", alignRight: true), .init("PROXIMITY"), .init("APP"), .init("CLIENT"),
    ]

    static func row(_ beacon: VarDict, _ cycle: Cycle) -> [String] {
        [
            RegionText.beacon(beacon), beacon.integer(BeacondKey.major).map(String.init) ?? "-",
            beacon.integer(BeacondKey.minor).map(String.init) ?? "-", beacon.integer(BeacondKey.rssi).map(String.init) ?? "?",
            RegionText.accuracy(beacon.double(BeacondKey.accuracy)), beacon.string(BeacondKey.proximity) ?? "unknown",
            cycle.app, cycle.client,
        ]
    }

    /// The whole table (for a terminal that is redrawn every cycle). With `[mqtt]` on, the beacons carry a `Room`
    /// (the receiver nearest them) and a `Receiver` (the one whose reading gave RSSI and accuracy), shown in ROOM and
    /// RECEIVER columns after PROXIMITY; with a floor plan too, a `Position`, shown in X m, Y m, FLOOR and ± m.
    public func lines(now: Timestamp, utcOffset: Int64) -> [String] {
        let extra = [(BeacondKey.room, "ROOM"), (BeacondKey.receiver, "RECEIVER")].filter { key, _ in
            cycles.contains { $0.beacons.contains { $0.string(key) != nil } }
        }
        // With a floor plan, where each beacon is on it: X, Y, FLOOR and ± (its accuracy), after ROOM.
        let positioned = cycles.contains { $0.beacons.contains { $0.dictionary(BeacondKey.position) != nil } }
        var columns = Self.columns
        columns.insert(contentsOf: extra.map { TextTable.Column($0.1) }, at: 6)
        if positioned {
            columns.insert(
                contentsOf: [.init("X m", alignRight: true), .init("Y m", alignRight: true), .init("FLOOR"), .init("± m", alignRight: true)],
                at: 6 + extra.count)
        }
        let table = TextTable(
            columns: columns,
            rows: cycles.flatMap { cycle in
                cycle.beacons.map { beacon in
                    var row = Self.row(beacon, cycle)
                    row.insert(contentsOf: extra.map { key, _ in beacon.string(key).flatMap { $0.isEmpty ? nil : $0 } ?? "-" }, at: 6)
                    if positioned { row.insert(contentsOf: Self.position(beacon), at: 6 + extra.count) }
                    return row
                }
            })
        var lines = [
            "beacons at \(TimeText.clock(now, utcOffset: utcOffset)) — \(cycles.count) ranging "
                + (cycles.count == 1 ? "request" : "requests")
        ]
        lines += table.rows.isEmpty ? ["(no beacons in range)"] : table.lines()
        return lines
    }

    /// X, Y, FLOOR and ± of a beacon's `Position`, "-" for each without one.
    static func position(_ beacon: VarDict) -> [String] {
        guard let position = beacon.dictionary(BeacondKey.position) else { return ["-", "-", "-", "-"] }
        func metres(_ key: String) -> String { position.double(key).map { String(format: "%.2f", $0) } ?? "?" }
        return [
            metres(BeacondPositionKey.x), metres(BeacondPositionKey.y), position.string(BeacondPositionKey.floor) ?? "?",
            metres(BeacondPositionKey.accuracy),
        ]
    }

    /// Plain lines for one cycle (when stdout is not a terminal): one per beacon, or one saying none.
    public static func plainLines(_ cycle: Cycle, utcOffset: Int64) -> [String] {
        let time = TimeText.clock(cycle.time, utcOffset: utcOffset)
        guard !cycle.beacons.isEmpty else { return ["\(time)  \(cycle.app)  \(cycle.constraint)  (no beacons)"] }
        return cycle.beacons.map { beacon in
            "\(time)  \(cycle.app)  \(RegionText.beacon(beacon))  " + EventText.beaconSummary(beacon)
        }
    }
}
