/// What a presence algorithm says of a beacon at a moment.
public enum PresenceAnswer: Hashable, Sendable {
    case room(Int)
    case away
    /// It cannot say (the receivers that placed it are offline): neither a room nor gone.
    case unknown
}

/// A rule that turns receivers' readings into a room and presence: beacond's, or a peer's written from its
/// documentation. Fed in time order.
public protocol PresenceAlgorithm {
    var name: String { get }
    mutating func observe(_ reading: SimulatedReading)
    mutating func receiverWentOffline(_ receiver: Int, at time: Double)
    mutating func receiverCameOnline(_ receiver: Int, at time: Double)
    /// The answer for `beacon` at `time`, every reading and status before `time` having been observed.
    mutating func answer(for beacon: Int, at time: Double) -> PresenceAnswer
    /// Whether `beacon` has left `room` by the rule's account, asked right after `answer(for:at:)` gave `answer`:
    /// for beacond its room region (`BeaconRegion.room`) is outside; for a rule without regions, its answer is
    /// another room or away.
    mutating func hasLeft(_ room: Int, beacon: Int, answer: PresenceAnswer) -> Bool
    /// Whether the rule's room exits are scored (beacond's only where it monitors regions per room).
    var scoresRoomExits: Bool { get }
}

extension PresenceAlgorithm {
    public mutating func receiverWentOffline(_ receiver: Int, at time: Double) {}
    public mutating func receiverCameOnline(_ receiver: Int, at time: Double) {}
    public mutating func hasLeft(_ room: Int, beacon: Int, answer: PresenceAnswer) -> Bool {
        answer != .room(room) && answer != .unknown
    }
    public var scoresRoomExits: Bool { true }
}

/// One departure and how late the answer followed it.
public struct ExitRecord: Hashable, Sendable, Codable {
    public var beacon: Int
    /// The room left (room exits), nil for leaving the building.
    public var room: Int?
    /// Where to: another room, or nil (away).
    public var to: Int?
    public var departure: Double
    /// Seconds from the departure to the answer; nil: never answered before the beacon came back or the trace ended.
    public var delay: Double?
}

/// How an algorithm did on a trace, against its ground truth, sampled every `step` seconds.
public struct PresenceScore: Hashable, Sendable {
    /// Of the samples where a beacon was in a room (not walking, not away): the share answered with that room.
    public var correctRoomRate: Double
    /// Changes of the answered room (room to another room, through unknown or away too), per hour of presence.
    public var flapsPerHour: Double
    /// Changes of the true room, per hour of presence: what a perfect algorithm's flaps would be.
    public var truthRoomChangesPerHour: Double
    /// Answers turning to away while the beacon was present, per hour of presence.
    public var falseExitsPerHour: Double
    /// From each real departure to the answer turning away, seconds (departures answered before the beacon came back).
    public var exitDelays: [Double]
    /// Real departures never answered away before the beacon came back or the trace ended.
    public var missedExits: Int
    /// Of the samples where a beacon was present: the share answered unknown.
    public var unknownShare: Double
    /// Every departure from the building, answered (with its delay) or missed.
    public var exits: [ExitRecord] = []
    /// Every departure from a room (to another room or away) and how late the rule said the beacon left that room.
    public var roomExits: [ExitRecord] = []

    public func exitDelay(quantile: Double) -> Double? { Self.quantile(quantile, of: exitDelays) }

    /// The `quantile` of the room-exit delays answered (nil: none).
    public func roomExitDelay(quantile: Double) -> Double? { Self.quantile(quantile, of: roomExits.compactMap(\.delay)) }

    /// Room departures never answered before the beacon came back to that room or the trace ended.
    public var missedRoomExits: Int { roomExits.count { $0.delay == nil } }

    public static func quantile(_ quantile: Double, of values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((quantile * Double(sorted.count - 1)).rounded()))]
    }
}

public enum Evaluation {
    enum Event { case reading(SimulatedReading), offline(Int), online(Int) }

    /// Runs `algorithm` over `trace` (readings and receivers' offline windows in time order) and scores its answers.
    public static func score<Algorithm: PresenceAlgorithm>(
        _ algorithm: inout Algorithm, on trace: SimulatedTrace,
        step: Double = 1
    ) -> PresenceScore {
        var events: [(time: Double, order: Int, event: Event)] = trace.readings.map { ($0.time, 2, .reading($0)) }
        for (receiver, windows) in trace.receiverOffline.enumerated() {
            for window in windows {
                events.append((window.lowerBound, 0, .offline(receiver)))
                events.append((window.upperBound, 1, .online(receiver)))
            }
        }
        events.sort { ($0.time, $0.order) < ($1.time, $1.order) }
        let beacons = trace.truth.count
        var previous = [PresenceAnswer?](repeating: nil, count: beacons)
        var wasPresent = [Bool?](repeating: nil, count: beacons)
        var departure = [Double?](repeating: nil, count: beacons)
        var lastTrueRoom = [Int?](repeating: nil, count: beacons)
        var lastAnsweredRoom = [Int?](repeating: nil, count: beacons)
        var inRoom = 0, correct = 0, present = 0, unknown = 0, flaps = 0, falseExits = 0, truthChanges = 0, missed = 0
        var delays: [Double] = []
        var exits: [ExitRecord] = []
        var rooms = RoomExitTally(trace.roomDepartures, beacons: beacons)
        var next = 0
        var time = 0.0
        while time < trace.duration {
            while next < events.count, events[next].time < time {
                switch events[next].event {
                case .reading(let reading): algorithm.observe(reading)
                case .offline(let receiver): algorithm.receiverWentOffline(receiver, at: events[next].time)
                case .online(let receiver): algorithm.receiverCameOnline(receiver, at: events[next].time)
                }
                next += 1
            }
            for beacon in 0..<beacons {
                let answer = algorithm.answer(for: beacon, at: time)
                guard trace.isScored(beacon, at: time) else {
                    // Left out: the rule runs on, but nothing here counts, and no change across it is a flap.
                    previous[beacon] = answer
                    lastTrueRoom[beacon] = nil
                    lastAnsweredRoom[beacon] = nil
                    continue
                }
                let truth = trace.room(of: beacon, at: time)
                let isPresent = truth != .some(nil)
                if isPresent {
                    present += 1
                    if answer == .unknown { unknown += 1 }
                    if case .some(.some(let room)) = truth {
                        inRoom += 1
                        if answer == .room(room) { correct += 1 }
                        if let last = lastTrueRoom[beacon], last != room { truthChanges += 1 }
                        lastTrueRoom[beacon] = room
                    }
                    // Back before the answer turned away: that departure was never answered.
                    if let left = departure[beacon] {
                        missed += 1
                        exits.append(ExitRecord(beacon: beacon, departure: left))
                        departure[beacon] = nil
                    }
                } else if wasPresent[beacon] == true {
                    // A real departure; answered at once if the answer was away already (a false exit before it).
                    if previous[beacon] == .away {
                        delays.append(0)
                        exits.append(ExitRecord(beacon: beacon, departure: time, delay: 0))
                    } else {
                        departure[beacon] = time
                    }
                }
                if let before = previous[beacon] {
                    if answer == .away, before != .away {
                        if isPresent {
                            falseExits += 1
                        } else if let left = departure[beacon] {
                            delays.append(time - left)
                            exits.append(ExitRecord(beacon: beacon, departure: left, delay: time - left))
                            departure[beacon] = nil
                        }
                    }
                }
                if algorithm.scoresRoomExits { rooms.sample(beacon, at: time, truth: truth, answer: answer, algorithm: &algorithm) }
                // A flap: the answered room changes (through unknown or away in between, too), as the true room is counted.
                if case .room(let now) = answer {
                    if let last = lastAnsweredRoom[beacon], last != now { flaps += 1 }
                    lastAnsweredRoom[beacon] = now
                }
                previous[beacon] = answer
                wasPresent[beacon] = isPresent
            }
            time += step
        }
        for (beacon, left) in departure.enumerated() {
            guard let left else { continue }
            missed += 1
            exits.append(ExitRecord(beacon: beacon, departure: left))
        }
        let hours = Double(present) * step / 3600
        return PresenceScore(
            correctRoomRate: inRoom == 0 ? 0 : Double(correct) / Double(inRoom),
            flapsPerHour: hours == 0 ? 0 : Double(flaps) / hours,
            truthRoomChangesPerHour: hours == 0 ? 0 : Double(truthChanges) / hours,
            falseExitsPerHour: hours == 0 ? 0 : Double(falseExits) / hours,
            exitDelays: delays, missedExits: missed,
            unknownShare: present == 0 ? 0 : Double(unknown) / Double(present),
            exits: exits, roomExits: rooms.finished())
    }
}

/// Room departures waiting for a rule to say the beacon left that room.
struct RoomExitTally {
    let departures: [[RoomDeparture]]
    var next: [Int]
    var pending: [[RoomDeparture]]
    var records: [ExitRecord] = []

    init(_ departures: [[RoomDeparture]], beacons: Int) {
        self.departures = departures
        next = Array(repeating: 0, count: beacons)
        pending = Array(repeating: [], count: beacons)
    }

    /// At each sample: departures up to `time` wait; one is answered when the rule says the beacon left that room, and
    /// missed if the beacon is back in it first.
    mutating func sample<Algorithm: PresenceAlgorithm>(
        _ beacon: Int, at time: Double, truth: Int??, answer: PresenceAnswer,
        algorithm: inout Algorithm
    ) {
        guard departures.indices.contains(beacon) else { return }
        while next[beacon] < departures[beacon].count, departures[beacon][next[beacon]].time <= time {
            pending[beacon].append(departures[beacon][next[beacon]])
            next[beacon] += 1
        }
        guard !pending[beacon].isEmpty else { return }
        var waiting: [RoomDeparture] = []
        for left in pending[beacon] {
            if truth == .some(.some(left.room)) {
                records.append(ExitRecord(beacon: beacon, room: left.room, to: left.to, departure: left.time))
            } else if algorithm.hasLeft(left.room, beacon: beacon, answer: answer) {
                records.append(
                    ExitRecord(
                        beacon: beacon, room: left.room, to: left.to, departure: left.time,
                        delay: time - left.time))
            } else {
                waiting.append(left)
            }
        }
        pending[beacon] = waiting
    }

    func finished() -> [ExitRecord] {
        records
            + pending.enumerated().flatMap { beacon, waiting in
                waiting.map { ExitRecord(beacon: beacon, room: $0.room, to: $0.to, departure: $0.time) }
            }
    }
}
