import BeaconKit

/// What `beacond-bench memory` measures: a table of tracked beacons fed with observations.
protocol MeasuredBeaconTable {
    /// Printed with every figure, so a stand-in can never be mistaken for the engine.
    var name: String { get }
    var isStandIn: Bool { get }
    var trackedBeacons: Int { get }
    mutating func observe(_ observation: IBeaconObservation)
}

/// The table `beacond-bench memory` measures. Point this at the engine's tracked-beacon table
/// (BeaconRanger) once it is merged, through a small `MeasuredBeaconTable` conformance;
/// until then it returns the stand-in below, and every output says so.
func makeTrackedBeaconTableForMemoryBench() -> any MeasuredBeaconTable {
    StandInBeaconTable()
}

/// A STAND-IN, not the engine: a plain `Dictionary<BeaconIdentity, Entry>` holding roughly what a
/// ranging table must keep per beacon. Its figure is a floor for a dictionary-based table, not
/// a measurement of beacond.
struct StandInBeaconTable: MeasuredBeaconTable {
    struct Entry {
        var lastSeen: Timestamp
        var lastRSSI: Int8
        var measuredPower: Int8
        var smoothedRSSI: Double
        var sightings: Int
    }

    var entries: [BeaconIdentity: Entry] = [:]

    var name: String { "stand-in Dictionary<BeaconIdentity, StandInBeaconTable.Entry> (NOT BeaconRanger)" }
    var isStandIn: Bool { true }
    var trackedBeacons: Int { entries.count }

    mutating func observe(_ observation: IBeaconObservation) {
        let rssi = observation.rssi ?? AdvertisingReport.rssiNotAvailable
        entries[observation.identity, default: Entry(
            lastSeen: observation.timestamp, lastRSSI: rssi, measuredPower: observation.frame.measuredPower,
            smoothedRSSI: Double(rssi), sightings: 0)].record(observation.timestamp, rssi: rssi)
    }
}

extension StandInBeaconTable.Entry {
    /// Exponential smoothing with weight 0.2 on the new sample: an arbitrary stand-in value; it
    /// only has to touch the entry the way a ranging filter would.
    mutating func record(_ time: Timestamp, rssi: Int8) {
        lastSeen = time
        lastRSSI = rssi
        smoothedRSSI += 0.2 * (Double(rssi) - smoothedRSSI)
        sightings += 1
    }
}
