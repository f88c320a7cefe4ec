public import BeaconKit
public import DBus
import BeacondAPI
import Foundation

/// A spot on the floor plan where the user stands with the tag (`beaconctl calibrate --at X,Y[@FLOOR]`).
public struct CalibrationSpot: Hashable, Sendable, CustomStringConvertible {
    public var x: Double
    public var y: Double
    /// The floor's id; nil: the plan's only floor.
    public var floor: String?

    /// `X,Y` or `X,Y@FLOOR`, metres on the plan.
    public init(parsing text: String) throws(CalibrationReferenceError) {
        let parts = text.split(separator: "@", maxSplits: 1).map(String.init)
        let numbers = (parts.first ?? "").split(separator: ",", omittingEmptySubsequences: false).map {
            Double($0.trimmingCharacters(in: .whitespaces))
        }
        guard numbers.count == 2, let x = numbers[0], let y = numbers[1], x.isFinite, y.isFinite else {
            throw CalibrationReferenceError(text: text, problem: "a spot is X,Y in metres on the floor plan, e.g. --at 2.5,4 (or 2.5,4@ground)")
        }
        self.x = x
        self.y = y
        floor = parts.count == 2 ? parts[1] : nil
    }

    public var description: String {
        String(format: "(%g, %g)", x, y) + (floor.map { " on \($0)" } ?? "")
    }
}

/// `beaconctl calibrate --at`: the user stands at known spots of the floor plan with one tag; every plan receiver's
/// readings of it at each spot, against the distance the plan gives, fit that receiver's RSSI offset and path-loss
/// exponent (one spot: the offset, with the default exponent). The plan comes from the daemon (`GetFloorPlan`).
public struct SpotCalibration: Sendable {
    public struct PlanReceiver: Hashable, Sendable {
        public var id: String
        public var floor: String
        public var x: Double, y: Double, z: Double
        /// floorplan.toml gives its calibration, which wins over calibration.toml's.
        public var calibratedInPlan: Bool

        /// The receivers of `GetFloorPlan`'s reply, in the plan's order.
        public static func all(in plan: VarDict) -> [PlanReceiver] {
            typealias Key = BeacondFloorPlanKey
            return plan.dictionaries(Key.receivers).compactMap { entry in
                guard let id = entry.string(Key.id), let floor = entry.string(Key.floor), let x = entry.double(Key.x),
                    let y = entry.double(Key.y), let z = entry.double(Key.z)
                else { return nil }
                return PlanReceiver(id: id, floor: floor, x: x, y: y, z: z, calibratedInPlan: entry[Key.rssiOffset] != nil)
            }
        }

        /// Metres between two receivers (at least 0.1: two in one spot say nothing of distance).
        public func distance(to other: PlanReceiver) -> Double {
            let (dx, dy, dz) = (x - other.x, y - other.y, z - other.z)
            return max((dx * dx + dy * dy + dz * dz).squareRoot(), 0.1)
        }
    }

    public let tag: BeaconIdentityConstraint
    public let spots: [CalibrationSpot]
    public let receivers: [PlanReceiver]
    /// Per floor, the height of a tag (the floor's bottom plus its tag height).
    public let tagHeights: [String: Double]
    /// Per spot, per receiver: readings by time.
    private var readings: [[String: [UInt64: (rssi: Double, power: Double)]]]

    /// From `GetFloorPlan`'s reply; throws (with the fix) when there is no plan, a spot's floor is not on it, or a
    /// spot lies outside its floor's bounds.
    public init(tag: BeaconIdentityConstraint, spots: [CalibrationSpot], plan: VarDict) throws(BeaconctlError) {
        typealias Key = BeacondFloorPlanKey
        let floors = plan.dictionaries(Key.floors)
        guard !floors.isEmpty else {
            throw BeaconctlError(
                exitStatus: ExitStatus.failure,
                message: "beacond has no floor plan, so a spot has no distances: write floorplan.toml (beacond.toml(5)) or "
                    + "import one (beaconctl floorplan import), reload, and calibrate again; or use --reference")
        }
        var heights: [String: Double] = [:]
        var bounds: [String: [Double]] = [:]
        for floor in floors {
            guard let id = floor.string(Key.id) else { continue }
            let range = floor.doubles(Key.heights)
            heights[id] = (range.first ?? 0) + (floor.double(Key.tagHeight) ?? 1)
            bounds[id] = floor.doubles(Key.bounds)
        }
        var resolved: [CalibrationSpot] = []
        for var spot in spots {
            if spot.floor == nil, heights.count == 1 { spot.floor = heights.keys.first }
            guard let floor = spot.floor, heights[floor] != nil else {
                throw BeaconctlError(
                    exitStatus: ExitStatus.usage,
                    message: "spot \(spot): "
                        + (spot.floor == nil ? "the plan has several floors" : "the plan has no floor \(spot.floor!)")
                        + ": write --at X,Y@FLOOR with one of \(heights.keys.sorted().joined(separator: ", "))")
            }
            if let box = bounds[floor], box.count == 4, !(box[0]...box[2]).contains(spot.x) || !(box[1]...box[3]).contains(spot.y) {
                throw BeaconctlError(
                    exitStatus: ExitStatus.usage,
                    message: String(format: "spot %@ is outside floor %@ (%g, %g to %g, %g)", spot.description, floor, box[0], box[1], box[2], box[3])
                )
            }
            resolved.append(spot)
        }
        self.tag = tag
        self.spots = resolved
        tagHeights = heights
        receivers = PlanReceiver.all(in: plan)
        readings = Array(repeating: [:], count: resolved.count)
    }

    /// Metres from the tag at `spot` to `receiver` (a receiver on another floor is as far as the plan says).
    public func distance(from spot: CalibrationSpot, to receiver: PlanReceiver) -> Double {
        let height = tagHeights[spot.floor ?? ""] ?? 1
        let (dx, dy, dz) = (spot.x - receiver.x, spot.y - receiver.y, height - receiver.z)
        return max((dx * dx + dy * dy + dz * dz).squareRoot(), 0.1)
    }

    /// `ListReceiverReadings` entries taken while the tag stood at spot `index`: only the tag's, by plan receivers,
    /// made at or after `since` (µs since the epoch).
    public mutating func add(_ entries: [VarDict], spot index: Int, since: UInt64) {
        let known = Set(receivers.map(\.id))
        let tagName = tag.description
        for entry in entries {
            guard let receiver = entry.string(BeacondReadingKey.receiver), known.contains(receiver),
                let rssi = entry.double(BeacondReadingKey.rssi), let power = entry.integer(BeacondReadingKey.measuredPower),
                let time = entry.integer(BeacondReadingKey.timestamp), UInt64(clamping: time) >= since,
                RegionText.constraint(entry) == tagName
            else { continue }
            readings[index][receiver, default: [:]][UInt64(clamping: time)] = (rssi, Double(power))
        }
    }

    /// Per plan receiver that heard the tag, each spot on its floor: the mean reading against its distance (a spot on
    /// another floor is heard through the floor, which the locator counts apart, `PositionConfiguration.floorLoss`).
    public func samples(for receiver: PlanReceiver) -> [(spot: CalibrationSpot, sample: CalibrationSample, readings: Int)] {
        spots.indices.compactMap { index in
            guard spots[index].floor == receiver.floor, let heard = readings[index][receiver.id], !heard.isEmpty else { return nil }
            let rssi = heard.values.map(\.rssi).reduce(0, +) / Double(heard.count)
            let power = heard.values.map(\.power).reduce(0, +) / Double(heard.count)
            return (
                spots[index], CalibrationSample(distance: distance(from: spots[index], to: receiver), rssi: rssi, measuredPower: power), heard.count
            )
        }
    }

    /// How many readings of the tag spot `index` has, all receivers together.
    public func count(at index: Int) -> Int { readings[index].values.reduce(0) { $0 + $1.count } }

    /// Each plan receiver's fit (or why none), in the plan's order.
    public func fits() -> [(receiver: String, result: Result<CalibrationFit, CalibrationError>)] {
        receivers.map { receiver in
            let samples = samples(for: receiver).map(\.sample)
            return (receiver.id, Result { () throws(CalibrationError) in try CalibrationFit.fit(samples) })
        }
    }
}

extension VarDict {
    /// The `ad` under `key`, or empty.
    func doubles(_ key: String) -> [Double] {
        guard case .array(_, let values)? = self[key]?.unwrapped else { return [] }
        return values.compactMap { value in
            if case .double(let number) = value.unwrapped { return number }
            return nil
        }
    }
}
