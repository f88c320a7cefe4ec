public import BeaconKit
import Foundation

/// beacond's room presence, run as the daemon runs it: the real `RoomLocator` (calibrated distances, margin and dwell
/// hysteresis, unknown while a room's receivers are offline) and the real `RegionMonitor` (a region per beacon, and one
/// per beacon and room with `BeaconRegion.room`, fed each sighting's placement as `BeaconEngine.observe` feeds it;
/// adaptive exits; a receiver offline makes what only it heard unknown). Receivers are remote receivers 1…n.
public struct BeacondRule: PresenceAlgorithm {
    public let name: String
    let rooms: [Int]
    let calibrations: [ReceiverCalibration]
    let measuredPower: Double
    /// A beacon's region (`room` nil) or its region in one room.
    struct RegionKey: Hashable, Sendable {
        var beacon: Int
        var room: Int?
    }
    var monitor: RegionMonitor<RegionKey>
    var locator: RoomLocator<Int>
    var started: Set<Int> = []
    /// Whether each beacon also has a region per room (for the room-exit columns). They cost a region per room on
    /// every sighting, so the suite has them only where a target reads them.
    let roomRegions: Bool
    var events: [MonitoringEvent<RegionKey>] = []

    /// `rooms`: the room of each receiver; `calibrations`: each receiver's (uncalibrated when empty).
    public init(
        name: String, rooms: [Int], room: RoomConfiguration = .default, monitoring: MonitoringConfiguration,
        calibrations: [ReceiverCalibration] = [], measuredPower: Double = -59, roomRegions: Bool = true
    ) {
        self.name = name
        self.roomRegions = roomRegions
        self.rooms = rooms
        self.calibrations = calibrations
        self.measuredPower = measuredPower
        monitor = RegionMonitor(configuration: monitoring)
        locator = RoomLocator(configuration: room)
    }

    /// Parsed once: parsing it per reading was a fifth of the suite's time.
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    static func identity(_ beacon: Int) -> BeaconIdentity {
        BeaconIdentity(uuid: uuid, major: 1, minor: UInt16(beacon))
    }

    static func receiver(_ index: Int) -> ReceiverID { ReceiverID(rawValue: UInt32(index + 1)) }

    public mutating func observe(_ reading: SimulatedReading) {
        let now = Timestamp(secondsSinceEpoch: reading.time)
        if started.insert(reading.beacon).inserted {
            let constraint = BeaconIdentityConstraint(Self.identity(reading.beacon))
            monitor.startMonitoring(
                BeaconRegion(identifier: "beacon\(reading.beacon)", constraint: constraint),
                for: RegionKey(beacon: reading.beacon), at: now, into: &events)
            for room in Set(rooms).sorted() where roomRegions {
                monitor.startMonitoring(
                    BeaconRegion(
                        identifier: "beacon\(reading.beacon)@\(room)", constraint: constraint,
                        room: String(room)),
                    for: RegionKey(beacon: reading.beacon, room: room), at: now, into: &events)
            }
        }
        let calibration = calibrations.indices.contains(reading.receiver) ? calibrations[reading.receiver] : .uncalibrated
        if let distance = calibration.distance(rssi: Double(reading.rssi), measuredPower: measuredPower) {
            locator.observe(
                reading.beacon, distance: distance, by: Self.receiver(reading.receiver),
                in: String(rooms[reading.receiver]), at: now)
        }
        let placed: SightingRoom =
            switch locator.placement(of: reading.beacon) {
            case .room(let name)?: .room(name)
            case .unknown?: .unknown
            case nil: .unplaced
            }
        monitor.observe(
            Self.identity(reading.beacon), rssi: Int8(clamping: reading.rssi), by: Self.receiver(reading.receiver),
            in: String(rooms[reading.receiver]), room: placed, at: now, into: &events)
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
        switch monitor.state(of: RegionKey(beacon: beacon)) {
        case .inside?:
            switch locator.placement(of: beacon) {
            case .room(let name)?: return Int(name).map { .room($0) } ?? .unknown
            case .unknown?, nil: return .unknown
            }
        case .unknown?: return .unknown
        case .outside?, nil: return .away
        }
    }

    public var scoresRoomExits: Bool { roomRegions }

    /// The beacon's region in `room` is outside (asked after `answer(for:at:)` moved the monitor's clock).
    public mutating func hasLeft(_ room: Int, beacon: Int, answer: PresenceAnswer) -> Bool {
        switch monitor.state(of: RegionKey(beacon: beacon, room: room)) {
        case .inside?, .unknown?: false
        case .outside?, nil: true
        }
    }
}
