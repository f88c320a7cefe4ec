import BeaconKit
import Foundation

/// One RSSI-versus-distance recording of the Herald project's calibration rig
/// (Tests/Fixtures/corpus/herald-rssi-distance): a phone on a robot cable car moved away from another
/// in fixed steps, logging `time,rssi,distance` (distance in cm) for the adverts it received.
struct HeraldRecording {
    struct Row {
        var time: Timestamp
        var rssi: Int
        /// True distance in metres.
        var distance: Double
    }

    let file: String
    /// The phone that logged the RSSI (phone A for an `-A.csv` file), by model.
    let receiver: String
    /// The phone whose adverts were received.
    let transmitter: String
    let rows: [Row]

    /// Loads every `*.csv` recording in `directory` that `metadata.csv` describes, sorted by name.
    static func loadAll(from directory: URL) throws -> [HeraldRecording] {
        let phones = try table(directory.appendingPathComponent("phones.csv"))
        var models: [String: String] = [:]
        for phone in phones { if let name = phone["name"], let model = phone["model"] { models[name] = model } }
        let tests = try table(directory.appendingPathComponent("metadata.csv"))
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".csv") && $0 != "metadata.csv" && $0 != "phones.csv" }
            .sorted()
        return try files.map { file in
            guard let test = tests.first(where: { $0["filenamephonea"] == file || $0["filenamephoneb"] == file }) else {
                throw EvaluationError("\(file) is not listed in metadata.csv")
            }
            let isA = test["filenamephonea"] == file
            let receiver = test[isA ? "phoneaname" : "phonebname"] ?? "?"
            let transmitter = test[isA ? "phonebname" : "phoneaname"] ?? "?"
            return HeraldRecording(
                file: file, receiver: models[receiver] ?? receiver,
                transmitter: models[transmitter] ?? transmitter,
                rows: try rows(directory.appendingPathComponent(file)))
        }
    }

    /// The receiver's RSSI at 1 m, standing in for the iBeacon measured power (which is defined as
    /// the RSSI at 1 m): the median raw RSSI of the rows at exactly 100 cm, rounded to a whole dBm
    /// as a beacon would advertise it.
    var measuredPowerAtOneMetre: Int? {
        let atOneMetre = rows.filter { $0.distance == 1 }.map(\.rssi).sorted()
        guard !atOneMetre.isEmpty else { return nil }
        let middle = atOneMetre.count / 2
        let median =
            atOneMetre.count % 2 == 1
            ? Double(atOneMetre[middle]) : Double(atOneMetre[middle - 1] + atOneMetre[middle]) / 2
        return Int(median.rounded())
    }

    /// Rows grouped into runs at one distance, in time order: the rig's stops.
    var stops: [ArraySlice<Row>] {
        var result: [ArraySlice<Row>] = []
        var start = rows.startIndex
        for index in rows.indices.dropFirst() where rows[index].distance != rows[index - 1].distance {
            result.append(rows[start..<index])
            start = index
        }
        if start < rows.endIndex { result.append(rows[start...]) }
        return result
    }

    private static func rows(_ url: URL) throws -> [Row] {
        let lines = try String(contentsOf: url, encoding: .utf8).split(whereSeparator: \.isNewline)
        guard lines.first == "time,rssi,distance" else { throw EvaluationError("\(url.lastPathComponent): unexpected header") }
        return try lines.dropFirst().enumerated().map { offset, line in
            let fields = line.split(separator: ",")
            guard fields.count == 3, let time = timestamp(fields[0]), let rssi = Double(fields[1]),
                rssi.isFinite, let centimetres = Double(fields[2])
            else {
                throw EvaluationError("\(url.lastPathComponent) line \(offset + 2): cannot read '\(line)'")
            }
            return Row(time: time, rssi: Int(rssi.rounded()), distance: centimetres / 100)
        }
    }

    /// `2021-01-11 10:15:50` (the rig's local time; only differences matter here).
    private static func timestamp(_ text: Substring) -> Timestamp? {
        let parts = text.split(whereSeparator: { $0 == "-" || $0 == " " || $0 == ":" }).compactMap { Int64($0) }
        guard parts.count == 6 else { return nil }
        let days = daysSinceEpoch(year: parts[0], month: parts[1], day: parts[2])
        let seconds = ((days * 24 + parts[3]) * 60 + parts[4]) * 60 + parts[5]
        return Timestamp(microsecondsSinceEpoch: seconds * 1_000_000)
    }

    /// Howard Hinnant's days-from-civil (proleptic Gregorian), the inverse of `Timestamp.civilDate`.
    private static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// A header-keyed CSV without quoting (the corpus's metadata files).
    private static func table(_ url: URL) throws -> [[String: String]] {
        let lines = try String(contentsOf: url, encoding: .utf8).split(whereSeparator: \.isNewline)
        guard let header = lines.first?.split(separator: ",", omittingEmptySubsequences: false) else { return [] }
        return lines.dropFirst().map { line in
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            var row: [String: String] = [:]
            for (name, value) in zip(header, fields) {
                row[String(name)] = value.trimmingCharacters(in: .whitespaces)
            }
            return row
        }
    }
}

struct EvaluationError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
