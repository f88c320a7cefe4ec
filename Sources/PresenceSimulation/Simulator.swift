import Foundation
public import BeaconKit
import TestKit

/// A receiver (one adapter or ESPresense node) at a position, with the RSSI error of its hardware and the times it
/// is offline (it hears nothing then, and says so: its status is offline).
public struct SimulatedReceiver: Hashable, Sendable {
    public var name: String
    public var position: Point
    /// dB this receiver adds to every RSSI (receivers differ by 10–20 dB).
    public var rssiOffset: Double
    /// Seconds from the start of the run.
    public var offline: [Range<Double>]
    /// Metres above the beacons (0: level with them, as the simulated floors have it).
    public var height: Double

    public init(name: String, position: Point, rssiOffset: Double = 0, offline: [Range<Double>] = [], height: Double = 0) {
        self.name = name
        self.position = position
        self.rssiOffset = rssiOffset
        self.offline = offline
        self.height = height
    }

    /// Metres from a beacon at `point`.
    public func distance(to point: Point) -> Double {
        let across = position.distance(to: point)
        return height == 0 ? across : (across * across + height * height).squareRoot()
    }

    public func isOffline(at time: Double) -> Bool { offline.contains { $0.contains(time) } }
}

/// Where a beacon is over time: it stays in each stop for its dwell time, then walks to the next at walking pace
/// (1.2 m/s, straight between room centres). A stop with no room is away: out of every receiver's range.
public struct SimulatedBeacon: Hashable, Sendable {
    public struct Stop: Hashable, Sendable {
        /// nil: away (out of the building).
        public var room: Int?
        public var dwell: Double
        /// Where in the room it stays, from the room's centre, metres.
        public var offset: Point

        public init(room: Int?, dwell: Double, offset: Point = Point(x: 0, y: 0)) {
            self.room = room
            self.dwell = dwell
            self.offset = offset
        }
    }

    public var name: String
    /// Seconds between advertisements (100 ms to 30 s in the field).
    public var advertisingInterval: Double
    /// The RSSI at one metre the beacon advertises (iBeacon measured power).
    public var measuredPower: Double
    public var stops: [Stop]

    public init(name: String, advertisingInterval: Double, measuredPower: Double = -59, stops: [Stop]) {
        self.name = name
        self.advertisingInterval = advertisingInterval
        self.measuredPower = measuredPower
        self.stops = stops
    }
}

/// How the radio behaves. The plain model (log-distance, independent Gaussian noise each reading, independent losses)
/// is what the simulator had; the structured parts (zero by default, so a plain environment draws exactly as before)
/// are what the real flat showed (`SurveyRadio`, `RadioEnvironment.realFlat`): a bias per receiver and room, shadowing
/// bound to the spot, slow fading, and misses in runs.
public struct RadioEnvironment: Hashable, Sendable {
    /// Log-distance path-loss exponent (2 in free space, 2.5–3.5 indoors).
    public var pathLossExponent: Double
    /// Standard deviation of the noise each reading has of its own, dB (2–6 dB in the field).
    public var shadowing: Double
    /// Share of advertisements a receiver misses (0 to 0.5).
    public var packetLoss: Double
    /// Below this RSSI nothing is received.
    public var sensitivity: Double
    /// Standard deviation of each receiver's bias per room, dB.
    public var roomShadowing = 0.0
    /// Standard deviation of the shadowing bound to where the beacon is, dB, and the metres it holds over.
    public var placeShadowing = 0.0
    public var placeScale = 1.0
    /// Standard deviation of the slow fading of each receiver–beacon link, dB, and the seconds it holds over.
    public var fading = 0.0
    public var fadingTime = 10.0
    /// The chance of a miss right after a miss (nil: misses are independent, each at `packetLoss`).
    public var missRepeat: Double? = nil

    public init(pathLossExponent: Double = 2.7, shadowing: Double = 4, packetLoss: Double = 0.2, sensitivity: Double = -100) {
        self.pathLossExponent = pathLossExponent
        self.shadowing = shadowing
        self.packetLoss = packetLoss
        self.sensitivity = sensitivity
    }

    /// The radio fitted to a survey: its exponent and spreads, its receivers' mean miss rate and repeat. Its wall
    /// loss belongs to the floor plan (`SimulatedFloor.wallLoss`), its receivers' powers to the receivers.
    public init(fitted radio: SurveyRadio) {
        self.init(
            pathLossExponent: radio.pathLossExponent, shadowing: radio.noise,
            packetLoss: radio.missRate.reduce(0, +) / Double(max(radio.missRate.count, 1)))
        roomShadowing = radio.room
        placeShadowing = radio.place
        placeScale = radio.placeScale
        fading = radio.fading
        fadingTime = radio.fadingTime
        missRepeat = radio.missRepeat.reduce(0, +) / Double(max(radio.missRepeat.count, 1))
    }

    /// The real flat's radio, fitted on the whole survey drive (`beacond-bench radio`, "fitted on the whole drive";
    /// SurveyRadioTests holds these figures to the fit): exponent 1.61, 6.7 dB of spread of which 4.1 dB a bias per
    /// receiver and room, 2.9 dB bound to the spot over 0.5 m, 2.6 dB of fading over 9 s and 3.5 dB each reading's
    /// own; 9.5 % of readings missed, 8 % again right after a miss. Its walls cost `realFlatWallLoss`.
    public static var realFlat: RadioEnvironment {
        var radio = RadioEnvironment(pathLossExponent: 1.61, shadowing: 3.5, packetLoss: 0.095)
        radio.roomShadowing = 4.1
        radio.placeShadowing = 2.9
        radio.placeScale = 0.51
        radio.fading = 2.6
        radio.fadingTime = 9
        radio.missRepeat = 0.08
        return radio
    }

    /// dB per wall on the real flat.
    public static let realFlatWallLoss = 4.2

    /// Whether any structured part is on (the plain model draws nothing for them).
    var isStructured: Bool { roomShadowing > 0 || placeShadowing > 0 || fading > 0 || missRepeat != nil }

    /// The chance of a miss after a reading that came, so that misses come at `packetLoss` in runs of `missRepeat`.
    var missOnset: Double {
        guard let again = missRepeat, packetLoss < 1 else { return packetLoss }
        return packetLoss * (1 - again) / (1 - packetLoss)
    }
}

/// One receiver's reception of one advertisement.
public struct SimulatedReading: Hashable, Sendable {
    /// When the reading reaches the rules: the advertisement's time, plus the receiver's delivery latency when the
    /// trace has one (`SimulatedTrace.withReadingLatency`). The daemon has no other clock for a remote reading.
    public var time: Double
    public var receiver: Int
    public var beacon: Int
    public var rssi: Int
    /// When the beacon advertised: every receiver hearing one advertisement has the same.
    public var advertisedAt: Double

    public init(time: Double, receiver: Int, beacon: Int, rssi: Int, advertisedAt: Double? = nil) {
        self.time = time
        self.receiver = receiver
        self.beacon = beacon
        self.rssi = rssi
        self.advertisedAt = advertisedAt ?? time
    }
}

/// A beacon leaving a room: when it crossed the room's wall (or vanished from it, going away), and where to.
public struct RoomDeparture: Hashable, Sendable {
    public var room: Int
    public var time: Double
    /// nil: away.
    public var to: Int?
}

/// Where a beacon really was from `start` to `end`: a room, nil while away, or walking between rooms (`walking`,
/// with the room it is in at each moment left to `room(at:)` of the plan).
public struct TruthInterval: Hashable, Sendable {
    public var start: Double
    public var end: Double
    public var room: Int?
    public var walking: Bool
    /// Where in `room` it stays (or walks to), from the room's centre.
    public var offset = Point(x: 0, y: 0)
    /// false: a stretch the score leaves out entirely (a recorded drive's minutes judged by another fold): the rule
    /// runs through it, but no answer in it counts, not even as a flap.
    public var scored = true
}

/// A run: every reading in time order, and the ground truth per beacon.
public struct SimulatedTrace: Sendable {
    public var readings: [SimulatedReading]
    public var truth: [[TruthInterval]]
    public var duration: Double
    public var receiverOffline: [[Range<Double>]]
    /// The receivers the trace was made with.
    public var receivers: [SimulatedReceiver] = []
    /// Each beacon's departures from rooms, in time order (none for recorded runs: their times are too rough).
    public var roomDepartures: [[RoomDeparture]] = []
    /// Each beacon's advertising interval, seconds (empty for recorded runs).
    public var advertisingIntervals: [Double] = []

    /// Whether `time` counts for `beacon` (see `TruthInterval.scored`).
    public func isScored(_ beacon: Int, at time: Double) -> Bool {
        truth[beacon].first(where: { $0.start <= time && time < $0.end })?.scored ?? true
    }

    /// The room beacon `beacon` was in at `time` (nil: away, or in a corridor between rooms).
    public func room(of beacon: Int, at time: Double) -> Int?? {
        guard let interval = truth[beacon].first(where: { $0.start <= time && time < $0.end }) else { return .some(nil) }
        return interval.walking ? nil : .some(interval.room)
    }
}

/// Makes traces from a floor plan, receivers, beacons and a radio environment: seeded and deterministic (the same
/// inputs and seed give the same trace on every machine).
public enum Simulator {
    public static let walkingSpeed = 1.2

    public static func run(
        plan: SimulatedFloor, receivers: [SimulatedReceiver], beacons: [SimulatedBeacon],
        radio: RadioEnvironment, seed: UInt64
    ) -> SimulatedTrace {
        var random = SeededRandom(seed: seed)
        var readings: [SimulatedReading] = []
        var truth: [[TruthInterval]] = []
        var duration = 0.0
        // The structured radio draws from its own generator, so a plain environment's draws stay as they were.
        var structure = StructuredRadio(radio, plan: plan, receivers: receivers.count, seed: seed)
        for (index, beacon) in beacons.enumerated() {
            let intervals = schedule(beacon, plan: plan)
            truth.append(intervals)
            duration = max(duration, intervals.last?.end ?? 0)
            // BLE adds 0–10 ms to every advertising interval.
            var time = random.uniform(in: 0..<beacon.advertisingInterval)
            let end = intervals.last?.end ?? 0
            while time < end {
                if let position = position(of: intervals, at: time, plan: plan) {
                    for (receiverIndex, receiver) in receivers.enumerated() where !receiver.isOffline(at: time) {
                        if radio.isStructured {
                            guard !structure.misses(beacon: index, receiver: receiverIndex) else { continue }
                        } else {
                            guard random.uniform(in: 0..<1) >= radio.packetLoss else { continue }
                        }
                        let distance = max(0.5, receiver.distance(to: position))
                        let structured =
                            radio.isStructured ? structure.shadowing(beacon: index, receiver: receiverIndex, at: position, time: time) : 0
                        let rssi =
                            beacon.measuredPower - 10 * radio.pathLossExponent * log10(distance)
                            - Double(plan.walls(from: position, to: receiver.position)) * plan.wallLoss
                            + random.gaussian() * radio.shadowing + receiver.rssiOffset + structured
                        guard rssi >= radio.sensitivity else { continue }
                        readings.append(
                            SimulatedReading(
                                time: time, receiver: receiverIndex, beacon: index,
                                rssi: Int(max(-127, min(20, rssi.rounded())))))
                    }
                }
                time += beacon.advertisingInterval + random.uniform(in: 0..<0.010)
            }
        }
        readings.sort { ($0.time, $0.receiver, $0.beacon) < ($1.time, $1.receiver, $1.beacon) }
        return SimulatedTrace(
            readings: readings, truth: truth, duration: duration,
            receiverOffline: receivers.map(\.offline), receivers: receivers,
            roomDepartures: truth.map { departures(from: $0, plan: plan) },
            advertisingIntervals: beacons.map(\.advertisingInterval))
    }

    /// Where a schedule leaves a room: at the wall it crosses walking to the next (found every 50 ms of the walk), or
    /// at the end of the stay when it goes away.
    static func departures(from intervals: [TruthInterval], plan: SimulatedFloor) -> [RoomDeparture] {
        var departures: [RoomDeparture] = []
        for (index, stay) in intervals.enumerated() where !stay.walking && index + 1 < intervals.count {
            guard let room = stay.room else { continue }
            let next = intervals[index + 1]
            if next.room == nil {
                departures.append(RoomDeparture(room: room, time: stay.end, to: nil))
            } else if next.walking {
                var time = next.start
                while time < next.end, let point = position(of: intervals, at: time, plan: plan), plan.room(at: point) == room {
                    time += 0.05
                }
                departures.append(RoomDeparture(room: room, time: min(time, next.end), to: next.room))
            }
        }
        return departures
    }

    /// The beacon's stops and the walks between them, in time order.
    static func schedule(_ beacon: SimulatedBeacon, plan: SimulatedFloor) -> [TruthInterval] {
        var intervals: [TruthInterval] = []
        var time = 0.0
        var previous: (room: Int, spot: Point)?
        for stop in beacon.stops {
            if let from = previous, let to = stop.room, from.room != to {
                let walk = from.spot.distance(to: spot(to, stop.offset, plan)) / walkingSpeed
                intervals.append(TruthInterval(start: time, end: time + walk, room: to, walking: true, offset: stop.offset))
                time += walk
            }
            intervals.append(
                TruthInterval(
                    start: time, end: time + stop.dwell, room: stop.room, walking: false,
                    offset: stop.offset))
            time += stop.dwell
            if let room = stop.room { previous = (room, spot(room, stop.offset, plan)) }
        }
        return intervals
    }

    static func spot(_ room: Int, _ offset: Point, _ plan: SimulatedFloor) -> Point {
        let centre = plan.rooms[room].centre
        return Point(x: centre.x + offset.x, y: centre.y + offset.y)
    }

    /// Where the beacon is at `time`; nil while away.
    static func position(of intervals: [TruthInterval], at time: Double, plan: SimulatedFloor) -> Point? {
        guard let index = intervals.firstIndex(where: { $0.start <= time && time < $0.end }) else { return nil }
        let interval = intervals[index]
        guard let room = interval.room else { return nil }
        let target = spot(room, interval.offset, plan)
        guard interval.walking, index > 0,
            let from = intervals[..<index].last(where: { !$0.walking && $0.room != nil }),
            let fromRoom = from.room
        else { return target }
        let origin = spot(fromRoom, from.offset, plan)
        let fraction = (time - interval.start) / max(interval.end - interval.start, 1e-9)
        return Point(x: origin.x + (target.x - origin.x) * fraction, y: origin.y + (target.y - origin.y) * fraction)
    }
}

/// The structured radio's state over a run: each receiver's bias per room and its place shadowing (shared by every
/// beacon: they are the building's), each receiver–beacon link's fading and whether its last advertisement was missed.
struct StructuredRadio {
    let radio: RadioEnvironment
    let plan: SimulatedFloor
    var random: SeededRandom
    let roomBias: [[Double]]
    let place: [PlaceShadowing]
    var fading: [Int: (value: Double, time: Double)] = [:]
    var missing: Set<Int> = []
    let receivers: Int

    init(_ radio: RadioEnvironment, plan: SimulatedFloor, receivers: Int, seed: UInt64) {
        self.radio = radio
        self.plan = plan
        self.receivers = receivers
        var random = SeededRandom(seed: seed ^ 0x5EED_0000_0AD1_0000)
        roomBias = (0..<receivers).map { _ in plan.rooms.map { _ in random.gaussian() * radio.roomShadowing } }
        place = (0..<receivers).map { _ in PlaceShadowing(scale: radio.placeScale, spread: radio.placeShadowing, random: &random) }
        self.random = random
    }

    /// Whether the link misses this advertisement: at `packetLoss`, in runs of `missRepeat`.
    mutating func misses(beacon: Int, receiver: Int) -> Bool {
        let link = beacon * receivers + receiver
        let missed = random.uniform(in: 0..<1) < (missing.contains(link) ? (radio.missRepeat ?? radio.packetLoss) : radio.missOnset)
        if missed { missing.insert(link) } else { missing.remove(link) }
        return missed
    }

    /// dB the room bias, the place and the link's fading add at `position` and `time` (times of one link ascending).
    mutating func shadowing(beacon: Int, receiver: Int, at position: Point, time: Double) -> Double {
        let link = beacon * receivers + receiver
        var value = random.gaussian() * radio.fading
        if let last = fading[link] {
            let kept = exp(-(time - last.time) / radio.fadingTime)
            value = last.value * kept + value * (1 - kept * kept).squareRoot()
        }
        fading[link] = (value, time)
        let bias = plan.room(at: position).map { roomBias[receiver][$0] } ?? 0
        return bias + place[receiver].value(x: position.x, y: position.y) + value
    }
}

/// The draws the simulator needs, from TestKit's SplitMix64: the same sequence on every platform.
struct SeededRandom {
    private var generator: SplitMix64

    init(seed: UInt64) { generator = SplitMix64(state: seed) }

    /// Uniform in `range`, from the top 53 bits.
    mutating func uniform(in range: Range<Double>) -> Double {
        range.lowerBound + Double(generator.next() >> 11) / Double(1 << 53) * (range.upperBound - range.lowerBound)
    }

    /// Standard normal (Box–Muller).
    mutating func gaussian() -> Double {
        let u = max(uniform(in: 0..<1), 1e-300)
        let v = uniform(in: 0..<1)
        return (-2 * log(u)).squareRoot() * cos(2 * Double.pi * v)
    }
}

extension Simulator {
    /// What `beaconctl calibrate` collects in the field: each receiver's averaged RSSI of a reference beacon placed
    /// at each of `distances` metres from it in its own room (no wall between), `readings` readings each.
    public static func referenceSamples(
        for receiver: SimulatedReceiver, distances: [Double], readings: Int = 30,
        radio: RadioEnvironment, measuredPower: Double = -59,
        seed: UInt64
    ) -> [CalibrationSample] {
        var random = SeededRandom(seed: seed)
        return distances.map { distance in
            var total = 0.0
            for _ in 0..<readings {
                total +=
                    (measuredPower - 10 * radio.pathLossExponent * log10(distance) + random.gaussian() * radio.shadowing
                    + receiver.rssiOffset).rounded()
            }
            return CalibrationSample(distance: distance, rssi: total / Double(readings), measuredPower: measuredPower)
        }
    }
}
