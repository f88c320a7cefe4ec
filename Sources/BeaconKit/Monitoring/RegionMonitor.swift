/// Region monitoring as Core Location's `CLLocationManager` does it, with every rule made explicit and every
/// time passed in, so the daemon, replay at any speed and tests all get identical events.
///
/// Rules:
/// - A region starts `unknown`. A matching sighting makes it `inside` (`didDetermineState(inside)`, and
///   `didEnterRegion` if `notifyOnEntry`). An inside region with no matching sighting for `exitTimeout` becomes
///   `outside` at last sighting + `exitTimeout` (`didDetermineState(outside)`, and `didExitRegion` if `notifyOnExit`).
///   A region still unknown `exitTimeout` after monitoring started (or detection resumed) becomes outside with
///   `didDetermineState(outside)` only: a client cannot exit what it never heard it entered.
/// - Sightings match by UUID, major and minor only, never the Bluetooth address: two transmitters with one
///   identity (a spare beacon, a phone rotating its random address) are one beacon, and either keeps a region
///   inside. Matching uses `RegionIndex`, so a sighting costs the same with 10,000 regions as with one.
/// - Entry and exit follow the last determination the client heard (`MonitoredRegion.lastDeterminedState`),
///   not the `unknown` a suspension puts in between: a beacon inside before detection was suspended and seen
///   again after it resumes gives `didDetermineState(inside)` but no second `didEnterRegion`, since it never left;
///   one not seen again gives a `didExitRegion` at resume + `exitTimeout`, since the client was told it was inside.
/// - Time never runs backwards: a call stamped earlier than one already made acts at the later time. A sighting
///   exactly `exitTimeout` after the previous one is too late: the region exits and re-enters at that instant.
///   Because observing at a time first fires what is due by then, calling `advance` more or less often never
///   changes the events.
/// - Events come in time order; at one instant, regions started earlier come first.
///
/// Cost: a sighting is three hash probes plus O(1) per matching region. Every deadline set while running is the
/// clock + `exitTimeout`, so setting order is deadline order: pending transitions sit in a linked list in that
/// order (`DeadlineList`), a refresh moves a region to the back, and `advance` touches only the due ones. Restored
/// regions, whose deadlines come from saved times, wait in a min-heap until first refreshed. The work happens in
/// `RegionMonitorCore` on integer slots, so the key type costs nothing per sighting.
public struct RegionMonitor<Key: Hashable & Sendable>: Sendable {
    public let configuration: MonitoringConfiguration
    private var core: RegionMonitorCore
    private var slots: [Key: Int] = [:]
    /// The key of each core slot in use.
    private var keys: [Int: Key] = [:]
    /// Each beacon's rhythm, with adaptive exits.
    private var rhythms: [BeaconIdentity: SightingRhythm] = [:]

    public init(configuration: MonitoringConfiguration = .default) {
        self.configuration = configuration
        self.core = RegionMonitorCore(configuration)
    }

    // MARK: Regions

    /// Starts monitoring `region` under `key` (Core Location's `startMonitoring(for:)`): emits
    /// `didStartMonitoring`. The same key again replaces the region and resets its state to unknown.
    public mutating func startMonitoring(
        _ region: BeaconRegion, for key: Key, at now: Timestamp, into events: inout [MonitoringEvent<Key>]
    ) {
        var changes: [RegionMonitorCore.Event] = []
        let time = core.moveClock(to: now.microsecondsSinceEpoch, into: &changes)
        let fresh = MonitoredRegion(region: region, state: .unknown, lastSeen: nil, lastDeterminedState: .unknown)
        let slot = bind(key, core.install(fresh, in: slots[key], since: time, restored: false))
        changes.append(.init(kind: .didStartMonitoring, slot: slot, region: region, time: time))
        deliver(changes, into: &events)
    }

    /// Stops monitoring `key`, silently as Core Location does, after firing what is due by `now` (so whether an
    /// exit due just before the stop is reported does not depend on how often `advance` ran). Returns the region
    /// `key` had.
    @discardableResult
    public mutating func stopMonitoring(
        _ key: Key, at now: Timestamp, into events: inout [MonitoringEvent<Key>]
    ) -> BeaconRegion? {
        advance(to: now, into: &events)
        guard let slot = slots.removeValue(forKey: key) else { return nil }
        let region = core.regions[slot]
        keys[slot] = nil
        core.remove(slot)
        return region
    }

    /// Puts a region back as it was before a restart, without events: a beacon still present then causes no new
    /// `didEnterRegion`, and one gone causes exactly one `didExitRegion`, at `lastSeen` + `exitTimeout` (possibly before
    /// `now`: the next `advance` reports it with that time). An inside region without `lastSeen` counts as seen
    /// at `now`; an unknown one becomes outside `exitTimeout` after `now`. Meant for start-up, before new
    /// sightings: restoring later can produce an overdue event stamped before events already returned.
    public mutating func restore(_ saved: MonitoredRegion, for key: Key, at now: Timestamp) {
        let since = max(core.clock, now.microsecondsSinceEpoch)
        bind(key, core.install(saved, in: slots[key], since: since, restored: true))
    }

    /// Moves the region monitored under `old` to `new` as it is: state, last sighting, last determination and
    /// pending deadline all stay, and no event is produced (an app's new client taking over the regions its
    /// disconnected client left running). A region already under `new` is replaced, silently. Returns false,
    /// changing nothing, if `old` is not monitored.
    @discardableResult
    public mutating func rekey(_ old: Key, to new: Key) -> Bool {
        guard old != new else { return slots[old] != nil }
        guard let slot = slots.removeValue(forKey: old) else { return false }
        if let replaced = slots.removeValue(forKey: new) {
            keys[replaced] = nil
            core.remove(replaced)
        }
        bind(new, slot)
        return true
    }

    /// `restore(_:for:at:)` for a region whose last determination is its state.
    public mutating func restore(
        _ region: BeaconRegion, for key: Key, state: RegionState, lastSeen: Timestamp?, at now: Timestamp
    ) {
        restore(
            MonitoredRegion(region: region, state: state, lastSeen: lastSeen, lastDeterminedState: state),
            for: key, at: now)
    }

    // MARK: Time and sightings

    /// Counts one sighting at `observation.timestamp` after firing every transition due by then.
    ///
    /// Without hysteresis, or without an RSSI, any sighting counts. A `nil` RSSI means the controller reported
    /// 127 ("not available") or the source has no power header: the frame was still received, so the beacon is
    /// in range; treating it as absent would make regions impossible to enter on such controllers and captures.
    /// Sightings while detection is suspended are ignored.
    ///
    /// `room` is where the beacon is now (`RoomLocator`), for regions with a `room`: only a sighting in that room
    /// counts for them.
    public mutating func observe(
        _ observation: BeaconObservation, room: SightingRoom = .unplaced,
        into events: inout [MonitoringEvent<Key>]
    ) {
        observe(observation.identity, rssi: observation.rssi, by: .local, room: room, at: observation.timestamp, into: &events)
    }

    /// Counts a sighting of `identity` by `receiver` at `now` (a remote receiver's reading), as `observe` does; who
    /// heard it is kept per region for `receiverWentOffline`. `receiverRoom` is the receiver's own room: for a region
    /// with a room, only the loss of a receiver in that room may hold its exit.
    public mutating func observe(
        _ identity: BeaconIdentity, rssi: Int8?, by receiver: ReceiverID, in receiverRoom: String? = nil,
        room: SightingRoom = .unplaced, at now: Timestamp, into events: inout [MonitoringEvent<Key>]
    ) {
        var changes: [RegionMonitorCore.Event] = []
        let time = core.moveClock(to: now.microsecondsSinceEpoch, into: &changes)
        let silence = adaptiveSilence(after: identity, by: receiver, at: time)
        core.observe(
            identity, rssi: rssi, receiver: receiver, receiverRoom: receiverRoom, room: room, silence: silence,
            into: &changes)
        deliver(changes, into: &events)
    }

    /// With adaptive exits: counts the sighting in `identity`'s rhythm and returns the silence after which it exits,
    /// µs (rounded up to 8 steps per octave, so the monitor keeps few deadline lists). nil: the fixed timeout.
    private mutating func adaptiveSilence(after identity: BeaconIdentity, by receiver: ReceiverID, at time: Int64) -> Int64? {
        guard let adaptive = configuration.adaptiveExit, core.matchesAnyRegion(identity) else { return nil }
        let maximum = configuration.exitTimeout.wholeMicroseconds
        if rhythms[identity] == nil, rhythms.count >= Self.rhythmCapacity {
            rhythms = rhythms.filter { time - ($0.value.lastSighting ?? .min) <= maximum }
            guard rhythms.count < Self.rhythmCapacity else { return maximum }
        }
        // Mutated in place: a copy out and back would copy the gap ring on every sighting (measured: 3× slower).
        rhythms[identity, default: SightingRhythm()].record(time, by: receiver, longestGap: maximum)
        guard let learned = rhythms[identity]?.silence(forChancePerHour: adaptive.chance) else { return maximum }
        return Self.roundedUp(min(max(learned, adaptive.minimum.wholeMicroseconds), maximum), atMost: maximum)
    }

    /// Beacons whose rhythm is kept: beyond this, beacons not heard within `exitTimeout` are forgotten first.
    static var rhythmCapacity: Int { 16_384 }

    /// `value` rounded up to the next of 8 steps per octave (at most 9 % more), never past `maximum`.
    static func roundedUp(_ value: Int64, atMost maximum: Int64) -> Int64 {
        guard value > 16 else { return value }
        let octave = Int64(1) << (63 - value.leadingZeroBitCount)
        let step = octave / 8
        let rounded = (value + step - 1) / step * step
        return min(rounded, maximum)
    }

    /// Fires every transition due by `now`, each stamped with the time it became due.
    public mutating func advance(to now: Timestamp, into events: inout [MonitoringEvent<Key>]) {
        var changes: [RegionMonitorCore.Event] = []
        core.moveClock(to: now.microsecondsSinceEpoch, into: &changes)
        deliver(changes, into: &events)
    }

    /// When the earliest pending transition is due: arm one timer for it and call `advance` then. `nil` when
    /// nothing is pending (no regions, all outside, or detection suspended).
    public var nextDeadline: Timestamp? {
        core.earliestDeadline.map { Timestamp(microsecondsSinceEpoch: $0) }
    }

    /// Core Location's `requestState(for:)`: fires what is due by `now`, then appends `didDetermineState` with
    /// the current state. Returns that state, or `nil` (and appends nothing more) if `key` is not monitored.
    @discardableResult
    public mutating func requestState(
        for key: Key, at now: Timestamp, into events: inout [MonitoringEvent<Key>]
    ) -> RegionState? {
        advance(to: now, into: &events)
        guard let region = monitoredRegion(for: key) else { return nil }
        events.append(
            MonitoringEvent(
                kind: .didDetermineState(region.state), key: key, region: region.region,
                timestamp: Timestamp(microsecondsSinceEpoch: core.clock)))
        return region.state
    }

    // MARK: Detection outages

    /// True between `suspendDetection` and `resumeDetection`.
    public var isDetectionSuspended: Bool { core.isSuspended }

    /// The scanner cannot see (adapter gone, powered off): every region not already unknown becomes unknown with
    /// `didDetermineState(unknown)`, and no exits are invented while blind. Repeated calls do nothing.
    public mutating func suspendDetection(at now: Timestamp, into events: inout [MonitoringEvent<Key>]) {
        var changes: [RegionMonitorCore.Event] = []
        core.moveClock(to: now.microsecondsSinceEpoch, into: &changes)
        core.suspend(into: &changes)
        deliver(changes, into: &events)
    }

    /// The scanner sees again: every region, all unknown, gets `exitTimeout` from `now` to be seen before it is
    /// determined outside. Does nothing unless suspended.
    public mutating func resumeDetection(at now: Timestamp) {
        core.resume(at: now.microsecondsSinceEpoch)
    }

    // MARK: Receivers

    /// A remote receiver went offline (its last will, or the broker connection lost): every region inside (or
    /// waiting for its exit) that only offline receivers heard in the last `exitTimeout` becomes unknown with
    /// `didDetermineState(unknown)` and waits for them, with no exit deadline. Regions this node's own scanner
    /// or an online receiver heard lately are not touched. Repeated calls do nothing.
    public mutating func receiverWentOffline(
        _ receiver: ReceiverID, at now: Timestamp,
        into events: inout [MonitoringEvent<Key>]
    ) {
        var changes: [RegionMonitorCore.Event] = []
        core.moveClock(to: now.microsecondsSinceEpoch, into: &changes)
        core.receiverWentOffline(receiver, into: &changes)
        deliver(changes, into: &events)
    }

    /// The receiver is back: each region that waited only for receivers now online gets `exitTimeout` from `now`
    /// to be seen (seen: inside, no second entry; not seen: outside with an exit, as after any blind period).
    public mutating func receiverCameOnline(
        _ receiver: ReceiverID, at now: Timestamp,
        into events: inout [MonitoringEvent<Key>]
    ) {
        var changes: [RegionMonitorCore.Event] = []
        core.moveClock(to: now.microsecondsSinceEpoch, into: &changes)
        core.receiverCameOnline(receiver)
        deliver(changes, into: &events)
    }

    /// Remote receivers now offline.
    public var offlineReceivers: Set<ReceiverID> { core.offlineReceivers }

    /// The receivers that keep a region inside (heard it within `exitTimeout`) or that a blind region waits for:
    /// forgetting one of them could make a present beacon exit.
    public var receiversHoldingRegions: Set<ReceiverID> { core.receiversHoldingRegions }

    /// A receiver evicted from the receiver table (a full one, for a new room): no region waits for it or counts
    /// its hearings any more. Only for receivers not in `receiversHoldingRegions`.
    public mutating func forgetReceiver(_ receiver: ReceiverID) { core.forgetReceiver(receiver) }

    /// Who heard `key`'s region lately and what it waits for, to carry into a rebuilt monitor.
    public func receiverRecord(for key: Key) -> ReceiverRecord? { slots[key].flatMap(core.receiverRecord) }

    /// After `restore(_:for:at:)` in a rebuilt monitor: the region's hearings and, if it was blind, its wait for the
    /// receivers in `offline` (which this monitor then counts as offline).
    public mutating func restoreReceivers(_ record: ReceiverRecord, for key: Key, offline: Set<ReceiverID>) {
        guard let slot = slots[key] else { return }
        core.applyReceiverRecord(record, to: slot, offline: offline)
    }

    // MARK: Queries

    public var count: Int { slots.count }
    public func state(of key: Key) -> RegionState? { monitoredRegion(for: key)?.state }
    /// The last sighting that counted for `key`'s region; `nil` if none has or `key` is not monitored.
    public func lastSeen(of key: Key) -> Timestamp? { monitoredRegion(for: key)?.lastSeen }
    public func region(for key: Key) -> BeaconRegion? { monitoredRegion(for: key)?.region }
    /// What `restore` needs to put `key`'s region back after a restart.
    public func monitoredRegion(for key: Key) -> MonitoredRegion? { slots[key].flatMap(core.snapshot) }
    /// A snapshot of every monitored region.
    public var regions: [Key: MonitoredRegion] { slots.compactMapValues(core.snapshot) }

    /// Queue entries held: for tests that check the queues grow with the regions, not with the sightings.
    var queuedDeadlineCount: Int { core.queuedDeadlineCount }

    /// The silence after which `identity` exits, as adaptive exits learned it; nil until learned or without them.
    public func learnedExit(of identity: BeaconIdentity) -> Duration? {
        guard let adaptive = configuration.adaptiveExit, let silence = rhythms[identity]?.silence(forChancePerHour: adaptive.chance) else {
            return nil
        }
        let clamped = min(max(silence, adaptive.minimum.wholeMicroseconds), configuration.exitTimeout.wholeMicroseconds)
        return .microseconds(Self.roundedUp(clamped, atMost: configuration.exitTimeout.wholeMicroseconds))
    }

    // MARK: Internals

    @discardableResult
    private mutating func bind(_ key: Key, _ slot: Int) -> Int {
        slots[key] = slot
        keys[slot] = key
        return slot
    }

    private func deliver(_ changes: [RegionMonitorCore.Event], into events: inout [MonitoringEvent<Key>]) {
        for change in changes {
            guard let key = keys[change.slot] else { continue }
            events.append(
                MonitoringEvent(
                    kind: change.kind, key: key, region: change.region,
                    timestamp: Timestamp(microsecondsSinceEpoch: change.time)))
        }
    }
}

/// Where a sighted beacon is, for regions with a room.
public enum SightingRoom: Hashable, Sendable {
    /// No room is known (no receivers with rooms): regions with a room ignore the sighting.
    case unplaced
    case room(String)
    /// Its room's receivers are offline: regions with a room stay as they are (inside stays inside; nothing enters).
    case unknown
}
