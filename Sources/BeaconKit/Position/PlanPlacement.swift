/// How rooms follow positions.
public struct PlanRoomConfiguration: Hashable, Sendable {
    /// A position in another room moves the beacon there once it has stayed in it this long (one stray fix through a
    /// wall moves nothing).
    public var dwell: Duration
    /// …or at once when it lies this far (metres) inside the other room's walls: a beacon plainly in the middle of a
    /// room is not kept out of it.
    public var depth: Double
    /// Metres: a position less sure than this places the beacon in no room (unknown), never in a confident wrong one.
    public var maximumAccuracy: Double
    /// A beacon's position is worked out again at most this often; readings in between only update the smoothing.
    public var interval: Duration

    /// Chosen on the real flat's survey (docs/position.md, `beacond-bench position`).
    public static let `default` = PlanRoomConfiguration(dwell: .seconds(3), depth: 0.5, maximumAccuracy: 6.0, interval: .seconds(1))

    public init(dwell: Duration, depth: Double, maximumAccuracy: Double, interval: Duration) {
        self.dwell = dwell
        self.depth = depth
        self.maximumAccuracy = maximumAccuracy
        self.interval = interval
    }
}

/// Beacons placed on a floor plan (issue 41): every plan receiver's readings go to a `PositionLocator`, and each
/// beacon's room is the plan's room holding its position, with hysteresis (`PlanRoomConfiguration`). Receivers are
/// named as the broker names them; a receiver not on the plan places nothing. Pure and clocked.
public struct PlanPlacement<Beacon: Hashable & Sendable>: Sendable {
    public let plan: FloorPlan
    public let rooms: PlanRoomConfiguration
    public private(set) var locator: PositionLocator<Beacon>
    /// The locator's number for each plan receiver.
    private let numbers: [String: ReceiverID]

    struct Track: Sendable {
        var position: Position?
        var computed: Int64
        var room: SightingRoom
        var candidate: (room: SightingRoom, since: Int64)?
    }

    private var tracks: [Beacon: Track] = [:]

    /// `calibrations`: by receiver id, for receivers whose plan entry has none (`calibration.toml`'s).
    public init(
        plan: FloorPlan, calibrations: [String: ReceiverCalibration] = [:], positions: PositionConfiguration = .default,
        rooms: PlanRoomConfiguration = .default, capacity: Int = 10_000
    ) {
        self.plan = plan
        self.rooms = rooms
        var numbers: [String: ReceiverID] = [:]
        let placed = plan.receivers.enumerated().map { index, receiver in
            let number = ReceiverID(rawValue: UInt32(index + 1))
            numbers[receiver.id] = number
            return PlacedReceiver(
                id: number, x: receiver.x, y: receiver.y, z: receiver.z,
                calibration: receiver.calibration ?? calibrations[receiver.id] ?? .uncalibrated, floor: receiver.floor)
        }
        self.numbers = numbers
        locator = PositionLocator(floors: plan.locatorFloors, receivers: placed, configuration: positions, capacity: capacity)
    }

    /// Whether `receiver` is on the plan.
    public func places(_ receiver: String) -> Bool { numbers[receiver] != nil }

    /// `receiver` heard `beacon` at `rssi` dBm (the beacon's RSSI at one metre being `measuredPower`). False when the
    /// receiver is not on the plan.
    @discardableResult
    public mutating func observe(_ beacon: Beacon, rssi: Double, measuredPower: Double, by receiver: String, at now: Timestamp) -> Bool {
        guard let number = numbers[receiver] else { return false }
        locator.observe(beacon, rssi: rssi, measuredPower: measuredPower, by: number, at: now)
        return true
    }

    /// Works out where `beacon` is, at most once per `interval`, and moves its room when the position has been in
    /// another long enough (or lies deep in it). Returns the room.
    @discardableResult
    public mutating func update(_ beacon: Beacon, at now: Timestamp) -> SightingRoom {
        let time = now.microsecondsSinceEpoch
        if let track = tracks[beacon], time - track.computed < rooms.interval.wholeMicroseconds, time >= track.computed {
            return track.room
        }
        // No plan receiver heard it lately (or only receivers off the plan do): not placed, so a room's region takes
        // nothing from it and exits in its time; its track goes, and the next position places it afresh.
        guard let position = locator.position(of: beacon, at: now) else {
            tracks[beacon] = nil
            return .unplaced
        }
        guard tracks[beacon] != nil || tracks.count < locator.capacity else { return .unplaced }
        var track = tracks[beacon] ?? Track(position: nil, computed: time, room: .unplaced, candidate: nil)
        track.computed = time
        track.position = position
        defer { tracks[beacon] = track }
        let point = FloorPlan.Point(x: position.x, y: position.y)
        let sure = position.accuracy <= rooms.maximumAccuracy
        let found = plan.room(at: point, floor: position.floor)
        // Too unsure: unknown (a room's region stays as it was, never a confident wrong room). In no drawn room (a hall
        // left out of the plan): in none, so rooms' regions exit in their time.
        let seen: SightingRoom = sure ? found.map { .room($0.id) } ?? .unplaced : .unknown
        if seen == track.room {
            track.candidate = nil
        } else if track.room == .unplaced {
            track.room = seen
            track.candidate = nil
        } else if sure, let found, found.distanceToWall(point) >= rooms.depth {
            track.room = seen
            track.candidate = nil
        } else if let candidate = track.candidate, candidate.room == seen {
            if time - candidate.since >= rooms.dwell.wholeMicroseconds {
                track.room = seen
                track.candidate = nil
            }
        } else if rooms.dwell <= .zero {
            track.room = seen
        } else {
            track.candidate = (seen, time)
        }
        return track.room
    }

    /// The position last worked out for `beacon` (by `update`).
    public func position(of beacon: Beacon) -> Position? { tracks[beacon]?.position }

    /// The room `update` last gave `beacon`; `.unplaced` before any.
    public func room(of beacon: Beacon) -> SightingRoom { tracks[beacon]?.room ?? .unplaced }

    public mutating func receiverWentOffline(_ receiver: String) {
        guard let number = numbers[receiver] else { return }
        locator.receiverWentOffline(number)
    }

    public mutating func receiverCameOnline(_ receiver: String) {
        guard let number = numbers[receiver] else { return }
        locator.receiverCameOnline(number)
    }

    /// Forgets beacons no plan receiver has heard since `time`.
    public mutating func forget(notHeardSince time: Timestamp) {
        locator.forget(notHeardSince: time)
        tracks = tracks.filter { locator.isTracking($0.key) }
    }

    /// How many beacons are tracked.
    public var count: Int { tracks.count }
}
