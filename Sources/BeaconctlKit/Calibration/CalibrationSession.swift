public import DBus
public import BeaconKit
import BeacondAPI
import Foundation

/// A reference beacon placed a known distance from one receiver: `BEACON@ROOM=METRES`, where BEACON names one beacon
/// of any kind (`UUID:MAJOR:MINOR`, `altbeacon:ID1:ID2:ID3`, `eddystone:NAMESPACE:INSTANCE`, `device:NAME`).
public struct CalibrationReference: Hashable, Sendable, CustomStringConvertible {
    /// The beacon, exactly one (a private device by the name its key was declared under).
    public var beacon: BeaconIdentityConstraint
    /// The receiver, by its room.
    public var receiver: String
    public var distance: Double

    public init(parsing text: String) throws(CalibrationReferenceError) {
        let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let distance = Double(parts[1]), distance.isFinite, distance >= 0.1, distance <= 100 else {
            throw CalibrationReferenceError(text: text, problem: "it needs =METRES after the room, 0.1 to 100 m")
        }
        let spec: RegionSpec
        do { spec = try RegionSpec(parsing: String(parts[0])) } catch { throw CalibrationReferenceError(text: text, problem: "\(error)") }
        guard spec.constraint.namesOneBeacon else {
            throw CalibrationReferenceError(
                text: text,
                problem: "a reference is one beacon: give UUID:MAJOR:MINOR, altbeacon:ID1:ID2:ID3, "
                    + "eddystone:NAMESPACE:INSTANCE or device:NAME")
        }
        guard let room = spec.room else {
            throw CalibrationReferenceError(text: text, problem: "it needs @ROOM: the receiver the distance is measured to")
        }
        beacon = spec.constraint
        receiver = room
        self.distance = distance
    }

    /// The beacon as `ListReceiverReadings` names it (`RegionText.constraint` of a reading): its text form.
    var readingName: String { beacon.description }

    public var description: String { "\(beacon)@\(receiver)=\(distance)" }
}

public struct CalibrationReferenceError: Error, Hashable, CustomStringConvertible {
    public var text: String
    public var problem: String
    public var description: String {
        "--reference '\(text)': \(problem) (e.g. --reference E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:1@kitchen=1.0)"
    }
}

/// What `beaconctl calibrate` gathers and fits: each reference's readings by its receiver, averaged, then one
/// least-squares fit per receiver (`CalibrationFit`). Pure: the command feeds it `ListReceiverReadings` replies.
public struct CalibrationSession: Sendable {
    public let references: [CalibrationReference]
    /// Readings older than this (µs since the epoch) were taken before the session began and are not counted.
    public let since: UInt64
    /// Per reference: the distinct readings seen (by timestamp), their RSSI and measured power.
    private var readings: [CalibrationReference: [UInt64: (rssi: Double, power: Double)]] = [:]

    public init(references: [CalibrationReference], since: UInt64 = 0) {
        self.references = references
        self.since = since
    }

    /// Why there is nothing to calibrate, or nil: receivers are the rooms of `[mqtt]`, so without a broker in the
    /// daemon's configuration (`GetStatus`'s MQTTBroker empty or absent) collecting for `--seconds` could only end
    /// in "no fit".
    public static func missingFleet(status: VarDict) -> String? {
        guard (status.string(BeacondStatusKey.mqttBroker) ?? "").isEmpty else { return nil }
        return "calibrate fits receivers, and receivers are the rooms of [mqtt]: there is no [mqtt] in "
            + "\(Doctor.configDirectory(status))/beacond.toml. Add [mqtt] with broker and room (docs/fleet.md), then: "
            + "sudo systemctl reload beacond; and calibrate again"
    }

    /// The same beacon named twice for one receiver: its readings cannot be at two distances at once.
    public static func duplicate(in references: [CalibrationReference]) -> CalibrationReference? {
        var seen: Set<String> = []
        return references.first { !seen.insert("\($0.beacon)@\($0.receiver)").inserted }
    }

    /// Takes one `ListReceiverReadings` reply: each new reading of a reference by its receiver counts once.
    public mutating func add(_ entries: [VarDict]) {
        for entry in entries {
            guard let receiver = entry.string(BeacondReadingKey.receiver), let rssi = entry.double(BeacondReadingKey.rssi),
                let power = entry.integer(BeacondReadingKey.measuredPower), let time = entry.integer(BeacondReadingKey.timestamp)
            else { continue }
            guard UInt64(clamping: time) >= since else { continue }
            // By the reading's kind and keys: an iBeacon reference never takes an AltBeacon's reading of the same numbers.
            let beacon = RegionText.constraint(entry)
            for reference in references where reference.readingName == beacon && reference.receiver == receiver {
                readings[reference, default: [:]][UInt64(clamping: time)] = (rssi, Double(power))
            }
        }
    }

    /// How many readings each reference has.
    public func count(of reference: CalibrationReference) -> Int { readings[reference]?.count ?? 0 }

    /// The averaged sample of each reference heard at least once.
    public func samples(for receiver: String) -> [(reference: CalibrationReference, sample: CalibrationSample, readings: Int)] {
        references.filter { $0.receiver == receiver }.compactMap { reference in
            guard let heard = readings[reference], !heard.isEmpty else { return nil }
            let rssi = heard.values.map(\.rssi).reduce(0, +) / Double(heard.count)
            let power = heard.values.map(\.power).reduce(0, +) / Double(heard.count)
            return (reference, CalibrationSample(distance: reference.distance, rssi: rssi, measuredPower: power), heard.count)
        }
    }

    /// The receivers named, in the order first named.
    public var receivers: [String] {
        var seen: [String] = []
        for reference in references where !seen.contains(reference.receiver) { seen.append(reference.receiver) }
        return seen
    }

    /// Each receiver's fit, or why it has none.
    public func fits() -> [(receiver: String, result: Result<CalibrationFit, CalibrationError>)] {
        receivers.map { receiver in
            let samples = samples(for: receiver).map(\.sample)
            return (receiver, Result { () throws(CalibrationError) in try CalibrationFit.fit(samples) })
        }
    }

    /// A table header as TOML allows it written (`[ receivers."kitchen" ] # note`), in one form: `receivers.kitchen`.
    static func tableName(_ line: Substring) -> String? {
        var text = line.trimmingCharacters(in: .whitespaces)
        guard text.hasPrefix("[") else { return nil }
        if let comment = text.firstIndex(of: "#") { text = String(text[..<comment]).trimmingCharacters(in: .whitespaces) }
        return text.filter { $0 != "[" && $0 != "]" && $0 != "\"" && $0 != "'" && !$0.isWhitespace }
    }

    /// `calibration.toml` with these receivers' sections replaced (or added) and everything else of `existing` kept.
    public static func calibrationFile(existing: String?, fits: [(receiver: String, fit: CalibrationFit)], at date: String) -> String {
        let replaced = Set(fits.map { "receivers.\($0.receiver)" })
        var kept: [String] = []
        var skipping = false
        for line in (existing ?? "").split(separator: "\n", omittingEmptySubsequences: false) {
            if let name = tableName(line) { skipping = replaced.contains(name) }
            if !skipping { kept.append(String(line)) }
        }
        while kept.last?.isEmpty == true { kept.removeLast() }
        if existing == nil {
            kept = [
                "# Receiver calibration for beacond (read at start and on reload; `beaconctl calibrate --write` updates it).",
                "# [receivers.ROOM]: rssi_offset (dB added to the receiver's RSSI) and path_loss_exponent;",
                "# [beacons]: \"UUID:MAJOR:MINOR\" (or altbeacon:, eddystone:, device: as beaconctl writes them) = measured",
                "# power (dBm at 1 m) for a beacon that advertises it wrong.",
            ]
        }
        for (receiver, fit) in fits {
            kept += [
                "", "[receivers.\(receiver)]",
                String(
                    format: "# fitted by beaconctl calibrate on %@ from %d reference reading(s): residual %.1f dB, "
                        + "median distance error %.0f %%", date, fit.sampleCount, fit.residual, fit.medianDistanceError * 100),
                String(format: "rssi_offset = %.2f", fit.calibration.rssiOffset),
                String(format: "path_loss_exponent = %.3f", fit.calibration.pathLossExponent),
            ]
        }
        return kept.joined(separator: "\n") + "\n"
    }
}
