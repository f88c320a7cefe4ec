import Foundation

/// How the locator reads the receivers.
public struct PositionConfiguration: Hashable, Sendable {
    /// Time constant of each receiver's RSSI smoothing (exponential, in dB): the real flat's survey placed best at
    /// 4 s (docs/position.md).
    public var smoothing: Duration
    /// A receiver not heard for this long no longer places the beacon.
    public var staleAfter: Duration
    /// Metres between the spots the locator tries.
    public var gridStep: Double
    /// dB: how far a smoothed reading strays from what distance says (a receiver's bias per room, shadowing bound to
    /// the spot and fading, which smoothing does not remove: 5.5 dB on the real flat). It sets the accuracy.
    public var spread: Double
    /// dB a floor between a receiver and a beacon costs, counted by the floors' distinct heights. 16 dB: in the
    /// two-storey simulation (`beacond-bench floors --first-seed 4`, walks not reported) 16–20 dB placed best over
    /// true floors of 6–20 dB (median 1.67 m on average against 1.95 m at 8 dB and 2.6 m with none); the right floor
    /// barely moved. Reported on other walks in docs/position.md.
    public var floorLoss: Double

    public static let `default` = PositionConfiguration(
        smoothing: .seconds(4), staleAfter: .seconds(10), gridStep: 0.25, spread: 5.5, floorLoss: 16)

    public init(smoothing: Duration, staleAfter: Duration, gridStep: Double, spread: Double, floorLoss: Double = 16) {
        self.smoothing = smoothing
        self.staleAfter = staleAfter
        self.gridStep = max(gridStep, 0.05)
        self.spread = max(spread, 0.1)
        self.floorLoss = floorLoss.isFinite ? max(floorLoss, 0) : 0
    }
}

/// Puts beacons on the floor plan from every receiver's readings (issue 41): each receiver's RSSI smoothed over
/// seconds, then the spot of the plan whose expected RSSIs (each receiver's calibrated log-distance curve) fit them
/// best, in dB, on the floor where they fit best. Pure and clocked: readings and the time come in, nothing else.
///
/// Chosen by measurement on the real flat's survey (`beacond-bench position`): fitting in dB beat fitting distances
/// in log terms, a wall loss from the rooms' boxes made it worse, and a motion filter over the fits gained nothing
/// the 4 s smoothing had not.
public struct PositionLocator<Beacon: Hashable & Sendable>: Sendable {
    struct Heard: Sendable {
        var rssi: Double
        var time: Int64
        var measuredPower: Double
    }

    public let floors: [LocatorFloor]
    public let receivers: [PlacedReceiver]
    public let configuration: PositionConfiguration
    private let receiverIndex: [ReceiverID: Int]
    /// Per floor, the spots tried.
    private let spots: [[(x: Double, y: Double)]]
    /// Per floor, per receiver, per spot: the RSSI the receiver would read there from a beacon of measured power 0.
    private let expected: [[[Double]]]
    private var tracks: [Beacon: [Int: Heard]] = [:]
    private var offline: Set<Int> = []
    /// Beacons tracked at most: readings of new ones are dropped when full.
    public let capacity: Int

    public init(
        floors: [LocatorFloor], receivers: [PlacedReceiver], configuration: PositionConfiguration = .default, capacity: Int = 10_000
    ) {
        self.floors = floors
        self.receivers = receivers
        self.configuration = configuration
        self.capacity = capacity
        var index: [ReceiverID: Int] = [:]
        for (position, receiver) in receivers.enumerated() { index[receiver.id] = position }
        receiverIndex = index
        let step = configuration.gridStep
        let spots = floors.map { floor in
            var spots: [(x: Double, y: Double)] = []
            var x = floor.minimumX + step / 2
            while x < floor.maximumX {
                var y = floor.minimumY + step / 2
                while y < floor.maximumY {
                    spots.append((x, y))
                    y += step
                }
                x += step
            }
            return spots
        }
        self.spots = spots
        // A receiver without a floor, or on one the locator does not have, is counted on every floor alike.
        let rank = Self.floorRanks(floors)
        expected = floors.indices.map { floor in
            receivers.map { receiver in
                let between = receiver.floor.flatMap { rank[$0] }.map { abs($0 - (rank[floors[floor].id] ?? 0)) } ?? 0
                let floorLoss = configuration.floorLoss * Double(between)
                return spots[floor].map { spot in
                    let (dx, dy, dz) = (spot.x - receiver.x, spot.y - receiver.y, floors[floor].tagHeight - receiver.z)
                    let distance = max((dx * dx + dy * dy + dz * dz).squareRoot(), 0.1)
                    // rssi + offset = measured power − 10·n·log10(d) − what the floors between cost
                    return -receiver.calibration.rssiOffset - 10 * receiver.calibration.pathLossExponent * log10(distance) - floorLoss
                }
            }
        }
    }

    public var count: Int { tracks.count }

    /// Each floor's rank among the floors' distinct heights, for the floors between a receiver and a spot: floors at
    /// one height (two wings) have none between them.
    public static func floorRanks(_ floors: [LocatorFloor]) -> [String: Int] {
        let heights = Set(floors.map(\.tagHeight)).sorted()
        var rank: [String: Int] = [:]
        for floor in floors { rank[floor.id] = heights.firstIndex(of: floor.tagHeight) }
        return rank
    }

    /// Whether some receiver's reading of `beacon` is held.
    public func isTracking(_ beacon: Beacon) -> Bool { tracks[beacon] != nil }

    /// `receiver` heard `beacon` (whose RSSI at one metre is `measuredPower`) at `rssi` dBm at `now`. A receiver not
    /// on the plan is not used.
    public mutating func observe(_ beacon: Beacon, rssi: Double, measuredPower: Double, by receiver: ReceiverID, at now: Timestamp) {
        guard let index = receiverIndex[receiver], !offline.contains(index), rssi.isFinite, measuredPower.isFinite else { return }
        guard tracks.count < capacity || tracks[beacon] != nil else { return }
        let time = now.microsecondsSinceEpoch
        let smoothing = Double(configuration.smoothing.wholeMicroseconds) / 1_000_000
        let stale = configuration.staleAfter.wholeMicroseconds
        tracks[beacon, default: [:]][index] = {
            guard var heard = tracks[beacon]?[index], time - heard.time < stale else {
                return Heard(rssi: rssi, time: time, measuredPower: measuredPower)
            }
            // A reading older than the receiver's last (delivered late) is dropped: the smoothing has moved past it,
            // and the clock never goes back.
            guard time >= heard.time else { return heard }
            let weight = smoothing > 0 ? 1 - exp(-Double(time - heard.time) / 1_000_000 / smoothing) : 1
            heard.rssi += weight * (rssi - heard.rssi)
            heard.time = time
            heard.measuredPower = measuredPower
            return heard
        }()
    }

    /// A receiver is offline: its readings place nothing, and what it says while offline is not kept, until it is
    /// back and heard again.
    public mutating func receiverWentOffline(_ receiver: ReceiverID) {
        guard let index = receiverIndex[receiver] else { return }
        offline.insert(index)
        for beacon in tracks.keys { tracks[beacon]?[index] = nil }
    }

    public mutating func receiverCameOnline(_ receiver: ReceiverID) {
        guard let index = receiverIndex[receiver] else { return }
        offline.remove(index)
    }

    /// Forgets beacons no receiver has heard since `time`.
    public mutating func forget(notHeardSince time: Timestamp) {
        tracks = tracks.filter { $0.value.values.contains { $0.time >= time.microsecondsSinceEpoch } }
    }

    /// Where `beacon` is at `now`: nil when no receiver on the plan heard it within `staleAfter`.
    public func position(of beacon: Beacon, at now: Timestamp) -> Position? {
        guard let heard = tracks[beacon] else { return nil }
        let time = now.microsecondsSinceEpoch
        let stale = configuration.staleAfter.wholeMicroseconds
        let fresh = heard.filter { !offline.contains($0.key) && time - $0.value.time < stale }
        guard !fresh.isEmpty, !floors.isEmpty else { return nil }
        let variance = configuration.spread * configuration.spread
        var best: (floor: Int, spot: Int, cost: Double)?
        var costs: [[Double]] = []
        for floor in floors.indices {
            var floorCosts = [Double](repeating: 0, count: spots[floor].count)
            for (receiver, reading) in fresh {
                let curve = expected[floor][receiver]
                for spot in floorCosts.indices {
                    let residual = reading.rssi - reading.measuredPower - curve[spot]
                    floorCosts[spot] += residual * residual / variance
                }
            }
            for spot in floorCosts.indices where best == nil || floorCosts[spot] < best!.cost {
                best = (floor, spot, floorCosts[spot])
            }
            costs.append(floorCosts)
        }
        guard let best else { return nil }
        // The 68 % region of a two-dimensional fit: every spot within 2.30 of the best cost.
        let centre = spots[best.floor][best.spot]
        var radius = configuration.gridStep
        for spot in costs[best.floor].indices where costs[best.floor][spot] <= best.cost + 2.30 {
            let (dx, dy) = (spots[best.floor][spot].x - centre.x, spots[best.floor][spot].y - centre.y)
            radius = max(radius, (dx * dx + dy * dy).squareRoot())
        }
        let floor = floors[best.floor]
        return Position(x: centre.x, y: centre.y, z: floor.tagHeight, floor: floor.id, accuracy: radius, fixes: fresh.count)
    }
}
