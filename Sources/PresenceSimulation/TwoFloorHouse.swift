public import BeaconKit
import Foundation

/// A two-storey house for the multi-floor case of "Where on the floor plan" (issue 41): the real flat has one floor,
/// so which floor a tag is on is judged here. Two floors of 10 × 8 m, 3 m apart, four rooms and a stairwell each,
/// four receivers a floor at 2.2 m above it; a person walks from room to room, now and then up or down the stairs.
/// The radio is the real flat's (`SurveyRadio` fitted on its survey: exponent, wall loss, each receiver's bias per
/// room, fading, noise, misses) plus what a floor costs, `floorLoss` dB (about 6–10 dB through a timber floor,
/// 15–25 dB through concrete, at 2.4 GHz), and a receiver hears nothing below −100 dBm. Seeded: the same inputs give
/// the same walk and readings.
public struct TwoFloorHouse: Sendable {
    public struct Room: Sendable {
        public var id: String
        public var floor: Int
        public var x0: Double, y0: Double, x1: Double, y1: Double
        public func contains(x: Double, y: Double) -> Bool { x >= x0 && x < x1 && y >= y0 && y < y1 }
    }

    /// One second of the walk: where the tag truly is, and what each receiver read (nil: nothing).
    public struct Second: Sendable {
        public var x: Double, y: Double, z: Double
        /// The floor the tag is on; nil while it climbs (the middle of the stairs).
        public var floor: Int?
        public var rssi: [Double?]
    }

    public static let floorHeight = 3.0
    public static let tagHeight = 1.0
    public static let floorIDs = ["ground", "upstairs"]
    public let rooms: [Room]
    public let receivers: [(x: Double, y: Double, z: Double, floor: Int, offset: Double)]
    public let seconds: [Second]

    /// `house` draws the receivers' offsets and biases (one house), `seed` the walk and its readings.
    public init(radio: SurveyRadio, floorLoss: Double, minutes: Int = 40, house: UInt64, seed: UInt64) {
        var random = SeededRandom(seed: house)
        var rooms: [Room] = []
        for floor in 0..<2 {
            let prefix = Self.floorIDs[floor]
            rooms += [
                Room(id: "\(prefix)_a", floor: floor, x0: 0, y0: 0, x1: 5, y1: 4), Room(id: "\(prefix)_b", floor: floor, x0: 5, y0: 0, x1: 10, y1: 4),
                Room(id: "\(prefix)_c", floor: floor, x0: 0, y0: 4, x1: 5, y1: 8), Room(id: "\(prefix)_d", floor: floor, x0: 5, y0: 4, x1: 8, y1: 8),
                Room(id: "\(prefix)_stairs", floor: floor, x0: 8, y0: 4, x1: 10, y1: 8),
            ]
        }
        self.rooms = rooms
        // Receivers differ by a few dB (hardware, antennas): the locator is given these offsets when "calibrated".
        var receivers: [(x: Double, y: Double, z: Double, floor: Int, offset: Double)] = []
        for floor in 0..<2 {
            for (x, y) in [(0.5, 0.5), (9.5, 0.5), (0.5, 7.5), (6.5, 7.5)] {
                receivers.append((x, y, Double(floor) * Self.floorHeight + 2.2, floor, random.gaussian() * 3))
            }
        }
        self.receivers = receivers
        let bias = receivers.indices.map { _ in rooms.indices.map { _ in random.gaussian() * radio.room } }
        let missRate = radio.missRate.reduce(0, +) / Double(max(radio.missRate.count, 1))
        let missRepeat = radio.missRepeat.reduce(0, +) / Double(max(radio.missRepeat.count, 1))
        random = SeededRandom(seed: seed &+ 0x9E37_79B9_7F4A_7C15)

        // The walk: from a spot in one room to a spot in another at 1 m/s, staying 10–40 s; another floor is reached
        // by the stairs, 3 m of them from (9, 4.5) to (9, 7.5) while the height changes.
        var path: [(x: Double, y: Double, z: Double)] = []
        var here = (x: 2.5, y: 2.0, z: 0.0)
        func walk(to target: (x: Double, y: Double, z: Double), path: inout [(x: Double, y: Double, z: Double)]) {
            let length = ((target.x - here.x) * (target.x - here.x) + (target.y - here.y) * (target.y - here.y)).squareRoot()
            let steps = max(1, Int(length.rounded(.up)))
            for step in 1...steps {
                let fraction = Double(step) / Double(steps)
                path.append(
                    (here.x + (target.x - here.x) * fraction, here.y + (target.y - here.y) * fraction, here.z + (target.z - here.z) * fraction))
            }
            here = target
        }
        let living = rooms.indices.filter { !rooms[$0].id.hasSuffix("stairs") }
        while path.count < minutes * 60 {
            let room = rooms[living[Int(random.uniform(in: 0..<Double(living.count)))]]
            let floorZ = Double(room.floor) * Self.floorHeight
            if floorZ != here.z {
                walk(to: (9, 4.5, here.z), path: &path)
                walk(to: (9, 7.5, floorZ), path: &path)
            }
            let spot = (x: random.uniform(in: room.x0 + 0.5..<room.x1 - 0.5), y: random.uniform(in: room.y0 + 0.5..<room.y1 - 0.5), z: floorZ)
            walk(to: spot, path: &path)
            for _ in 0..<Int(random.uniform(in: 10..<40)) { path.append(here) }
        }

        var fading = receivers.indices.map { _ in random.gaussian() * radio.fading }
        var missing = receivers.indices.map { _ in false }
        let kept = exp(-1 / radio.fadingTime)
        var seconds: [Second] = []
        for point in path {
            let tagZ = point.z + Self.tagHeight
            // Mid-climb (the tag between 0.75 and 2.25 m up the stairwell) belongs to neither floor.
            let climbed = point.z.truncatingRemainder(dividingBy: Self.floorHeight)
            let floor: Int? =
                climbed == 0
                ? Int((point.z / Self.floorHeight).rounded())
                : climbed < 0.75 ? Int(point.z / Self.floorHeight) : climbed > 2.25 ? Int(point.z / Self.floorHeight) + 1 : nil
            let tagFloor = Int((point.z / Self.floorHeight).rounded())
            let tagRoom = rooms.firstIndex { $0.floor == tagFloor && $0.contains(x: point.x, y: point.y) }
            var readings: [Double?] = []
            for (index, receiver) in receivers.enumerated() {
                fading[index] = fading[index] * kept + random.gaussian() * radio.fading * (1 - kept * kept).squareRoot()
                missing[index] = random.uniform(in: 0..<1) < (missing[index] ? missRepeat : missRate * (1 - missRepeat) / max(1 - missRate, 1e-9))
                let (dx, dy, dz) = (point.x - receiver.x, point.y - receiver.y, tagZ - receiver.z)
                let distance = max((dx * dx + dy * dy + dz * dz).squareRoot(), 0.1)
                let walls =
                    receiver.floor == tagFloor ? Self.walls(rooms, floor: tagFloor, from: (point.x, point.y), to: (receiver.x, receiver.y)) : 1
                let rssi =
                    -59 - receiver.offset - 10 * radio.pathLossExponent * log10(distance) - radio.wallLoss * Double(walls)
                    - floorLoss * Double(abs(receiver.floor - tagFloor)) + (tagRoom.map { bias[index][$0] } ?? 0) + fading[index]
                    + random.gaussian() * radio.noise
                readings.append(missing[index] || rssi < -100 ? nil : rssi.rounded())
            }
            seconds.append(Second(x: point.x, y: point.y, z: point.z, floor: floor, rssi: readings))
        }
        self.seconds = seconds
    }

    /// Room boxes the straight line crosses on one floor (sampled every 10 cm).
    static func walls(_ rooms: [Room], floor: Int, from: (Double, Double), to: (Double, Double)) -> Int {
        let onFloor = rooms.filter { $0.floor == floor }
        func room(_ x: Double, _ y: Double) -> Int? { onFloor.firstIndex { $0.contains(x: x, y: y) } }
        let length = ((to.0 - from.0) * (to.0 - from.0) + (to.1 - from.1) * (to.1 - from.1)).squareRoot()
        let steps = max(1, Int((length / 0.1).rounded(.up)))
        var previous = room(from.0, from.1)
        var crossings = 0
        for step in 1...steps {
            let fraction = Double(step) / Double(steps)
            guard let current = room(from.0 + (to.0 - from.0) * fraction, from.1 + (to.1 - from.1) * fraction) else { continue }
            if let previous, previous != current { crossings += 1 }
            previous = current
        }
        return crossings
    }

    /// Each receiver's calibration as a user's survey would fit it: this walk's readings against the true distances,
    /// an offset each and one exponent (`CalibrationFit.fitTogether`, as `beaconctl calibrate --receivers` fits).
    public func surveyCalibrations() -> [ReceiverCalibration] {
        var samples = receivers.map { _ in [CalibrationSample]() }
        for second in seconds {
            // Only readings on the receiver's own floor: the locator counts the floor's loss apart.
            guard let floor = second.floor else { continue }
            for (index, rssi) in second.rssi.enumerated() {
                guard let rssi, receivers[index].floor == floor else { continue }
                let receiver = receivers[index]
                let (dx, dy, dz) = (second.x - receiver.x, second.y - receiver.y, second.z + Self.tagHeight - receiver.z)
                samples[index].append(
                    CalibrationSample(distance: max((dx * dx + dy * dy + dz * dz).squareRoot(), 0.1), rssi: rssi, measuredPower: -59))
            }
        }
        return CalibrationFit.fitTogether(samples).map { (try? $0.get())?.calibration ?? .uncalibrated }
    }

    /// The house as a floor plan, each receiver with `calibrations` (none: uncalibrated).
    public func floorPlan(calibrations: [ReceiverCalibration]? = nil) -> FloorPlan {
        let floors = (0..<2).map { floor in
            FloorPlan.Floor(
                id: Self.floorIDs[floor], name: Self.floorIDs[floor],
                heights: Double(floor) * Self.floorHeight..<Double(floor + 1) * Self.floorHeight, tagHeight: Self.tagHeight)
        }
        let planRooms = rooms.map { room in
            FloorPlan.Room(
                id: room.id, name: room.id, floor: Self.floorIDs[room.floor],
                points: [.init(x: room.x0, y: room.y0), .init(x: room.x1, y: room.y0), .init(x: room.x1, y: room.y1), .init(x: room.x0, y: room.y1)])
        }
        let planReceivers = receivers.enumerated().map { index, receiver in
            FloorPlan.Receiver(
                id: "r\(index + 1)", floor: Self.floorIDs[receiver.floor], x: receiver.x, y: receiver.y, z: receiver.z,
                calibration: calibrations?[index])
        }
        return FloorPlan(floors: floors, rooms: planRooms, receivers: planReceivers)
    }
}
