/// Region monitoring as Core Location's `CLLocationManager` does it, with every rule made explicit and every
/// time passed in, so the daemon, replay at any speed and tests all get identical events.
///
/// Rules:
/// - A region starts `unknown`. A matching sighting makes it `inside` (`didDetermineState(inside)`, and
///   `didEnter` if `notifyOnEntry`). An inside region with no matching sighting for `exitTimeout` becomes
///   `outside` at last sighting + `exitTimeout` (`didDetermineState(outside)`, and `didExit` if `notifyOnExit`).
///   A region still unknown `exitTimeout` after monitoring started (or detection resumed) becomes outside with
///   `didDetermineState(outside)` only: a client cannot exit what it never heard it entered.
/// - Sightings match by UUID, major and minor only, never the Bluetooth address: two transmitters with one
///   identity (a spare beacon, a phone rotating its random address) are one beacon, and either keeps a region
///   inside. Matching uses `RegionIndex`, so a sighting costs the same with 10,000 regions as with one.
/// - Entry and exit follow the last determination the client heard (`MonitoredRegion.lastDeterminedState`),
///   not the `unknown` a suspension puts in between: a beacon inside before detection was suspended and seen
///   again after it resumes gives `didDetermineState(inside)` but no second `didEnter`, since it never left;
///   one not seen again gives a `didExit` at resume + `exitTimeout`, since the client was told it was inside.
/// - Time never runs backwards: a call stamped earlier than one already made acts at the later time. A sighting
///   exactly `exitTimeout` after the previous one is too late: the region exits and re-enters at that instant.
///   Because observing at a time first fires what is due by then, calling `advance` more or less often never
///   changes the events.
/// - Events come in time order; at one instant, regions started earlier come first.
///
/// Cost: a sighting is three hash probes plus its matches; pending transitions sit in a min-heap whose outdated
/// entries are dropped lazily, so `advance` costs O(log n) per due transition (plus entries made stale by earlier
/// sightings, paid for by those), not a scan of all regions.
public struct RegionMonitor<Key: Hashable & Sendable>: Sendable {
    public let configuration: MonitoringConfiguration
    /// True between `suspendDetection` and `resumeDetection`.
    public private(set) var isDetectionSuspended = false

    private struct Record: Sendable {
        var region: BeaconRegion
        var state: RegionState
        var lastSeen: Timestamp?
        var lastDetermined: RegionState
        /// Start order, unique per start/replace/restore: tie-break and heap-entry validity.
        let ordinal: UInt64
        /// When the pending transition (inside → outside or unknown → outside) is due, µs.
        var deadline: Int64?
        /// The deadline of this record's live heap entry; may be earlier than `deadline` after a refresh.
        var scheduled: Int64?

        var snapshot: MonitoredRegion {
            MonitoredRegion(region: region, state: state, lastSeen: lastSeen, lastDeterminedState: lastDetermined)
        }
    }

    /// How one sighting counts under the configured hysteresis.
    private enum SightingWeight { case enters, refreshes, ignored }

    private var records: [Key: Record] = [:]
    private var index = RegionIndex<Key>()
    private var deadlines = DeadlineQueue<Key>()
    /// The latest time any call has passed in, µs since the epoch.
    private var clock: Int64 = .min
    private var nextOrdinal: UInt64 = 0
    private let exitTimeout: Int64

    public init(configuration: MonitoringConfiguration = .default) {
        self.configuration = configuration
        self.exitTimeout = configuration.exitTimeout.wholeMicroseconds
    }

    // MARK: Regions

    /// Starts monitoring `region` under `key` (Core Location's `startMonitoring(for:)`): emits
    /// `didStartMonitoring`. The same key again replaces the region and resets its state to unknown.
    public mutating func startMonitoring(
        _ region: BeaconRegion, for key: Key, at now: Timestamp, into events: inout [MonitoringEvent<Key>]
    ) {
        let time = moveClock(to: now, into: &events)
        install(MonitoredRegion(region: region, state: .unknown, lastSeen: nil, lastDeterminedState: .unknown),
                for: key, since: time)
        append(.didStartMonitoring, key: key, region: region, at: time, to: &events)
        settleQueue()
    }

    /// Stops monitoring `key`, silently as Core Location does, after firing what is due by `now` (so whether an
    /// exit due just before the stop is reported does not depend on how often `advance` ran). Returns the region
    /// `key` had.
    @discardableResult
    public mutating func stopMonitoring(
        _ key: Key, at now: Timestamp, into events: inout [MonitoringEvent<Key>]
    ) -> BeaconRegion? {
        moveClock(to: now, into: &events)
        index.remove(key)
        let removed = records.removeValue(forKey: key)
        settleQueue()
        return removed?.region
    }

    /// Puts a region back as it was before a restart, without events: a beacon still present then causes no new
    /// `didEnter`, and one gone causes exactly one `didExit`, at `lastSeen` + `exitTimeout` (possibly before
    /// `now`: the next `advance` reports it with that time). An inside region without `lastSeen` counts as seen
    /// at `now`; an unknown one becomes outside `exitTimeout` after `now`. Meant for start-up, before new
    /// sightings: restoring later can produce an overdue event stamped before events already returned.
    public mutating func restore(_ saved: MonitoredRegion, for key: Key, at now: Timestamp) {
        install(saved, for: key, since: max(clock, now.microsecondsSinceEpoch))
        settleQueue()
    }

    /// `restore(_:for:at:)` for a region whose last determination is its state.
    public mutating func restore(
        _ region: BeaconRegion, for key: Key, state: RegionState, lastSeen: Timestamp?, at now: Timestamp
    ) {
        restore(MonitoredRegion(region: region, state: state, lastSeen: lastSeen, lastDeterminedState: state),
                for: key, at: now)
    }

    // MARK: Time and sightings

    /// Counts one sighting at `observation.timestamp` after firing every transition due by then.
    ///
    /// Without hysteresis, or without an RSSI, any sighting counts. A `nil` RSSI means the controller reported
    /// 127 ("not available") or the source has no power header: the frame was still received, so the beacon is
    /// in range; treating it as absent would make regions impossible to enter on such controllers and captures.
    /// Sightings while detection is suspended are ignored.
    public mutating func observe(_ observation: IBeaconObservation, into events: inout [MonitoringEvent<Key>]) {
        let time = moveClock(to: observation.timestamp, into: &events)
        defer { settleQueue() }
        guard !isDetectionSuspended else { return }
        let weight = weight(of: observation.rssi)
        guard weight != .ignored else { return }
        let index = self.index
        var entering: [(ordinal: UInt64, key: Key)] = []
        index.forEachMatch(of: observation.identity) { key in
            guard let i = records.index(forKey: key) else { return }
            if records.values[i].state == .inside {
                records.values[i].lastSeen = Timestamp(microsecondsSinceEpoch: time)
                setDeadline(deadline(after: time), at: i)
            } else if weight == .enters {
                entering.append((records.values[i].ordinal, key))
            }
        }
        entering.sort { $0.ordinal < $1.ordinal }
        for (_, key) in entering { determineInside(key, at: time, into: &events) }
    }

    /// Fires every transition due by `now`, each stamped with the time it became due.
    public mutating func advance(to now: Timestamp, into events: inout [MonitoringEvent<Key>]) {
        moveClock(to: now, into: &events)
        settleQueue()
    }

    /// When the earliest pending transition is due: arm one timer for it and call `advance` then. `nil` when
    /// nothing is pending (no regions, all outside, or detection suspended).
    public var nextDeadline: Timestamp? {
        deadlines.first.map { Timestamp(microsecondsSinceEpoch: $0.deadline) }
    }

    /// Core Location's `requestState(for:)`: fires what is due by `now`, then appends `didDetermineState` with
    /// the current state. Returns that state, or `nil` (and appends nothing more) if `key` is not monitored.
    @discardableResult
    public mutating func requestState(
        for key: Key, at now: Timestamp, into events: inout [MonitoringEvent<Key>]
    ) -> RegionState? {
        let time = moveClock(to: now, into: &events)
        defer { settleQueue() }
        guard let record = records[key] else { return nil }
        append(.didDetermineState(record.state), key: key, region: record.region, at: time, to: &events)
        return record.state
    }

    // MARK: Detection outages

    /// The scanner cannot see (adapter gone, powered off): every region not already unknown becomes unknown with
    /// `didDetermineState(unknown)`, and no exits are invented while blind. Repeated calls do nothing.
    public mutating func suspendDetection(at now: Timestamp, into events: inout [MonitoringEvent<Key>]) {
        let time = moveClock(to: now, into: &events)
        guard !isDetectionSuspended else { return }
        isDetectionSuspended = true
        deadlines.removeAll()
        for key in keysInStartOrder() {
            guard let i = records.index(forKey: key) else { continue }
            records.values[i].deadline = nil
            records.values[i].scheduled = nil
            guard records.values[i].state != .unknown else { continue }
            records.values[i].state = .unknown
            append(.didDetermineState(.unknown), key: key, region: records.values[i].region, at: time, to: &events)
        }
    }

    /// The scanner sees again: every region, all unknown, gets `exitTimeout` from `now` to be seen before it is
    /// determined outside. Does nothing unless suspended.
    public mutating func resumeDetection(at now: Timestamp) {
        guard isDetectionSuspended else { return }
        isDetectionSuspended = false
        clock = max(clock, now.microsecondsSinceEpoch)
        let deadline = deadline(after: clock)
        var entries: [DeadlineQueue<Key>.Entry] = []
        entries.reserveCapacity(records.count)
        for key in keysInStartOrder() {
            guard let i = records.index(forKey: key) else { continue }
            records.values[i].deadline = deadline
            records.values[i].scheduled = deadline
            entries.append(.init(deadline: deadline, ordinal: records.values[i].ordinal, key: key))
        }
        deadlines = DeadlineQueue(sorted: entries)
    }

    // MARK: Queries

    public var count: Int { records.count }
    public func state(of key: Key) -> RegionState? { records[key]?.state }
    /// The last sighting that counted for `key`'s region; `nil` if none has or `key` is not monitored.
    public func lastSeen(of key: Key) -> Timestamp? { records[key]?.lastSeen }
    public func region(for key: Key) -> BeaconRegion? { records[key]?.region }
    /// What `restore` needs to put `key`'s region back after a restart.
    public func monitoredRegion(for key: Key) -> MonitoredRegion? { records[key]?.snapshot }
    /// A snapshot of every monitored region.
    public var regions: [Key: MonitoredRegion] { records.mapValues(\.snapshot) }

    // MARK: Internals

    /// Moves the clock to `now` (never backwards) after firing every transition due by then; returns the clock.
    @discardableResult
    private mutating func moveClock(to now: Timestamp, into events: inout [MonitoringEvent<Key>]) -> Int64 {
        let time = max(clock, now.microsecondsSinceEpoch)
        while let due = exactFirst(), due.deadline <= time {
            deadlines.popFirst()
            guard let i = records.index(forKey: due.key) else { continue }
            records.values[i].deadline = nil
            records.values[i].scheduled = nil
            determineOutside(at: i, time: due.deadline, into: &events)
        }
        clock = time
        return time
    }

    /// Drops outdated entries at the top of the heap and re-files postponed ones, until the top is exactly the
    /// earliest pending transition (what `nextDeadline` reports).
    private mutating func exactFirst() -> DeadlineQueue<Key>.Entry? {
        while let top = deadlines.first {
            guard let i = records.index(forKey: top.key),
                  records.values[i].ordinal == top.ordinal,
                  records.values[i].scheduled == top.deadline
            else {
                deadlines.popFirst()
                continue
            }
            let deadline = records.values[i].deadline
            if deadline == top.deadline { return top }
            deadlines.popFirst()
            records.values[i].scheduled = nil
            setDeadline(deadline, at: i)
        }
        return nil
    }

    private mutating func settleQueue() { _ = exactFirst() }

    /// Sets when region `i`'s pending transition is due. A heap entry is pushed only if none is live at or before
    /// that time: a refresh just moves `deadline`, and the older entry is re-filed when it surfaces.
    private mutating func setDeadline(_ deadline: Int64?, at i: Dictionary<Key, Record>.Index) {
        records.values[i].deadline = deadline
        guard let deadline else { return }
        if let scheduled = records.values[i].scheduled, scheduled <= deadline { return }
        records.values[i].scheduled = deadline
        deadlines.push(.init(deadline: deadline, ordinal: records.values[i].ordinal, key: records.keys[i]))
    }

    private func deadline(after time: Int64) -> Int64 {
        let (sum, overflow) = time.addingReportingOverflow(exitTimeout)
        return overflow ? .max : sum
    }

    private func weight(of rssi: Int8?) -> SightingWeight {
        guard let hysteresis = configuration.hysteresis, let rssi else { return .enters }
        if Int(rssi) >= hysteresis.enterAtOrAbove { return .enters }
        return Int(rssi) >= hysteresis.absentBelow ? .refreshes : .ignored
    }

    private mutating func install(_ saved: MonitoredRegion, for key: Key, since time: Int64) {
        index.insert(saved.region.constraint, for: key)
        let state = isDetectionSuspended ? .unknown : saved.state
        records[key] = Record(
            region: saved.region, state: state,
            lastSeen: saved.state == .inside ? saved.lastSeen ?? Timestamp(microsecondsSinceEpoch: time) : saved.lastSeen,
            lastDetermined: saved.state == .unknown ? saved.lastDeterminedState : saved.state,
            ordinal: nextOrdinal, deadline: nil, scheduled: nil)
        nextOrdinal += 1
        guard let i = records.index(forKey: key) else { return }
        switch state {
        case .inside: setDeadline(deadline(after: records.values[i].lastSeen?.microsecondsSinceEpoch ?? time), at: i)
        case .unknown: if !isDetectionSuspended { setDeadline(deadline(after: time), at: i) }
        case .outside: break
        }
    }

    private mutating func determineInside(_ key: Key, at time: Int64, into events: inout [MonitoringEvent<Key>]) {
        guard let i = records.index(forKey: key) else { return }
        let heard = records.values[i].lastDetermined
        records.values[i].state = .inside
        records.values[i].lastDetermined = .inside
        records.values[i].lastSeen = Timestamp(microsecondsSinceEpoch: time)
        setDeadline(deadline(after: time), at: i)
        let region = records.values[i].region
        append(.didDetermineState(.inside), key: key, region: region, at: time, to: &events)
        if heard != .inside && region.notifyOnEntry { append(.didEnter, key: key, region: region, at: time, to: &events) }
    }

    private mutating func determineOutside(
        at i: Dictionary<Key, Record>.Index, time: Int64, into events: inout [MonitoringEvent<Key>]
    ) {
        let heard = records.values[i].lastDetermined
        records.values[i].state = .outside
        records.values[i].lastDetermined = .outside
        let key = records.keys[i]
        let region = records.values[i].region
        append(.didDetermineState(.outside), key: key, region: region, at: time, to: &events)
        if heard == .inside && region.notifyOnExit { append(.didExit, key: key, region: region, at: time, to: &events) }
    }

    private func keysInStartOrder() -> [Key] {
        records.sorted { $0.value.ordinal < $1.value.ordinal }.map(\.key)
    }

    private func append(
        _ kind: MonitoringEvent<Key>.Kind, key: Key, region: BeaconRegion, at time: Int64,
        to events: inout [MonitoringEvent<Key>]
    ) {
        events.append(MonitoringEvent(kind: kind, key: key, region: region,
                                      timestamp: Timestamp(microsecondsSinceEpoch: time)))
    }
}
