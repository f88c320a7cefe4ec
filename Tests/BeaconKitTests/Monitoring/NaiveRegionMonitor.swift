import BeaconKit

/// RegionMonitor's rules written the slow, obvious way, as the oracle for the model-based tests: regions in a
/// list kept in start order, every step scanning all of them, deadlines recomputed from state each time.
struct NaiveRegionMonitor {
    struct Entry {
        var key: String
        var region: BeaconRegion
        var state: RegionState
        var lastSeen: Int64?
        /// The last inside/outside the client heard (`unknown`: never).
        var heard: RegionState
        /// When the unknown → outside wait began (start, restore or resume).
        var since: Int64
    }

    let timeout: Int64
    let hysteresis: RSSIHysteresis?
    var entries: [Entry] = []
    var now: Int64 = .min
    var suspended = false

    init(_ configuration: MonitoringConfiguration) {
        timeout = configuration.exitTimeout.wholeMicroseconds
        hysteresis = configuration.hysteresis
    }

    func due(_ entry: Entry) -> Int64? {
        guard !suspended else { return nil }
        switch entry.state {
        case .inside: return entry.lastSeen.map { $0 + timeout }
        case .unknown: return entry.since + timeout
        case .outside: return nil
        }
    }

    var nextDeadline: Timestamp? {
        entries.compactMap(due).min().map { Timestamp(microsecondsSinceEpoch: $0) }
    }

    func snapshot(_ key: String) -> MonitoredRegion? {
        entries.first { $0.key == key }.map {
            MonitoredRegion(
                region: $0.region, state: $0.state,
                lastSeen: $0.lastSeen.map { Timestamp(microsecondsSinceEpoch: $0) },
                lastDeterminedState: $0.heard)
        }
    }

    mutating func apply(_ op: MonitorModelOp) -> [MonitoringEvent<String>] {
        var events: [MonitoringEvent<String>] = []
        func emit(_ kind: MonitoringEvent<String>.Kind, _ entry: Entry, _ time: Int64) {
            events.append(
                MonitoringEvent(
                    kind: kind, key: entry.key, region: entry.region,
                    timestamp: Timestamp(microsecondsSinceEpoch: time)))
        }
        func moveClock(_ time: Timestamp) {
            let target = max(now, time.microsecondsSinceEpoch)
            while true {
                var earliest: (index: Int, time: Int64)?
                for (index, entry) in entries.enumerated() {
                    guard let time = due(entry), time <= target else { continue }
                    if earliest == nil || time < earliest?.time ?? .max { earliest = (index, time) }
                }
                guard let (index, time) = earliest else { break }
                let heard = entries[index].heard
                entries[index].state = .outside
                entries[index].heard = .outside
                emit(.didDetermineState(.outside), entries[index], time)
                if heard == .inside && entries[index].region.notifyOnExit { emit(.didExitRegion, entries[index], time) }
            }
            now = target
        }
        func install(_ key: String, _ saved: MonitoredRegion, since: Int64) {
            entries.removeAll { $0.key == key }
            let lastSeen = saved.lastSeen?.microsecondsSinceEpoch
            entries.append(
                Entry(
                    key: key, region: saved.region, state: suspended ? .unknown : saved.state,
                    lastSeen: saved.state == .inside ? lastSeen ?? since : lastSeen,
                    heard: saved.state == .unknown ? saved.lastDeterminedState : saved.state, since: since))
        }

        switch op {
        case .start(let key, let region, let time):
            moveClock(time)
            install(
                key, MonitoredRegion(region: region, state: .unknown, lastSeen: nil, lastDeterminedState: .unknown),
                since: now)
            emit(.didStartMonitoring, entries[entries.count - 1], now)
        case .stop(let key, let time):
            moveClock(time)
            entries.removeAll { $0.key == key }
        case .restore(let key, let saved, let time):
            install(key, saved, since: max(now, time.microsecondsSinceEpoch))
        case .advance(let time):
            moveClock(time)
        case .requestState(let key, let time):
            moveClock(time)
            if let entry = entries.first(where: { $0.key == key }) { emit(.didDetermineState(entry.state), entry, now) }
        case .suspend(let time):
            moveClock(time)
            guard !suspended else { break }
            suspended = true
            for index in entries.indices where entries[index].state != .unknown {
                entries[index].state = .unknown
                emit(.didDetermineState(.unknown), entries[index], now)
            }
        case .resume(let time):
            guard suspended else { break }
            suspended = false
            now = max(now, time.microsecondsSinceEpoch)
            for index in entries.indices { entries[index].since = now }
        case .observe(let sighting):
            moveClock(sighting.timestamp)
            guard !suspended else { break }
            var counts = true
            var enters = true
            if let hysteresis, let rssi = sighting.rssi.map(Int.init) {
                counts = rssi >= hysteresis.absentBelow
                enters = rssi >= hysteresis.enterAtOrAbove
            }
            guard counts else { break }
            for index in entries.indices where entries[index].region.constraint.matches(sighting.identity) {
                if entries[index].state == .inside {
                    entries[index].lastSeen = now
                } else if enters {
                    let heard = entries[index].heard
                    entries[index].state = .inside
                    entries[index].heard = .inside
                    entries[index].lastSeen = now
                    emit(.didDetermineState(.inside), entries[index], now)
                    if heard != .inside && entries[index].region.notifyOnEntry { emit(.didEnterRegion, entries[index], now) }
                }
            }
        }
        return events
    }
}
