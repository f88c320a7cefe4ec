import Foundation

/// A real scanner run as a trace: starksm64's four Raspberry Pi scanners, one per room, with iBeacons carried between
/// rooms by hand (Tests/Fixtures/monitoring, extracted from starksm64/RaspberryPiBeaconParser, Apache-2.0), and the
/// ground truth from the movement timeline in that run's README. The README's times are rough, so each move is
/// widened by 10 s on both sides and scored as walking (neither room counts); the beacons never leave, so every exit
/// on these traces is a false one.
public struct RecordedTimeline: Sendable {
    public struct Move: Sendable {
        public var beacons: [UInt16]
        public var to: Int
        public var start: String
        public var end: String
    }

    public var name: String
    public var fixture: String
    /// Midnight of the run's day, UTC seconds, and the local offset its README's clock times are in.
    public var dayStartUTC: Int64
    public var utcOffsetHours: Int64
    /// The scanner (room) every beacon starts in.
    public var home: Int
    public var moves: [Move]

    static let slack = 10.0

    /// 7 March 2015 (PST): beacons at low power, 1, 2, 6 and 7 kept.
    public static let starksm64LowPower = RecordedTimeline(
        name: "starksm64 2015-03-07, 4 real scanners, beacons at low power", fixture: "starksm64-FourScannersRun1-2015-03-07.txt",
        dayStartUTC: 1_425_686_400, utcOffsetHours: -8, home: 201,
        moves: [
            Move(beacons: [1, 2], to: 204, start: "11:46:26", end: "11:47:24"),
            Move(beacons: [6], to: 202, start: "11:48:23", end: "11:49:40"),
            Move(beacons: [7], to: 203, start: "11:50:05", end: "11:51:32"),
            Move(beacons: [1], to: 201, start: "11:52:16", end: "11:53:39"),
            Move(beacons: [2], to: 201, start: "11:54:48", end: "11:55:45"),
            Move(beacons: [7], to: 201, start: "11:55:53", end: "11:56:54"),
            Move(beacons: [6], to: 201, start: "11:57:06", end: "11:58:20"),
        ])

    /// 10 March 2015 (PDT): the same moves at full power, beacons 1 and 2 kept.
    public static let starksm64FullPower = RecordedTimeline(
        name: "starksm64 2015-03-10, 4 real scanners, beacons at full power", fixture: "starksm64-FourScannersRun1-2015-03-10.txt",
        dayStartUTC: 1_425_945_600, utcOffsetHours: -7, home: 201,
        moves: [
            Move(beacons: [1, 2], to: 204, start: "12:42:10", end: "12:43:14"),
            Move(beacons: [1], to: 201, start: "12:50:56", end: "12:52:18"),
            Move(beacons: [2], to: 201, start: "12:52:30", end: "12:53:28"),
        ])

    /// UTC seconds of a README clock time.
    func seconds(_ clock: String) -> Double {
        let parts = clock.split(separator: ":").compactMap { Double($0) }
        return Double(dayStartUTC - utcOffsetHours * 3600) + parts[0] * 3600 + parts[1] * 60 + parts[2]
    }
}

public struct RecordedRunError: Error, CustomStringConvertible {
    public var description: String
}

extension RecordedTimeline {
    /// The run in `directory` as a trace: scanners in id order are receivers (and rooms) 0…3, beacons in minor order.
    public func trace(directory: String) throws -> SimulatedTrace {
        let path = (directory as NSString).appendingPathComponent(fixture)
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw RecordedRunError(description: "cannot read \(path) (run from the repository, or give --fixtures)")
        }
        var start: Int64?
        var ends: [Int: Int64] = [:]
        var rows: [(time: Int64, scanner: Int, minor: UInt16, rssi: Int)] = []
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(separator: " ")
            switch (fields.first, fields.count) {
            case ("uuid", 2): continue
            case ("start", 2): start = Int64(fields[1])
            case ("end", 3):
                if let scanner = Int(fields[1]), let end = Int64(fields[2]) { ends[scanner] = end }
            case (_, 5):
                guard let time = Int64(fields[0]), let scanner = Int(fields[1]), let minor = UInt16(fields[3]),
                    let rssi = Int(fields[4])
                else { throw RecordedRunError(description: "\(path): cannot read '\(line)'") }
                rows.append((time, scanner, minor, rssi))
            default:
                throw RecordedRunError(description: "\(path): cannot read '\(line)'")
            }
        }
        guard let start, !ends.isEmpty, !rows.isEmpty else { throw RecordedRunError(description: "\(path): no run in it") }
        let scanners = ends.keys.sorted()
        let minors = Set(rows.map(\.minor)).sorted()
        let duration = Double(ends.values.min() ?? 0) / 1000
        let origin = Double(start) / 1000
        let readings = rows.map {
            SimulatedReading(
                time: Double($0.time) / 1000, receiver: scanners.firstIndex(of: $0.scanner) ?? 0,
                beacon: minors.firstIndex(of: $0.minor) ?? 0, rssi: $0.rssi)
        }.filter { $0.time < duration }
        let truth = minors.map { minor -> [TruthInterval] in
            var intervals: [TruthInterval] = []
            var room = scanners.firstIndex(of: home) ?? 0
            var time = 0.0
            for move in moves where move.beacons.contains(minor) {
                let leaves = seconds(move.start) - origin - Self.slack
                let arrives = seconds(move.end) - origin + Self.slack
                let destination = scanners.firstIndex(of: move.to) ?? 0
                intervals.append(TruthInterval(start: time, end: leaves, room: room, walking: false))
                intervals.append(TruthInterval(start: leaves, end: arrives, room: destination, walking: true))
                room = destination
                time = arrives
            }
            intervals.append(TruthInterval(start: time, end: duration, room: room, walking: false))
            return intervals
        }
        let receivers = scanners.map { SimulatedReceiver(name: "Room\($0)", position: Point(x: 0, y: 0)) }
        return SimulatedTrace(
            readings: readings.sorted { ($0.time, $0.receiver) < ($1.time, $1.receiver) }, truth: truth,
            duration: duration, receiverOffline: scanners.map { _ in [] }, receivers: receivers)
    }
}
