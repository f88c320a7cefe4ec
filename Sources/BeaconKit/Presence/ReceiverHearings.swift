/// What receivers last heard of each other: ESPresense nodes advertise themselves, so each hears the others, and the
/// floor plan says how far apart they stand. That is a calibration with no walk at all (`beaconctl calibrate
/// --receivers`). Bounded: anyone on the broker can invent nodes.
public struct ReceiverHearings: Sendable {
    /// By listener, then the receiver it heard: the latest reading (its RSSI raw, before calibration).
    public private(set) var latest: [String: [String: RoomPresence.ReceiverReading]] = [:]
    public private(set) var count = 0
    public let capacity: Int

    /// 64 receivers hearing each other, and room to spare.
    public init(capacity: Int = 4096) {
        self.capacity = capacity
    }

    /// `listener` heard `advertiser` at `rssi` dBm; `measuredPower` what the advertiser says it is heard at one metre.
    /// Full: readings of new pairs are not kept until `forget` makes room.
    public mutating func record(_ advertiser: String, rssi: Double, measuredPower: Int, by listener: String, at now: Timestamp) {
        guard rssi.isFinite, listener != advertiser else { return }
        let known = latest[listener]?[advertiser] != nil
        guard known || count < capacity else { return }
        if !known { count += 1 }
        latest[listener, default: [:]][advertiser] = RoomPresence.ReceiverReading(rssi: rssi, measuredPower: measuredPower, time: now)
    }

    /// Drops readings older than `cutoff`.
    public mutating func forget(before cutoff: Timestamp) {
        latest = latest.compactMapValues { heard in
            let fresh = heard.filter { $0.value.time >= cutoff }
            return fresh.isEmpty ? nil : fresh
        }
        count = latest.values.reduce(0) { $0 + $1.count }
    }

    /// Every reading since `since`, by listener and then advertiser.
    public func readings(since: Timestamp) -> [(listener: String, advertiser: String, reading: RoomPresence.ReceiverReading)] {
        latest.keys.sorted().flatMap { listener in
            (latest[listener] ?? [:]).filter { $0.value.time >= since }.sorted { $0.key < $1.key }.map { (listener, $0.key, $0.value) }
        }
    }
}
