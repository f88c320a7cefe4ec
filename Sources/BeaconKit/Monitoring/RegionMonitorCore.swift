/// The state machine behind `RegionMonitor`, on integer region slots instead of the caller's keys.
///
/// Keeping the caller's generic `Key` out of here makes every per-sighting step concrete code (no generic
/// hashing or copying through witness tables), whatever key type the daemon or replay uses. `RegionMonitor`
/// documents the rules; this type implements them.
struct RegionMonitorCore: Sendable {
    /// A region's state: plain values only (the region itself lives in `regions`), so the per-sighting path
    /// copies and writes no reference-counted fields.
    struct Record: Sendable {
        var state: RegionState
        var lastSeen: Int64?
        var lastDetermined: RegionState
        /// Start order, unique per start/replace/restore: tie-break, and validity of restored-heap entries.
        let ordinal: UInt64
        /// When the pending transition (inside → outside or unknown → outside) is due, µs.
        var deadline: Int64?
        /// Where `deadline` sits in the list for `listTimeout`; `nil` with a deadline means it waits in the heap
        /// (`Deadlines.setOutOfOrder`).
        var listSlot: Int?
        var listTimeout: Int64 = 0
        /// An EntryDelay region heard but not yet entered: the first and latest sightings of the unbroken run.
        var entryRun: (since: Int64, latest: Int64)?
        /// The beacon whose sighting set `deadline`: its own next sighting may shorten it (its rhythm was learned);
        /// another beacon's may not (it would cut the first one's silence short).
        var deadlineOwner: BeaconIdentity?
        /// The latest deadline other beacons set: the owner's deadline never goes below it.
        var deadlineFloor: Int64?
        /// Unknown because every receiver that heard it lately went offline: no deadline until one returns.
        var blind = false
        /// A region with a room: the latest sighting of its beacon placed in another room, µs. Online receivers
        /// place a beacon, so one placed elsewhere since it last counted has left, whoever went offline meanwhile.
        var placedElsewhere: Int64 = .min

        /// A region with a room whose beacon was placed in another room since it last counted: it is leaving, placed
        /// there by receivers that are online.
        var placedElsewhereSinceSeen: Bool {
            placedElsewhere != .min && placedElsewhere >= (lastSeen ?? .min)
        }
    }

    /// Who heard a region lately: this node's own scanner, and remote receivers (allocated only once one does),
    /// µs. Beside the records, so a local sighting writes one integer.
    struct Hearing: Sendable {
        var local: Int64 = .min
        var remote: [ReceiverID: Int64]?
        /// While blind: the receivers it waits for (every one that heard it in the last `exitTimeout`).
        var waitingFor: Set<ReceiverID> = []
    }

    /// An event for the region in `slot`, with the region as it was when the event happened.
    struct Event: Sendable {
        var kind: MonitoringEventKind
        var slot: Int
        var region: BeaconRegion
        var time: Int64
    }

    /// A region's own rules beyond its thresholds, resolved at install.
    struct Rules: Sendable {
        var room: String?
        var entryDelay: Int64 = 0
        var exitDelay: Int64?
    }

    /// A slot's RSSI thresholds, resolved at install (the region's own, else the configuration's), as plain
    /// integers beside the record so weighing a sighting reads two numbers and allocates nothing. `.countAll`
    /// (no hysteresis) lets every sighting enter.
    struct Thresholds: Sendable {
        /// How one sighting counts under a region's hysteresis.
        enum SightingWeight { case enters, refreshes, ignored }

        var enterAtOrAbove: Int16
        var absentBelow: Int16
        static let countAll = Thresholds(enterAtOrAbove: .min, absentBelow: .min)

        init(enterAtOrAbove: Int16, absentBelow: Int16) {
            self.enterAtOrAbove = enterAtOrAbove
            self.absentBelow = absentBelow
        }

        init(_ hysteresis: RSSIHysteresis?) {
            guard let hysteresis else {
                self = .countAll
                return
            }
            self.init(
                enterAtOrAbove: Int16(clamping: hysteresis.enterAtOrAbove),
                absentBelow: Int16(clamping: hysteresis.absentBelow))
        }

        /// How a sighting at `rssi` counts here; one without an RSSI enters.
        func weight(of rssi: Int8?) -> SightingWeight {
            guard let rssi else { return .enters }
            if Int16(rssi) >= enterAtOrAbove { return .enters }
            return Int16(rssi) >= absentBelow ? .refreshes : .ignored
        }
    }

    // State that belongs together is a value with the methods that keep it consistent: the slots' parallel arrays
    // (`Slots`), the pending deadlines (`Deadlines`), remote receivers (`RemoteReceivers`). What spans them (a
    // sighting, a transition) is this type's.
    let exitTimeout: Int64
    let hysteresis: RSSIHysteresis?
    private var slots = Slots()
    private var receivers = RemoteReceivers()
    /// The timeout each region entering at this sighting will wait, between matching and entering.
    private var pendingTimeouts: [Int: Int64] = [:]
    private var index = RegionIndex<Int>()
    private var deadlines = Deadlines()
    /// The latest time any call has passed in, µs since the epoch.
    private(set) var clock: Int64 = .min
    private(set) var isSuspended = false

    init(_ configuration: MonitoringConfiguration) {
        exitTimeout = configuration.exitTimeout.wholeMicroseconds
        hysteresis = configuration.hysteresis
    }

    /// The region in each slot in use.
    var regions: [BeaconRegion?] { slots.regions }

    /// Remote receivers known to be offline now.
    var offlineReceivers: Set<ReceiverID> { receivers.offline }

    func snapshot(_ slot: Int) -> MonitoredRegion? {
        guard let record = slots.records[slot], let region = slots.regions[slot] else { return nil }
        return MonitoredRegion(
            region: region, state: record.state,
            lastSeen: record.lastSeen.map { Timestamp(microsecondsSinceEpoch: $0) },
            lastDeterminedState: record.lastDetermined)
    }

    var queuedDeadlineCount: Int { deadlines.count }

    /// The earliest pending transition (see `Deadlines.earliest`).
    var earliestDeadline: Int64? { deadlines.earliest }

    // MARK: Operations

    /// Moves the clock to `time` (never backwards) after firing every transition due by then; returns the clock.
    @discardableResult
    mutating func moveClock(to time: Int64, into events: inout [Event]) -> Int64 {
        let target = max(clock, time)
        while let due = deadlines.earliest, due <= target {
            var dueSlots = deadlines.takeDue(due, from: &slots.records, exitTimeout: exitTimeout)
            dueSlots.sort { $0.ordinal < $1.ordinal }
            for (_, slot) in dueSlots where !blindInsteadOfExit(slot, at: due, into: &events) {
                determineOutside(slot, at: due, into: &events)
            }
        }
        clock = target
        return target
    }

    /// Puts `saved` in `slot` (replacing what was there) or in a new slot; returns the slot. A started region
    /// waits from `since`, the clock; a restored one from its saved last sighting or from `since`, which may be
    /// any time, so its deadline goes to the heap rather than the time-ordered list.
    mutating func install(_ saved: MonitoredRegion, in slot: Int?, since time: Int64, restored: Bool) -> Int {
        defer { deadlines.dropOutdated(slots.records) }
        let slot = slot ?? slots.allocate()
        clearDeadline(slot)
        index.insert(saved.region.constraint, for: slot)
        let state = isSuspended ? .unknown : saved.state
        let lastSeen = saved.lastSeen?.microsecondsSinceEpoch
        slots.regions[slot] = saved.region
        slots.thresholds[slot] = Thresholds(saved.region.hysteresis ?? hysteresis)
        slots.rules[slot] = Rules(
            room: saved.region.room,
            entryDelay: max(0, saved.region.entryDelay?.wholeMicroseconds ?? 0),
            exitDelay: saved.region.exitDelay.map { max(1, $0.wholeMicroseconds) })
        slots.hearings[slot] = Hearing()
        slots.records[slot] = Record(
            state: state,
            lastSeen: saved.state == .inside ? lastSeen ?? time : lastSeen,
            lastDetermined: saved.state == .unknown ? saved.lastDeterminedState : saved.state,
            ordinal: slots.takeOrdinal(), deadline: nil, listSlot: nil)
        let waitsFrom: Int64
        switch state {
        case .inside: waitsFrom = slots.records[slot]?.lastSeen ?? time
        case .unknown where !isSuspended: waitsFrom = time
        case .unknown, .outside: return slot
        }
        if restored {
            let deadline = Deadlines.deadline(after: waitsFrom, timeout: exitTimeout)
            deadlines.setOutOfOrder(&slots.records[slot]!, slot: slot, to: deadline)
        } else {
            setDeadline(slot)
        }
        return slot
    }

    /// Who heard the region in `slot` lately and whether it waits for offline receivers (to carry it into a rebuilt
    /// monitor).
    func receiverRecord(_ slot: Int) -> ReceiverRecord? {
        guard let record = slots.records[slot] else { return nil }
        let hearing = slots.hearings[slot]
        return ReceiverRecord(
            local: hearing.local == .min ? nil : hearing.local, remote: hearing.remote ?? [:],
            waitingFor: record.blind ? hearing.waitingFor : nil)
    }

    /// Puts back what `receiverRecord` said, after `install`: a region that waited still waits, with no deadline.
    mutating func applyReceiverRecord(_ saved: ReceiverRecord, to slot: Int, offline: Set<ReceiverID>) {
        receivers.offline.formUnion(offline)
        slots.hearings[slot].local = saved.local ?? .min
        slots.hearings[slot].remote = saved.remote.isEmpty ? nil : saved.remote
        guard let waiting = saved.waitingFor, slots.records[slot] != nil else { return }
        clearDeadline(slot)
        slots.records[slot]?.state = .unknown
        slots.records[slot]?.blind = true
        slots.hearings[slot].waitingFor = waiting.intersection(receivers.offline)
        if slots.hearings[slot].waitingFor.isEmpty {
            slots.records[slot]?.blind = false
            if !isSuspended { setDeadline(slot) }
        }
        deadlines.dropOutdated(slots.records)
    }

    /// Forgets the region in `slot`; the slot may be reused.
    mutating func remove(_ slot: Int) {
        clearDeadline(slot)
        index.remove(slot)
        slots.release(slot)
        deadlines.dropOutdated(slots.records)
    }

    /// Whether any region matches `identity`.
    func matchesAnyRegion(_ identity: BeaconIdentity) -> Bool {
        var matched = false
        index.forEachMatch(of: identity) { _ in matched = true }
        return matched
    }

    /// Counts one sighting by `receiver` (after the caller moved the clock to it) at the clock's time, in `room`; an
    /// inside region exits after `silence` µs without another (its own ExitDelay instead, if it has one; nil: the
    /// configuration's timeout). A later deadline already set by another beacon of the region is kept.
    mutating func observe(
        _ identity: BeaconIdentity, rssi: Int8?, receiver: ReceiverID = .local, receiverRoom: String? = nil,
        room: SightingRoom = .unplaced, silence: Int64? = nil, into events: inout [Event]
    ) {
        defer { deadlines.dropOutdated(slots.records) }
        guard !isSuspended else { return }
        receivers.note(receiverRoom, of: receiver)
        let index = self.index
        var entering: [(ordinal: UInt64, slot: Int)] = []
        index.forEachMatch(of: identity) { slot in
            var weight = slots.thresholds[slot].weight(of: rssi)
            if let wanted = slots.rules[slot].room {
                switch room {
                // Where the beacon is cannot be said (its room's receivers are offline): keep an inside region
                // inside, never enter one; leaving is decided once it is placed again.
                case .unknown: if weight == .enters { weight = .refreshes }
                case .room(let name) where name == wanted: break
                case .room:
                    weight = .ignored
                    slots.records[slot]?.placedElsewhere = clock
                case .unplaced: weight = .ignored
                }
            }
            guard weight != .ignored else { return }
            let timeout = slots.rules[slot].exitDelay ?? silence ?? exitTimeout
            if receiver == .local {
                slots.hearings[slot].local = clock
            } else {
                if slots.hearings[slot].remote == nil { slots.hearings[slot].remote = [:] }
                slots.hearings[slot].remote?[receiver] = clock
            }
            switch slots.records[slot]?.state {
            case .inside?:
                slots.records[slot]?.lastSeen = clock
                extendDeadline(slot, timeout: timeout, by: identity)
            case .some where weight == .enters:
                guard let record = slots.records[slot] else { return }
                if slots.rules[slot].entryDelay > 0 {
                    // An unbroken run of sightings (no silence that would have exited) for EntryDelay enters.
                    var run = record.entryRun ?? (clock, clock)
                    if clock - run.latest > timeout { run = (clock, clock) }
                    run.latest = clock
                    slots.records[slot]?.entryRun = run
                    guard clock - run.since >= slots.rules[slot].entryDelay else { return }
                }
                entering.append((record.ordinal, slot))
                pendingTimeouts[slot] = timeout
                slots.records[slot]?.deadlineOwner = identity
            default:
                break
            }
        }
        entering.sort { $0.ordinal < $1.ordinal }
        for (_, slot) in entering {
            determineInside(slot, timeout: pendingTimeouts.removeValue(forKey: slot) ?? exitTimeout, into: &events)
        }
    }

    /// Makes every determined region unknown (after the caller moved the clock) and drops all deadlines.
    mutating func suspend(into events: inout [Event]) {
        guard !isSuspended else { return }
        isSuspended = true
        deadlines.removeAll()
        for slot in slots.records.indices { slots.records[slot]?.entryRun = nil }
        for slot in slots.inStartOrder() {
            slots.records[slot]?.deadline = nil
            slots.records[slot]?.listSlot = nil
            guard let region = slots.regions[slot], slots.records[slot]?.state != .unknown else { continue }
            slots.records[slot]?.state = .unknown
            events.append(Event(kind: .didDetermineState(.unknown), slot: slot, region: region, time: clock))
        }
    }

    /// Gives every region, all unknown, `exitTimeout` from `time` to be seen (but a region blind for an offline
    /// receiver, which waits for it).
    mutating func resume(at time: Int64) {
        guard isSuspended else { return }
        isSuspended = false
        clock = max(clock, time)
        for slot in slots.inStartOrder() where slots.records[slot]?.blind != true { setDeadline(slot) }
    }

    // MARK: Receivers

    /// `receiver` went offline (after the caller moved the clock): every inside region that only it (and other
    /// offline receivers) heard in the last `exitTimeout` becomes unknown, waiting for them, with no deadline:
    /// a receiver that cannot be heard from must not make a beacon absent.
    mutating func receiverWentOffline(_ receiver: ReceiverID, into events: inout [Event]) {
        guard receiver != .local, receivers.offline.insert(receiver).inserted else { return }
        let since = clock.subtractingReportingOverflow(exitTimeout).partialValue
        for slot in slots.inStartOrder() {
            // Inside, or unknown since it was inside (blind, or its exit pending): what an exit could come from.
            guard let record = slots.records[slot], let region = slots.regions[slot],
                record.lastDetermined == .inside, record.state != .outside
            else { continue }
            let hearing = slots.hearings[slot]
            let room = slots.rules[slot].room
            let recent = (hearing.remote ?? [:]).filter { $0.value >= since && receivers.mayHold($0.key, regionRoom: room) }.map(\.key)
            if record.blind {
                // Already waiting: it now waits for this receiver too, if it heard the region lately.
                if recent.contains(receiver) { slots.hearings[slot].waitingFor.insert(receiver) }
                continue
            }
            guard recent.contains(receiver), hearing.local < since, !record.placedElsewhereSinceSeen,
                recent.allSatisfy({ receivers.offline.contains($0) })
            else { continue }
            clearDeadline(slot)
            slots.records[slot]?.blind = true
            slots.hearings[slot].waitingFor = Set(recent)
            if record.state != .unknown {
                slots.records[slot]?.state = .unknown
                events.append(Event(kind: .didDetermineState(.unknown), slot: slot, region: region, time: clock))
            }
        }
    }

    /// At an exit deadline: a region that a receiver now offline heard within `exitTimeout` before its last
    /// sighting may still be beside that receiver, which cannot say so. It becomes unknown and waits for those
    /// receivers instead of exiting (a beacon that moved from this node's adapter to a receiver that then went
    /// offline, or whose receiver's going offline was not known when it was last heard).
    private mutating func blindInsteadOfExit(_ slot: Int, at time: Int64, into events: inout [Event]) -> Bool {
        guard !receivers.offline.isEmpty, let record = slots.records[slot], let region = slots.regions[slot],
            record.lastDetermined == .inside, let remote = slots.hearings[slot].remote, !record.placedElsewhereSinceSeen
        else { return false }
        let since = (record.lastSeen ?? time).subtractingReportingOverflow(exitTimeout).partialValue
        let room = slots.rules[slot].room
        let waiting = Set(
            remote.filter { $0.value >= since && receivers.offline.contains($0.key) && receivers.mayHold($0.key, regionRoom: room) }.keys)
        guard !waiting.isEmpty else { return false }
        slots.records[slot]?.blind = true
        slots.hearings[slot].waitingFor = waiting
        if record.state != .unknown {
            slots.records[slot]?.state = .unknown
            events.append(Event(kind: .didDetermineState(.unknown), slot: slot, region: region, time: time))
        }
        return true
    }

    /// `receiver` is back: a region blind only for receivers now online gets `exitTimeout` from now to be seen, as
    /// after any blind period (seen: inside again without a second entry; not seen: outside, with an exit).
    mutating func receiverCameOnline(_ receiver: ReceiverID) {
        guard receivers.offline.remove(receiver) != nil else { return }
        for slot in slots.inStartOrder() where slots.records[slot]?.blind == true {
            slots.hearings[slot].waitingFor.remove(receiver)
            guard slots.hearings[slot].waitingFor.isEmpty else { continue }
            slots.records[slot]?.blind = false
            slots.hearings[slot].waitingFor = []
            if !isSuspended { setDeadline(slot) }
        }
    }

    /// Receivers that heard an inside region (or one unknown since it was inside) within `exitTimeout`, and those
    /// blind regions wait for.
    var receiversHoldingRegions: Set<ReceiverID> {
        let since = clock.subtractingReportingOverflow(exitTimeout).partialValue
        var holding: Set<ReceiverID> = []
        for slot in slots.records.indices {
            guard let record = slots.records[slot], record.lastDetermined == .inside, record.state != .outside else { continue }
            holding.formUnion(slots.hearings[slot].waitingFor)
            for (receiver, heard) in slots.hearings[slot].remote ?? [:] where heard >= since { holding.insert(receiver) }
        }
        return holding
    }

    mutating func forgetReceiver(_ receiver: ReceiverID) {
        receivers.forget(receiver)
        for slot in slots.hearings.indices {
            slots.hearings[slot].remote?[receiver] = nil
            // A blind region that waited only for it (a monitor the daemon did not ask, Home Assistant's) gets
            // exitTimeout from now, as when its receivers come back, instead of waiting for ever.
            guard slots.hearings[slot].waitingFor.remove(receiver) != nil, slots.hearings[slot].waitingFor.isEmpty,
                slots.records[slot]?.blind == true
            else { continue }
            slots.records[slot]?.blind = false
            if !isSuspended { setDeadline(slot) }
        }
    }

    // MARK: Internals

    /// Sets the pending transition of the region in `slot` to the clock + `timeout` (`exitTimeout` if nil): the back
    /// of that timeout's list.
    private mutating func setDeadline(_ slot: Int, timeout: Int64? = nil) {
        let timeout = timeout ?? exitTimeout
        guard slots.records[slot] != nil else { return }
        let deadline = Deadlines.deadline(after: clock, timeout: timeout)
        deadlines.set(&slots.records[slot]!, slot: slot, to: deadline, timeout: timeout)
    }

    /// A sighting's refresh: the clock + `timeout`, unless a later deadline set by another beacon of the region (one
    /// that needs longer) is pending, which stays.
    private mutating func extendDeadline(_ slot: Int, timeout: Int64, by identity: BeaconIdentity) {
        guard let record = slots.records[slot] else { return }
        var floor = record.deadlineFloor ?? .min
        if record.deadlineOwner != identity, let pending = record.deadline { floor = max(floor, pending) }
        if floor <= clock { floor = .min }
        slots.records[slot]?.deadlineFloor = floor == .min ? nil : floor
        slots.records[slot]?.deadlineOwner = identity
        if Deadlines.deadline(after: clock, timeout: timeout) >= floor {
            setDeadline(slot, timeout: timeout)
        } else if record.deadline != floor {
            // The floor is no clock + timeout, so it cannot join a list in order: it waits in the heap.
            deadlines.setOutOfOrder(&slots.records[slot]!, slot: slot, to: floor)
        }
    }

    private mutating func clearDeadline(_ slot: Int) {
        guard slots.records[slot] != nil else { return }
        deadlines.clear(&slots.records[slot]!)
        slots.records[slot]?.entryRun = nil
        slots.records[slot]?.deadlineOwner = nil
        slots.records[slot]?.deadlineFloor = nil
    }

    private mutating func determineInside(_ slot: Int, timeout: Int64, into events: inout [Event]) {
        guard let record = slots.records[slot], let region = slots.regions[slot] else { return }
        slots.records[slot]?.state = .inside
        slots.records[slot]?.blind = false
        slots.records[slot]?.entryRun = nil
        if record.blind { slots.hearings[slot].waitingFor = [] }
        slots.records[slot]?.lastDetermined = .inside
        slots.records[slot]?.lastSeen = clock
        setDeadline(slot, timeout: timeout)
        events.append(Event(kind: .didDetermineState(.inside), slot: slot, region: region, time: clock))
        if record.lastDetermined != .inside && region.notifyOnEntry {
            events.append(Event(kind: .didEnterRegion, slot: slot, region: region, time: clock))
        }
    }

    /// Makes the region in `slot` outside; its deadline has already been taken off the queues.
    private mutating func determineOutside(_ slot: Int, at time: Int64, into events: inout [Event]) {
        guard let record = slots.records[slot], let region = slots.regions[slot] else { return }
        slots.records[slot]?.state = .outside
        slots.records[slot]?.lastDetermined = .outside
        events.append(Event(kind: .didDetermineState(.outside), slot: slot, region: region, time: time))
        if record.lastDetermined == .inside && region.notifyOnExit {
            events.append(Event(kind: .didExitRegion, slot: slot, region: region, time: time))
        }
    }
}
