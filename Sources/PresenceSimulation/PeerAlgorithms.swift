import Foundation

// The published rules of the systems people run for BLE presence today, written from their sources (snapshots and
// file names in docs/presence.md), with their defaults. Each sees what it would see: every receiver's readings.

/// A beacon's distance from a reading by the log-distance model: 10^((power − rssi) / (10 · exponent)).
func logDistance(rssi: Int, power: Double, exponent: Double) -> Double {
    pow(10, (power - Double(rssi)) / (10 * exponent))
}

/// room-assistant's BLE integration: each instance's RSSI through a Kalman filter (process noise 0.008, measurement
/// noise 4), a distance from its curve fit; the room is the instance with the smallest distance among readings
/// newer than `timeout` (60 s), switched at once; none left: away. The state is recomputed on each reading and
/// every `timeout` seconds, so leaving can take up to twice the timeout.
public struct RoomAssistantRule: PresenceAlgorithm {
    public var name: String { "room-assistant (nearest distance, 60 s timeout)" }
    let rooms: [Int]
    let measuredPower: Double
    var filters: [Int: [Int: (estimate: Double, error: Double)]] = [:]
    var latest: [Int: [Int: (time: Double, distance: Double)]] = [:]
    var state: [Int: PresenceAnswer] = [:]
    var lastTick: [Int: Double] = [:]
    static let timeout = 60.0

    /// `rooms`: the room of each receiver.
    public init(rooms: [Int], measuredPower: Double = -59) {
        self.rooms = rooms
        self.measuredPower = measuredPower
    }

    public mutating func observe(_ reading: SimulatedReading) {
        var filter = filters[reading.beacon]?[reading.receiver] ?? (Double(reading.rssi), 1)
        // Kalman (room-assistant's KalmanFilter, R = 0.008, Q = 4).
        let predicted = filter.error + 0.008
        let gain = predicted / (predicted + 4)
        filter = (filter.estimate + gain * (Double(reading.rssi) - filter.estimate), (1 - gain) * predicted)
        filters[reading.beacon, default: [:]][reading.receiver] = filter
        let ratio = filter.estimate / measuredPower
        let distance = ratio < 1 ? pow(ratio, 10) : 0.89976 * pow(ratio, 7.7095) + 0.111
        latest[reading.beacon, default: [:]][reading.receiver] = (reading.time, distance)
        update(reading.beacon, at: reading.time)
    }

    mutating func update(_ beacon: Int, at time: Double) {
        let fresh = (latest[beacon] ?? [:]).filter { time - $0.value.time < Self.timeout }
        if let nearest = fresh.min(by: { ($0.value.distance, $0.key) < ($1.value.distance, $1.key) }) {
            state[beacon] = .room(rooms[nearest.key])
        } else {
            state[beacon] = .away
        }
    }

    public mutating func answer(for beacon: Int, at time: Double) -> PresenceAnswer {
        // The periodic recheck, every `timeout` seconds.
        let tick = (time / Self.timeout).rounded(.down) * Self.timeout
        if lastTick[beacon] != tick {
            lastTick[beacon] = tick
            update(beacon, at: tick)
        }
        return state[beacon] ?? .away
    }
}

/// ESPresense nodes with Home Assistant's `mqtt_room` sensor (their defaults): each node reports a distance
/// 10^((rssi@1m − rssi)/27) for devices within 16 m; `mqtt_room` takes a reading if it is from the current room,
/// nearer than the current distance, or the current reading is at least 5 s old. Its `away_timeout` is 0
/// (off) by default, so it never says away; a node forgets a device after 150 s, which `mqtt_room` does not see.
public struct ESPresenceMQTTRoomRule: PresenceAlgorithm {
    public var name: String { "ESPresense + HA mqtt_room (defaults)" }
    let rooms: [Int]
    let measuredPower: Double
    var current: [Int: (room: Int, distance: Double, time: Double)] = [:]

    public init(rooms: [Int], measuredPower: Double = -59) {
        self.rooms = rooms
        self.measuredPower = measuredPower
    }

    public mutating func observe(_ reading: SimulatedReading) {
        let distance = logDistance(rssi: reading.rssi, power: measuredPower, exponent: 2.7)
        guard distance <= 16 else { return }
        let room = rooms[reading.receiver]
        if let now = current[reading.beacon], now.room != room, distance >= now.distance, reading.time - now.time < 5 { return }
        current[reading.beacon] = (room, distance, reading.time)
    }

    public mutating func answer(for beacon: Int, at time: Double) -> PresenceAnswer {
        current[beacon].map { .room($0.room) } ?? .away
    }
}

/// Home Assistant's Bluetooth manager (habluetooth up to 6.19.0) with its iBeacon tracker: an advertisement from
/// another adapter takes the device over only if it is 16 dB stronger or the current source is stale (its
/// learned advertising interval + 5 s; 900 s until 16 intervals are learned); the device is unavailable once not
/// seen for that stale time, checked every 300 s.
public struct HomeAssistantRule: PresenceAlgorithm {
    public var name: String { "Home Assistant (+16 dB to switch, unavailable check every 300 s)" }
    let rooms: [Int]
    var source: [Int: (receiver: Int, rssi: Int, time: Double)] = [:]
    var lastSeen: [Int: Double] = [:]
    var gaps: [Int: [Double]] = [:]
    var available: [Int: Bool] = [:]
    var lastCheck: [Int: Double] = [:]

    public init(rooms: [Int]) {
        self.rooms = rooms
    }

    func stale(_ beacon: Int) -> Double {
        guard let gaps = gaps[beacon], gaps.count >= 16 else { return 900 }
        return (gaps.max() ?? 0) + 5
    }

    public mutating func observe(_ reading: SimulatedReading) {
        let beacon = reading.beacon
        if let seen = lastSeen[beacon], reading.time > seen {
            gaps[beacon, default: []].append(reading.time - seen)
            if gaps[beacon]!.count > 16 { gaps[beacon]!.removeFirst() }
        }
        lastSeen[beacon] = reading.time
        available[beacon] = true
        if let now = source[beacon], now.receiver != reading.receiver,
            reading.time - now.time <= stale(beacon), reading.rssi - 16 <= now.rssi
        {
            return
        }
        source[beacon] = (reading.receiver, reading.rssi, reading.time)
    }

    public mutating func answer(for beacon: Int, at time: Double) -> PresenceAnswer {
        let check = (time / 300).rounded(.down) * 300
        if lastCheck[beacon] != check {
            lastCheck[beacon] = check
            if let seen = lastSeen[beacon], check - seen > stale(beacon) { available[beacon] = false }
        }
        guard available[beacon] == true, let source = source[beacon] else { return .away }
        return .room(rooms[source.receiver])
    }
}

/// Bermuda: per receiver a distance 10^((−55 − rssi)/30), forgotten after 30 s; every 1.05 s the area goes to a
/// challenger whose advert is at most 10 s old and within 20 m if it is 30 % nearer than the incumbent, or 15 %
/// nearer with its worst of the last 5 distances better than the incumbent's best; away when not seen for 30 s.
public struct BermudaRule: PresenceAlgorithm {
    public var name: String { "Bermuda (30 % / 15 % hysteresis, 30 s away)" }
    let rooms: [Int]
    var history: [Int: [Int: [Double]]] = [:]
    var lastAdvert: [Int: [Int: Double]] = [:]
    var incumbent: [Int: Int] = [:]
    var lastSeen: [Int: Double] = [:]
    var lastRefresh: [Int: Double] = [:]

    public init(rooms: [Int]) {
        self.rooms = rooms
    }

    public mutating func observe(_ reading: SimulatedReading) {
        let distance = logDistance(rssi: reading.rssi, power: -55, exponent: 3)
        var distances = history[reading.beacon]?[reading.receiver] ?? []
        distances.append(distance)
        if distances.count > 5 { distances.removeFirst() }
        history[reading.beacon, default: [:]][reading.receiver] = distances
        lastAdvert[reading.beacon, default: [:]][reading.receiver] = reading.time
        lastSeen[reading.beacon] = reading.time
    }

    mutating func refresh(_ beacon: Int, at time: Double) {
        let adverts = lastAdvert[beacon] ?? [:]
        func distance(_ receiver: Int) -> Double? {
            guard let at = adverts[receiver], time - at <= 30 else { return nil }
            return history[beacon]?[receiver]?.last
        }
        var holder = incumbent[beacon].flatMap { distance($0) == nil ? nil : $0 }
        for (receiver, at) in adverts.sorted(by: { $0.key < $1.key }) where receiver != holder {
            guard time - at <= 10, let challenger = distance(receiver), challenger <= 20 else { continue }
            guard let current = holder, let incumbentDistance = distance(current) else {
                holder = receiver
                continue
            }
            guard challenger < incumbentDistance else { continue }
            let difference = abs(challenger - incumbentDistance) / ((challenger + incumbentDistance) / 2)
            let challengerHistory = history[beacon]?[receiver] ?? []
            let incumbentHistory = history[beacon]?[current] ?? []
            let historical =
                challengerHistory.count > 3 && difference > 0.15
                && (challengerHistory.max() ?? .infinity) < (incumbentHistory.min() ?? 0)
            if historical || difference >= 0.30 { holder = receiver }
        }
        incumbent[beacon] = holder
    }

    public mutating func answer(for beacon: Int, at time: Double) -> PresenceAnswer {
        var refresh = lastRefresh[beacon] ?? 0
        while refresh + 1.05 <= time {
            refresh += 1.05
            self.refresh(beacon, at: refresh)
        }
        lastRefresh[beacon] = refresh
        guard let seen = lastSeen[beacon], time - seen <= 30, let holder = incumbent[beacon] else { return .away }
        return .room(rooms[holder])
    }
}

/// AltBeacon's Android library: a region is exited 10 s after its beacon was last seen. It has no rooms; the room
/// given here is the receiver with the strongest reading of those 10 s, so its room column is not AltBeacon's.
public struct AltBeaconRule: PresenceAlgorithm {
    public var name: String { "AltBeacon (10 s exit; room: strongest of 10 s)" }
    let rooms: [Int]
    var recent: [Int: [(time: Double, receiver: Int, rssi: Int)]] = [:]

    public init(rooms: [Int]) {
        self.rooms = rooms
    }

    public mutating func observe(_ reading: SimulatedReading) {
        recent[reading.beacon, default: []].append((reading.time, reading.receiver, reading.rssi))
    }

    public mutating func answer(for beacon: Int, at time: Double) -> PresenceAnswer {
        recent[beacon]?.removeAll { time - $0.time > 10 }
        guard let strongest = recent[beacon]?.max(by: { $0.rssi < $1.rssi }) else { return .away }
        return .room(rooms[strongest.receiver])
    }
}

/// beacond as built today (issues 10–12): a beacon is present while any receiver heard it within `exit_timeout`
/// (30 s); its room is the receiver with the nearest distance reported in the last 2 s (ranging's `Room`, the
/// receivers' own distance estimates, uncalibrated); a receiver that goes offline makes what only it heard
/// unknown, never absent, until it returns (then a full `exit_timeout`).
public struct BeacondTodayRule: PresenceAlgorithm {
    public var name: String { "beacond today (30 s exit, blind when offline, nearest of 2 s)" }
    let rooms: [Int]
    let measuredPower: Double
    var recent: [Int: [(time: Double, receiver: Int, distance: Double)]] = [:]
    var lastHeard: [Int: [Int: Double]] = [:]
    var offline: Set<Int> = []
    var onlineSince: [Int: Double] = [:]
    var lastRoom: [Int: Int] = [:]
    static let exitTimeout = 30.0

    public init(rooms: [Int], measuredPower: Double = -59) {
        self.rooms = rooms
        self.measuredPower = measuredPower
    }

    public mutating func observe(_ reading: SimulatedReading) {
        recent[reading.beacon, default: []].append(
            (
                reading.time, reading.receiver,
                logDistance(rssi: reading.rssi, power: measuredPower, exponent: 2.7)
            ))
        lastHeard[reading.beacon, default: [:]][reading.receiver] = reading.time
    }

    public mutating func receiverWentOffline(_ receiver: Int, at time: Double) { offline.insert(receiver) }

    public mutating func receiverCameOnline(_ receiver: Int, at time: Double) {
        offline.remove(receiver)
        onlineSince[receiver] = time
    }

    public mutating func answer(for beacon: Int, at time: Double) -> PresenceAnswer {
        recent[beacon]?.removeAll { time - $0.time > 2 }
        if let nearest = recent[beacon]?.min(by: { $0.distance < $1.distance }) { lastRoom[beacon] = rooms[nearest.receiver] }
        let heard = lastHeard[beacon] ?? [:]
        guard let last = heard.values.max() else { return .away }
        if time - last <= Self.exitTimeout { return lastRoom[beacon].map { .room($0) } ?? .unknown }
        // Past the exit timeout: blind if a receiver that heard it within exit_timeout of its last sighting is
        // offline, or came back less than exit_timeout ago.
        let waiting = heard.contains { receiver, at in
            last - at <= Self.exitTimeout
                && (offline.contains(receiver) || (onlineSince[receiver].map { time - $0 < Self.exitTimeout } ?? false))
        }
        return waiting ? .unknown : .away
    }
}
