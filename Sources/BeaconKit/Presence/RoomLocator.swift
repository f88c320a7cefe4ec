import Foundation

/// Where a beacon is, as far as the receivers can tell.
public enum RoomPlacement: Hashable, Sendable {
    case room(String)
    /// The receivers that placed it are offline: it may still be there, or anywhere. Never a confident wrong room.
    case unknown
}

/// Which room each beacon is in, from every receiver's readings: the room of the receiver with the nearest
/// (calibrated, smoothed) distance, with hysteresis so a beacon between two rooms does not flap.
///
/// Rules (`RoomConfiguration`):
/// - Each receiver's distances to a beacon are smoothed exponentially in the log domain (as dB are), with time
///   constant `smoothing`; a room's distance is its nearest receiver's. Any receiver offline does not count, nor a
///   receiver whose reading is stale: not heard for `staleAfter` AND for more of the beacon's advertisements than it
///   misses in a row by chance (its own share of advertisements heard says how many: at least 3). Counting the
///   advertisements it missed, not wall time alone, keeps a slow tag (8 s) in its room when that room's receiver
///   misses two of them, and lets a room that stopped hearing a beacon others hear lose it after a few.
/// - The first advertisement's readings are collected before the first placement (they arrive 5–60 ms apart, the
///   far receiver's often first); the beacon is placed by the reading that starts its second advertisement or comes
///   `AdvertisementGrouping.window` after its first. Afterwards a challenger room takes it only if nearer than the
///   current room's distance by `margin` (0.3: at most 70 % of it), or the current room has no fresh reading, and
///   keeps that lead for `dwell`, in readings of its own made that long after the lead began: one noisy reading never
///   moves a beacon.
/// - When every receiver of the beacon's room goes offline, the beacon is `unknown` until one of them is back,
///   however near another receiver thinks it is: a beacon beside an offline receiver is heard by the next room's
///   receiver through the wall, and naming that room would be a confident wrong answer.
///
/// Pure: every call takes the time; the same calls give the same answers.
public struct RoomLocator<Beacon: Hashable & Sendable>: Sendable {
    public private(set) var configuration: RoomConfiguration

    struct Heard: Sendable {
        var room: String
        /// Natural log of the smoothed distance.
        var logDistance: Double
        var time: Int64
        /// The beacon's advertisement (`AdvertisementGrouping.count`) this receiver last heard.
        var advertisement: UInt64
        /// The share of the beacon's advertisements this receiver hears, smoothed over about 8.
        var hearingRate: Double = 1

        /// How many advertisements in a row a receiver hearing this share misses by chance only 1 % of the time:
        /// at least 3, at most 64.
        var allowedMisses: UInt64 {
            guard hearingRate < 0.79 else { return 3 }
            return UInt64(min(64, max(3, (log(0.01) / log(1 - max(hearingRate, 0.07))).rounded(.up))))
        }
    }

    struct Track: Sendable {
        var heard: [ReceiverID: Heard] = [:]
        var room: String?
        /// Its room's receivers are all offline.
        var blind = false
        var challenger: String?
        var challengerSince: Int64 = 0
        var lastTime: Int64 = .min
        /// When its first reading arrived.
        var firstTime: Int64 = .min
        /// Its advertisements, each counted once however many receivers report it.
        var grouping = AdvertisementGrouping()
        /// The usual gap between its advertisements, µs (smoothed): a tag heard every 30 s keeps its readings fresh for
        /// longer than `staleAfter`, or each burst would be judged by its first receiver alone.
        var typicalGap: Int64 = 0

        func freshness(_ staleAfter: Int64) -> Int64 { max(staleAfter, typicalGap.multipliedReportingOverflow(by: 3).partialValue) }

        /// Whether `heard` still counts at `time`: a reading younger than `staleAfter` does; an older one until its
        /// receiver has missed more advertisements than it misses by chance (the current one is not missed yet: its
        /// readings may still be on their way), and never past that many of the beacon's usual gaps (a beacon gone
        /// for ten minutes and back is not judged by where it was).
        func counts(_ heard: Heard, at time: Int64, staleAfter: Int64) -> Bool {
            let age = time - heard.time
            guard age >= staleAfter else { return true }
            let allowed = heard.allowedMisses
            guard age < typicalGap.multipliedReportingOverflow(by: Int64(allowed + 1)).partialValue else { return false }
            return heard.advertisement >= grouping.count || grouping.count - heard.advertisement - 1 < allowed
        }

        /// The first advertisement's readings are in: its window passed, or the next advertisement began.
        func firstAdvertisementCollected(at time: Int64) -> Bool {
            grouping.count > 1 || time - firstTime >= AdvertisementGrouping.window
        }
    }

    private var tracks: [Beacon: Track] = [:]
    /// Each receiver's room, as its last reading named it.
    private var roomOfReceiver: [ReceiverID: String] = [:]
    private(set) public var offlineReceivers: Set<ReceiverID> = []
    /// The configuration in the units the per-reading arithmetic uses.
    struct Rules: Sendable {
        var staleAfter: Int64
        var dwell: Int64
        var smoothing: Double
        var logMargin: Double
    }

    private var rules: Rules
    private var staleAfter: Int64 { rules.staleAfter }

    /// The most beacons placed at once.
    public let capacity: Int

    public init(configuration: RoomConfiguration = .default, capacity: Int = 10_000) {
        self.configuration = configuration
        self.capacity = capacity
        rules = Self.rules(configuration)
    }

    static func rules(_ configuration: RoomConfiguration) -> Rules {
        Rules(
            staleAfter: configuration.staleAfter.wholeMicroseconds, dwell: configuration.dwell.wholeMicroseconds,
            smoothing: Double(configuration.smoothing.wholeMicroseconds) / 1_000_000,
            logMargin: log(1 - configuration.margin))
    }

    /// New margin, dwell, staleness or smoothing from the next reading on; where beacons are, and which receivers are
    /// offline, are kept.
    public mutating func reconfigure(_ configuration: RoomConfiguration) {
        self.configuration = configuration
        rules = Self.rules(configuration)
    }

    public var count: Int { tracks.count }

    /// `receiver`, in `room`, heard `beacon` at `distance` metres (calibrated) at `now`. Returns the beacon's
    /// placement when this reading changed it.
    @discardableResult
    public mutating func observe(
        _ beacon: Beacon, distance: Double, by receiver: ReceiverID, in room: String,
        at now: Timestamp
    ) -> RoomPlacement? {
        guard distance.isFinite, distance > 0, !offlineReceivers.contains(receiver) else { return nil }
        // Bounded whatever arrives (a flood of distinct ids): a new beacon beyond `capacity` is not placed until
        // `forget` makes room.
        guard tracks.count < capacity || tracks[beacon] != nil else { return nil }
        let time = now.microsecondsSinceEpoch
        if roomOfReceiver[receiver] != room { roomOfReceiver[receiver] = room }
        let before = tracks[beacon].flatMap(placement)
        // Updated in place: a copy out and back would copy the track's dictionary on every reading.
        // Static, with the rules and offline set taken first: no access to self overlaps the in-place one.
        let rules = self.rules, offline = offlineReceivers
        Self.update(
            &tracks[beacon, default: Track()], sample: log(distance), by: receiver, in: room, at: time,
            rules: rules, offline: offline)
        let after = tracks[beacon].flatMap(placement)
        return after != before ? after : nil
    }

    private static func update(
        _ track: inout Track, sample: Double, by receiver: ReceiverID, in room: String, at time: Int64,
        rules: Rules, offline: Set<ReceiverID>
    ) {
        let smoothing = rules.smoothing
        if track.firstTime == .min { track.firstTime = time }
        let gap = track.grouping.record(receiver, at: time).gap
        let advertisement = track.grouping.count
        if var heard = track.heard[receiver], time - heard.time < track.freshness(rules.staleAfter), smoothing > 0 {
            let elapsed = Double(max(0, time - heard.time)) / 1_000_000
            let weight = 1 - exp(-elapsed / smoothing)
            heard.logDistance += weight * (sample - heard.logDistance)
            heard.time = max(heard.time, time)
            heard.room = room
            Self.countHearing(&heard, of: advertisement)
            track.heard[receiver] = heard
        } else if var heard = track.heard[receiver] {
            heard.logDistance = sample
            heard.time = max(heard.time, time)
            heard.room = room
            Self.countHearing(&heard, of: advertisement)
            track.heard[receiver] = heard
        } else {
            track.heard[receiver] = Heard(room: room, logDistance: sample, time: time, advertisement: advertisement)
        }
        track.lastTime = max(track.lastTime, time)
        evaluate(&track, at: time, rules: rules, offline: offline)
        // After the evaluation: a long absence's gap must not make the readings from before it count.
        if let gap, gap > 0 {
            track.typicalGap = track.typicalGap == 0 ? gap : track.typicalGap + (gap - track.typicalGap) / 4
        }
    }

    /// A receiver heard `advertisement`: its share of advertisements heard counts the ones it missed since its last.
    private static func countHearing(_ heard: inout Heard, of advertisement: UInt64) {
        guard advertisement > heard.advertisement else { return }
        let missed = min(64, advertisement - heard.advertisement - 1)
        if missed > 0 { heard.hearingRate *= pow(7.0 / 8, Double(missed)) }
        heard.hearingRate += (1 - heard.hearingRate) / 8
        heard.advertisement = advertisement
    }

    /// Where `beacon` is: nil if no receiver has heard it (or it was forgotten).
    public func placement(of beacon: Beacon) -> RoomPlacement? {
        tracks[beacon].flatMap(placement)
    }

    /// Each online receiver's smoothed distance to `beacon`, metres, from readings that still count at `now`, by receiver.
    public func distances(of beacon: Beacon, at now: Timestamp) -> [ReceiverID: (room: String, distance: Double)] {
        guard let track = tracks[beacon] else { return [:] }
        let time = now.microsecondsSinceEpoch
        // An offline receiver's reading does not count here either: it is never the nearest receiver ranging names.
        return track.heard.filter { !offlineReceivers.contains($0.key) && track.counts($0.value, at: time, staleAfter: staleAfter) }
            .mapValues { ($0.room, exp($0.logDistance)) }
    }

    /// The receiver went offline: beacons whose room has no other receiver online become unknown. Returns those.
    @discardableResult
    public mutating func receiverWentOffline(_ receiver: ReceiverID) -> [Beacon] {
        guard offlineReceivers.insert(receiver).inserted, let room = roomOfReceiver[receiver] else { return [] }
        let roomStillHeard = roomOfReceiver.contains { $0.value == room && !offlineReceivers.contains($0.key) }
        guard !roomStillHeard else { return [] }
        var blinded: [Beacon] = []
        for (beacon, track) in tracks where track.room == room && !track.blind {
            tracks[beacon]?.blind = true
            tracks[beacon]?.challenger = nil
            blinded.append(beacon)
        }
        return blinded
    }

    /// The receiver is back: beacons waiting for its room are placed by readings again (their room holds until a
    /// challenger wins, with no margin needed while the room has no fresh reading).
    public mutating func receiverCameOnline(_ receiver: ReceiverID) {
        guard offlineReceivers.remove(receiver) != nil, let room = roomOfReceiver[receiver] else { return }
        for (beacon, track) in tracks where track.blind && track.room == room {
            tracks[beacon]?.blind = false
        }
    }

    /// Forgets beacons no receiver has heard for `age`: the table stays as large as the beacons around.
    public mutating func forget(notHeardFor age: Duration, at now: Timestamp) {
        let cutoff = now.microsecondsSinceEpoch.subtractingReportingOverflow(age.wholeMicroseconds).partialValue
        tracks = tracks.filter { $0.value.lastTime >= cutoff }
    }

    // MARK: Internals

    private func placement(_ track: Track) -> RoomPlacement? {
        guard let room = track.room else { return nil }
        return track.blind ? .unknown : .room(room)
    }

    private static func evaluate(_ track: inout Track, at time: Int64, rules: Rules, offline offlineReceivers: Set<ReceiverID>) {
        guard !track.blind else { return }
        // A beacon is heard by a handful of receivers: linear passes, no dictionaries, nothing allocated per reading.
        // Every figure is a minimum or maximum, so the order the receivers sit in the dictionary never matters.
        func counted(_ receiver: ReceiverID, _ heard: Heard) -> Bool {
            track.counts(heard, at: time, staleAfter: rules.staleAfter) && !offlineReceivers.contains(receiver)
        }
        var nearest: (room: String, value: Double)?
        var incumbent: Double?
        for (receiver, heard) in track.heard where counted(receiver, heard) {
            if heard.room == track.room { incumbent = min(incumbent ?? .infinity, heard.logDistance) }
            if nearest == nil || (heard.logDistance, heard.room) < (nearest!.value, nearest!.room) {
                nearest = (heard.room, heard.logDistance)
            }
        }
        guard let nearest else { return }
        // The nearest room's lead is held by its receivers at least as near as every other room's and, against the
        // current room, nearer by the margin: its latest reading is the latest of those (a receiver of the same room
        // that is heard often but does not beat the current room holds no lead). The receiver that made it the
        // nearest is one of them whenever the margin is met (checked below), even when another room is as near.
        var bound = Double.infinity
        for (receiver, heard) in track.heard where heard.room != nearest.room && counted(receiver, heard) {
            bound = min(bound, heard.logDistance)
        }
        if let incumbent, nearest.room != track.room { bound = min(bound, incumbent + rules.logMargin) }
        var latest = Int64.min
        for (receiver, heard) in track.heard where heard.room == nearest.room && heard.logDistance <= bound && counted(receiver, heard) {
            latest = max(latest, heard.time)
        }
        let best = (key: nearest.room, value: nearest.value, latest: latest)
        guard let current = track.room else {
            guard track.firstAdvertisementCollected(at: time) else { return }
            track.room = best.key
            return
        }
        guard best.key != current else {
            track.challenger = nil
            return
        }
        if let incumbent, best.value > incumbent + rules.logMargin {
            track.challenger = nil
            return
        }
        if track.challenger != best.key {
            track.challenger = best.key
            track.challengerSince = time
        }
        // The lead must be held by readings of the challenger's room made after the dwell began, not by one old reading
        // that stays fresh.
        // (`latest` is always a reading's time here; the check keeps a subtraction from Int64.min out even so.)
        if best.latest != .min, best.latest - track.challengerSince >= rules.dwell {
            track.room = best.key
            track.challenger = nil
        }
    }
}
