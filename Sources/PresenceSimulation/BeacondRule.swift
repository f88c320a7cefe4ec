public import BeaconKit
import Foundation

/// beacond's room presence, run as the daemon runs it: the real `RoomLocator` (calibrated distances, margin and dwell
/// hysteresis, unknown while a room's receivers are offline) and the real `RegionMonitor` (one region per beacon;
/// adaptive exits; a receiver offline makes what only it heard unknown). Receivers are remote receivers 1…n.
public struct BeacondRule: PresenceAlgorithm {
    public let name: String
    let rooms: [Int]
    let calibrations: [ReceiverCalibration]
    let measuredPower: Double
    var monitor: RegionMonitor<Int>
    var locator: RoomLocator<Int>
    var started: Set<Int> = []
    var events: [MonitoringEvent<Int>] = []

    /// `rooms`: the room of each receiver; `calibrations`: each receiver's (uncalibrated when empty).
    public init(name: String, rooms: [Int], room: RoomConfiguration = .default, monitoring: MonitoringConfiguration,
                calibrations: [ReceiverCalibration] = [], measuredPower: Double = -59) {
        self.name = name
        self.rooms = rooms
        self.calibrations = calibrations
        self.measuredPower = measuredPower
        monitor = RegionMonitor(configuration: monitoring)
        locator = RoomLocator(configuration: room)
    }

    static func identity(_ beacon: Int) -> BeaconIdentity {
        BeaconIdentity(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: UInt16(beacon))
    }

    static func receiver(_ index: Int) -> ReceiverID { ReceiverID(rawValue: UInt32(index + 1)) }

    public mutating func observe(_ reading: SimulatedReading) {
        let now = Timestamp(secondsSinceEpoch: reading.time)
        if started.insert(reading.beacon).inserted {
            let region = BeaconRegion(identifier: "beacon\(reading.beacon)",
                                      constraint: BeaconIdentityConstraint(Self.identity(reading.beacon)))
            monitor.startMonitoring(region, for: reading.beacon, at: now, into: &events)
        }
        let calibration = calibrations.indices.contains(reading.receiver) ? calibrations[reading.receiver] : .uncalibrated
        if let distance = calibration.distance(rssi: Double(reading.rssi), measuredPower: measuredPower) {
            locator.observe(reading.beacon, distance: distance, by: Self.receiver(reading.receiver),
                            in: String(rooms[reading.receiver]), at: now)
        }
        monitor.observe(Self.identity(reading.beacon), rssi: Int8(clamping: reading.rssi), by: Self.receiver(reading.receiver),
                        at: now, into: &events)
        events.removeAll(keepingCapacity: true)
    }

    public mutating func receiverWentOffline(_ receiver: Int, at time: Double) {
        locator.receiverWentOffline(Self.receiver(receiver))
        monitor.receiverWentOffline(Self.receiver(receiver), at: Timestamp(secondsSinceEpoch: time), into: &events)
        events.removeAll(keepingCapacity: true)
    }

    public mutating func receiverCameOnline(_ receiver: Int, at time: Double) {
        locator.receiverCameOnline(Self.receiver(receiver))
        monitor.receiverCameOnline(Self.receiver(receiver), at: Timestamp(secondsSinceEpoch: time), into: &events)
        events.removeAll(keepingCapacity: true)
    }

    public mutating func answer(for beacon: Int, at time: Double) -> PresenceAnswer {
        monitor.advance(to: Timestamp(secondsSinceEpoch: time), into: &events)
        events.removeAll(keepingCapacity: true)
        switch monitor.state(of: beacon) {
        case .inside?:
            switch locator.placement(of: beacon) {
            case .room(let name)?: return Int(name).map { .room($0) } ?? .unknown
            case .unknown?, nil: return .unknown
            }
        case .unknown?: return .unknown
        case .outside?, nil: return .away
        }
    }
}
