import Foundation
public import BeaconKit

/// A real flat surveyed by a robot (Tests/Fixtures/flat-calib2021: M. Kolakowski, "BLE RSS dataset for fingerprinting
/// radio map calibration", CC BY 4.0, see its README): six receivers in five rooms, one tag carried by the robot, its
/// position known to centimetres, about three rows a second.
///
/// As a trace: receivers 0…5 in `receivers.csv` order, each in the room `rooms.csv` puts it in; one beacon; each row's
/// RSSIs are readings at the row's time (rounded to whole dBm, as receivers report them; an empty cell is a miss);
/// the truth is the room whose box holds the robot. Where no box does (a wall or doorway between boxes) the robot
/// counts as walking, so that moment is not scored.
public struct SurveyFlat: Sendable {
    public struct Receiver: Hashable, Sendable {
        public var id: Int
        public var x: Double
        public var y: Double
        public var z: Double
    }

    public struct Room: Hashable, Sendable {
        public var name: String
        public var x0: Double, y0: Double, x1: Double, y1: Double

        public func contains(x: Double, y: Double) -> Bool { x >= x0 && x < x1 && y >= y0 && y < y1 }
    }

    public struct Row: Hashable, Sendable {
        /// Seconds from the first row, the breaks between sessions shortened to `sessionBreak`.
        public var time: Double
        /// Seconds from the first row on the robot's own clock, breaks included (for what stays put between sessions).
        public var clock: Double
        public var x: Double
        public var y: Double
        /// Which way the robot faces, radians from the x axis.
        public var heading: Double
        /// Per receiver, dBm; nil: a miss.
        public var rssi: [Double?]
    }

    public var receivers: [Receiver]
    public var rooms: [Room]
    /// The room (index into `rooms`) of each receiver.
    public var receiverRooms: [Int]
    public var rows: [Row]

    /// Rows come every third of a second (a few are 0.7 s apart); a longer gap is a break between the drive's
    /// sessions, shortened to `sessionBreak` and not scored.
    static let rowInterval = 0.3
    static let longestRowGap = 0.8
    static let sessionBreak = 1.0

    /// The tag's height is not in the dataset: taken as the floor's, so distances are slightly long.
    public static let tagHeight = 0.0

    /// Reads `receivers.csv`, `rooms.csv` and `survey.csv` in `directory`.
    public static func load(directory: String) throws -> SurveyFlat {
        func table(_ name: String) throws -> (header: [String], rows: [[String]]) {
            let path = (directory as NSString).appendingPathComponent(name)
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                throw RecordedRunError(description: "cannot read \(path) (run from the repository, or give --survey)")
            }
            let lines = text.split(whereSeparator: \.isNewline).map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
            guard let header = lines.first else { throw RecordedRunError(description: "\(path) is empty") }
            // A short or long row is an error naming its line, never a row skipped or a crash.
            if let bad = lines.dropFirst().firstIndex(where: { $0.count != header.count }) {
                throw RecordedRunError(
                    description: "\(name):\(bad + 1): \(lines[bad].count) fields, the header has \(header.count)")
            }
            return (header, Array(lines.dropFirst()))
        }
        func column(_ table: (header: [String], rows: [[String]]), _ name: String, file: String) throws -> Int {
            guard let index = table.header.firstIndex(of: name) else {
                throw RecordedRunError(description: "\(file) has no column '\(name)'")
            }
            return index
        }
        func number(_ text: String, _ file: String, _ line: Int) throws -> Double {
            guard let value = Double(text), value.isFinite else {
                throw RecordedRunError(description: "\(file):\(line + 2): '\(text)' is not a number")
            }
            return value
        }
        let receiverTable = try table("receivers.csv")
        let (id, rx, ry, rz) = (
            try column(receiverTable, "id", file: "receivers.csv"), try column(receiverTable, "x", file: "receivers.csv"),
            try column(receiverTable, "y", file: "receivers.csv"), try column(receiverTable, "z", file: "receivers.csv")
        )
        var receivers: [Receiver] = []
        for (line, fields) in receiverTable.rows.enumerated() {
            guard let identifier = Int(fields[id]) else { throw RecordedRunError(description: "receivers.csv:\(line + 2): bad id") }
            receivers.append(
                Receiver(
                    id: identifier, x: try number(fields[rx], "receivers.csv", line), y: try number(fields[ry], "receivers.csv", line),
                    z: try number(fields[rz], "receivers.csv", line)))
        }
        let roomTable = try table("rooms.csv")
        let names = try column(roomTable, "room", file: "rooms.csv")
        let bounds = try ["x0", "y0", "x1", "y1"].map { try column(roomTable, $0, file: "rooms.csv") }
        let members = try column(roomTable, "receivers", file: "rooms.csv")
        var rooms: [Room] = []
        var receiverRooms = Array(repeating: -1, count: receivers.count)
        for (line, fields) in roomTable.rows.enumerated() {
            let box = try bounds.map { try number(fields[$0], "rooms.csv", line) }
            rooms.append(Room(name: fields[names], x0: box[0], y0: box[1], x1: box[2], y1: box[3]))
            for member in fields[members].split(separator: " ") {
                guard let index = receivers.firstIndex(where: { String($0.id) == member }) else {
                    throw RecordedRunError(description: "rooms.csv:\(line + 2): no receiver \(member) in receivers.csv")
                }
                receiverRooms[index] = rooms.count - 1
            }
        }
        if let lost = receiverRooms.firstIndex(of: -1) {
            throw RecordedRunError(description: "rooms.csv puts receiver \(receivers[lost].id) in no room")
        }
        let survey = try table("survey.csv")
        let (ts, sx, sy, sh) = (
            try column(survey, "ts", file: "survey.csv"), try column(survey, "x", file: "survey.csv"), try column(survey, "y", file: "survey.csv"),
            try column(survey, "heading", file: "survey.csv")
        )
        let rssiColumns = try receivers.map { try column(survey, "rssi_\($0.id)", file: "survey.csv") }
        var rows: [Row] = []
        var previous: Double?
        var start: Double?
        var time = 0.0
        for (line, fields) in survey.rows.enumerated() {
            let seconds = try number(fields[ts], "survey.csv", line) / 1e9
            if start == nil { start = seconds }
            // The drive is four sessions with breaks of 20 to 90 minutes: each break becomes one second (the robot
            // is somewhere else when the next session starts, a move that is not scored).
            if let previous { time += min(max(0, seconds - previous), Self.sessionBreak) }
            previous = seconds
            rows.append(
                Row(
                    time: time, clock: seconds - (start ?? seconds), x: try number(fields[sx], "survey.csv", line),
                    y: try number(fields[sy], "survey.csv", line), heading: try number(fields[sh], "survey.csv", line),
                    rssi: try rssiColumns.map { fields[$0].isEmpty ? nil : try number(fields[$0], "survey.csv", line) }))
        }
        guard !rows.isEmpty else { throw RecordedRunError(description: "survey.csv has no rows") }
        return SurveyFlat(receivers: receivers, rooms: rooms, receiverRooms: receiverRooms, rows: rows)
    }

    /// The room whose box holds (x, y); nil between boxes.
    public func room(x: Double, y: Double) -> Int? { rooms.firstIndex { $0.contains(x: x, y: y) } }

    /// Metres from the tag at `row` to `receiver`.
    public func distance(_ row: Row, to receiver: Int) -> Double {
        let place = receivers[receiver]
        let (dx, dy, dz) = (row.x - place.x, row.y - place.y, place.z - Self.tagHeight)
        return (dx * dx + dy * dy + dz * dz).squareRoot()
    }

    /// The rows `range` as a trace, its clock starting at the range's first row; only the rows `scored` says are
    /// judged (the others' time counts as walking, unscored).
    public func trace(_ range: Range<Int>? = nil, scored: (Int) -> Bool = { _ in true }) -> SimulatedTrace {
        let range = range ?? rows.indices
        guard let first = rows[range].first, let last = rows[range].last else {
            return SimulatedTrace(readings: [], truth: [[]], duration: 0, receiverOffline: receivers.map { _ in [] })
        }
        var readings: [SimulatedReading] = []
        var truth: [TruthInterval] = []
        for index in range {
            let row = rows[index]
            let time = row.time - first.time
            for (receiver, rssi) in row.rssi.enumerated() {
                guard let rssi else { continue }
                readings.append(SimulatedReading(time: time, receiver: receiver, beacon: 0, rssi: Int(rssi.rounded())))
            }
            // The robot is in the room of its box until the next row; a break between sessions is not scored.
            let next = index + 1 < range.upperBound ? rows[index + 1].time - first.time : time + Self.rowInterval
            let end = next - time > Self.longestRowGap ? time + Self.rowInterval : next
            let room = room(x: row.x, y: row.y)
            let counts = scored(index)
            if let previous = truth.last, previous.room == room, previous.walking == (room == nil), previous.scored == counts,
                previous.end == time
            {
                truth[truth.count - 1].end = end
            } else {
                truth.append(TruthInterval(start: time, end: end, room: room, walking: room == nil, scored: counts))
            }
            if next > end { truth.append(TruthInterval(start: end, end: next, room: nil, walking: true, scored: counts)) }
        }
        let simulated = receivers.map { SimulatedReceiver(name: "receiver \($0.id)", position: Point(x: $0.x, y: $0.y)) }
        return SimulatedTrace(
            readings: readings, truth: [truth], duration: last.time - first.time + Self.rowInterval,
            receiverOffline: receivers.map { _ in [] }, receivers: simulated)
    }

    /// Each receiver's calibration fitted on the rows `range` (the rows judged must be others): its RSSIs against the
    /// robot's true distance, at the measured power the rules assume. Where the log-distance model does not fit the
    /// rows (an exponent outside 1…6: on the drive's second half, receivers 1, 4 and 6 barely change with distance),
    /// the receiver stays uncalibrated, as `beaconctl calibrate` would refuse such a fit.
    public func calibrations(fittedOn range: some Collection<Int>, measuredPower: Double = -59) -> [ReceiverCalibration] {
        receivers.indices.map { receiver in
            let samples = range.compactMap { index -> CalibrationSample? in
                let row = rows[index]
                guard let rssi = row.rssi[receiver] else { return nil }
                return CalibrationSample(distance: max(0.5, distance(row, to: receiver)), rssi: rssi, measuredPower: measuredPower)
            }
            return (try? CalibrationFit.fit(samples).calibration) ?? .uncalibrated
        }
    }

    /// The drive's minutes in two interleaved folds (minutes 0, 2, 4, … of the drive and 1, 3, 5, …), for fitting on
    /// one and judging on the other: both folds cross every room the drive does, as another drive through the same
    /// flat would, where the halves split the flat itself (the sessions drove different rooms).
    public var folds: (even: [Int], odd: [Int]) {
        let even = rows.indices.filter { fold(of: $0) == 0 }
        return (even, rows.indices.filter { fold(of: $0) == 1 })
    }

    public static let foldLength = 60.0

    /// 0 or 1: the fold of row `index`.
    public func fold(of index: Int) -> Int { Int(rows[index].time / Self.foldLength) % 2 }
}
