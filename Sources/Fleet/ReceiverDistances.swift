public import BeaconKit

/// The distances other receivers reported lately, per beacon, so a ranging result can say which room a beacon is in
/// (`Room`: the receiver with the nearest distance) and every receiver that heard it (`Receivers`). Pure and bounded:
/// at most `capacity` beacons (readings of a new one are not kept when full and nothing has expired), each with at
/// most one distance per receiver; distances older than `window` do not count and are dropped as they age.
public struct ReceiverDistances: Sendable {
    public let window: Duration
    public let capacity: Int
    private var byBeacon: [BeaconIdentity: [ReceiverID: (distance: Double, time: Timestamp)]] = [:]

    public init(window: Duration = .seconds(2), capacity: Int = 10_000) {
        self.window = window
        self.capacity = capacity
    }

    public var count: Int { byBeacon.count }

    public mutating func record(_ identity: BeaconIdentity, distance: Double, by receiver: ReceiverID, at now: Timestamp) {
        guard distance.isFinite, distance >= 0 else { return }
        if byBeacon[identity] == nil, byBeacon.count >= capacity {
            expire(at: now)
            guard byBeacon.count < capacity else { return }
        }
        byBeacon[identity, default: [:]][receiver] = (distance, now)
    }

    /// The receivers that reported `identity` within `window` before `now`, with their distances.
    public func distances(of identity: BeaconIdentity, at now: Timestamp) -> [ReceiverID: Double] {
        guard let entries = byBeacon[identity] else { return [:] }
        return entries.filter { now - $0.value.time <= window }.mapValues(\.distance)
    }

    /// Drops what is older than `window`.
    public mutating func expire(at now: Timestamp) {
        for (identity, entries) in byBeacon {
            let fresh = entries.filter { now - $0.value.time <= window }
            byBeacon[identity] = fresh.isEmpty ? nil : fresh
        }
    }

    /// The room of the nearest distance among `distances` (room name → metres); ties go to the name first in order.
    public static func nearestRoom(_ distances: [String: Double]) -> String? {
        distances.min { $0.value < $1.value || ($0.value == $1.value && $0.key < $1.key) }?.key
    }
}
