public import BeaconKit
public import DBus
import BeacondAPI

/// `beaconctl calibrate --receivers`: receivers that hear each other (ESPresense nodes advertise themselves) are
/// reference beacons at distances the floor plan gives, so every receiver's RSSI offset and path-loss exponent is
/// fitted with no walk at all: an offset each, and the path-loss exponent of the place, shared.
public struct ReceiverMeshCalibration: Sendable {
    public let receivers: [SpotCalibration.PlanReceiver]
    /// Per listener, per receiver heard: readings by time.
    private var readings: [String: [String: [UInt64: (rssi: Double, power: Double)]]] = [:]
    /// Receivers heard or hearing that the plan does not hold (their ids on the broker), to name them.
    public private(set) var offPlan: Set<String> = []

    /// From `GetFloorPlan`'s reply; throws (with the fix) when there is no plan or it has fewer than two receivers.
    public init(plan: VarDict) throws(BeaconctlError) {
        receivers = SpotCalibration.PlanReceiver.all(in: plan)
        guard !plan.dictionaries(BeacondFloorPlanKey.floors).isEmpty else {
            throw BeaconctlError(
                exitStatus: ExitStatus.failure,
                message: "beacond has no floor plan, so receivers' distances from each other are unknown: write "
                    + "floorplan.toml (beacond.toml(5)) or import one (beaconctl floorplan import), reload, and calibrate again")
        }
        guard receivers.count >= 2 else {
            throw BeaconctlError(
                exitStatus: ExitStatus.failure,
                message: "the floor plan has \(receivers.count) receiver(s): receivers calibrate each other from two up; "
                    + "add them to floorplan.toml as [receivers.ID] with the id each publishes under")
        }
    }

    /// `ListReceiverHearings` entries: each new reading made at or after `since` (µs since the epoch) counts once.
    public mutating func add(_ entries: [VarDict], since: UInt64) {
        let known = Set(receivers.map(\.id))
        for entry in entries {
            guard let listener = entry.string(BeacondHearingKey.receiver), let heard = entry.string(BeacondHearingKey.heard),
                let rssi = entry.double(BeacondHearingKey.rssi), let power = entry.integer(BeacondHearingKey.measuredPower),
                let time = entry.integer(BeacondHearingKey.timestamp), UInt64(clamping: time) >= since
            else { continue }
            guard known.contains(listener), known.contains(heard) else {
                for id in [listener, heard] where !known.contains(id) && offPlan.count < 100 { offPlan.insert(id) }
                continue
            }
            readings[listener, default: [:]][heard, default: [:]][UInt64(clamping: time)] = (rssi, Double(power))
        }
    }

    /// What `listener` heard of each other plan receiver on its floor: the mean reading against the plan's distance.
    /// Receivers on other floors are left out: a floor between costs what the locator counts apart
    /// (`PositionConfiguration.floorLoss`), and a fit through it would count it twice.
    public func samples(for listener: SpotCalibration.PlanReceiver) -> [(heard: String, sample: CalibrationSample, readings: Int)] {
        receivers.compactMap { other in
            guard other.floor == listener.floor, let heard = readings[listener.id]?[other.id], !heard.isEmpty else { return nil }
            let rssi = heard.values.map(\.rssi).reduce(0, +) / Double(heard.count)
            let power = heard.values.map(\.power).reduce(0, +) / Double(heard.count)
            return (other.id, CalibrationSample(distance: listener.distance(to: other), rssi: rssi, measuredPower: power), heard.count)
        }
    }

    /// Readings taken, all receivers together.
    public var count: Int { readings.values.reduce(0) { $0 + $1.values.reduce(0) { $0 + $1.count } } }

    /// Each plan receiver's fit (or why none), in the plan's order: an offset each and one exponent for all
    /// (`CalibrationFit.fitTogether`). A receiver hears a handful of others, too few distances to fit an exponent of
    /// its own through the noise: on the real flat's radio, an exponent each placed tags 2.3 m off, worse than no
    /// calibration, and one shared 1.5 m (docs/position.md).
    public func fits() -> [(receiver: String, result: Result<CalibrationFit, CalibrationError>)] {
        let results = CalibrationFit.fitTogether(receivers.map { samples(for: $0).map(\.sample) })
        return zip(receivers, results).map { ($0.id, $1) }
    }
}
