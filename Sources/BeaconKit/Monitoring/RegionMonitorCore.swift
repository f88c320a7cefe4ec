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
        /// Where `deadline` sits in the list for `listTimeout`; `nil` with a deadline means it waits in
        /// `restoredDeadlines`.
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

    /// How one sighting counts under a region's hysteresis.
    private enum SightingWeight { case enters, refreshes, ignored }

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
    }

    let exitTimeout: Int64
    let hysteresis: RSSIHysteresis?
    private(set) var records: [Record?] = []
    /// The region in each slot in use, beside its record.
    private(set) var regions: [BeaconRegion?] = []
    /// Each slot's thresholds, beside its record.
    private var thresholds: [Thresholds] = []
    /// Each slot's room, entry delay and exit delay.
    private var rules: [Rules] = []
    /// Who heard each slot's region lately, beside its record.
    private var hearings: [Hearing] = []
    /// Remote receivers known to be offline now.
    private(set) var offlineReceivers: Set<ReceiverID> = []
    /// Each remote receiver's room, as its latest reading said: only a receiver of a region's room can hold that
    /// region's exit when it goes offline.
    private var receiverRooms: [ReceiverID: String] = [:]
    private var freeSlots: [Int] = []
    /// The timeout each region entering at this sighting will wait, between matching and entering.
    private var pendingTimeouts: [Int: Int64] = [:]
    private var index = RegionIndex<Int>()
    /// Pending deadlines, one list per timeout: every deadline in a list is the clock when it was set + that
    /// timeout, so each list is in deadline order (see `DeadlineList`). Without adaptive exits or ExitDelay there is
    /// one list; adaptive timeouts are rounded up to 8 steps per octave so there are few.
    private var deadlines: [Int64: DeadlineList] = [:]
    /// Deadlines that are no clock + timeout: restored regions not refreshed since, and deadline floors (another
    /// beacon of the region needs longer). Entries whose region moved on are dropped lazily.
    private var restoredDeadlines = DeadlineQueue()
    /// The latest time any call has passed in, µs since the epoch.
    private(set) var clock: Int64 = .min
    private var nextOrdinal: UInt64 = 0
    private(set) var isSuspended = false

    init(_ configuration: MonitoringConfiguration) {
        exitTimeout = configuration.exitTimeout.wholeMicroseconds
        hysteresis = configuration.hysteresis
    }

    func snapshot(_ slot: Int) -> MonitoredRegion? {
        guard let record = records[slot], let region = regions[slot] else { return nil }
        return MonitoredRegion(
            region: region, state: record.state,
            lastSeen: record.lastSeen.map { Timestamp(microsecondsSinceEpoch: $0) },
            lastDeterminedState: record.lastDetermined)
    }

    var queuedDeadlineCount: Int { deadlines.values.reduce(0) { $0 + $1.count } + restoredDeadlines.count }

    /// The earliest pending transition, exact because the lists hold only live deadlines and the heap's outdated
    /// top entries are dropped after every change.
    var earliestDeadline: Int64? {
        var earliest = restoredDeadlines.first?.deadline
        for list in deadlines.values {
            if let front = list.front?.node.deadline, front < earliest ?? .max { earliest = front }
        }
        return earliest
    }

    // MARK: Operations

    /// Moves the clock to `time` (never backwards) after firing every transition due by then; returns the clock.
    @discardableResult
    mutating func moveClock(to time: Int64, into events: inout [Event]) -> Int64 {
        let target = max(clock, time)
        while let due = earliestDeadline, due <= target {
            var slots: [(ordinal: UInt64, slot: Int)] = []
            for timeout in deadlines.keys {
                while let (listSlot, node) = deadlines[timeout]?.front, node.deadline == due {
                    deadlines[timeout]?.remove(listSlot)
                    slots.append((node.ordinal, node.region))
                    records[node.region]?.listSlot = nil
                    records[node.region]?.deadline = nil
                }
                if deadlines[timeout]?.count == 0, timeout != exitTimeout { deadlines[timeout] = nil }
            }
            while let entry = restoredDeadlines.first, entry.deadline == due {
                restoredDeadlines.popFirst()
                guard isLive(entry) else { continue }
                slots.append((entry.ordinal, entry.region))
                records[entry.region]?.deadline = nil
            }
            dropOutdatedRestoredDeadlines()
            slots.sort { $0.ordinal < $1.ordinal }
            for (_, slot) in slots where !blindInsteadOfExit(slot, at: due, into: &events) {
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
        defer { dropOutdatedRestoredDeadlines() }
        let slot = slot ?? allocateSlot()
        clearDeadline(slot)
        index.insert(saved.region.constraint, for: slot)
        let state = isSuspended ? .unknown : saved.state
        let lastSeen = saved.lastSeen?.microsecondsSinceEpoch
        regions[slot] = saved.region
        thresholds[slot] = Thresholds(saved.region.hysteresis ?? hysteresis)
        rules[slot] = Rules(
            room: saved.region.room,
            entryDelay: max(0, saved.region.entryDelay?.wholeMicroseconds ?? 0),
            exitDelay: saved.region.exitDelay.map { max(1, $0.wholeMicroseconds) })
        hearings[slot] = Hearing()
        records[slot] = Record(
            state: state,
            lastSeen: saved.state == .inside ? lastSeen ?? time : lastSeen,
            lastDetermined: saved.state == .unknown ? saved.lastDeterminedState : saved.state,
            ordinal: nextOrdinal, deadline: nil, listSlot: nil)
        nextOrdinal += 1
        let waitsFrom: Int64
        switch state {
        case .inside: waitsFrom = records[slot]?.lastSeen ?? time
        case .unknown where !isSuspended: waitsFrom = time
        case .unknown, .outside: return slot
        }
        if restored {
            let deadline = deadline(after: waitsFrom)
            records[slot]?.deadline = deadline
            restoredDeadlines.push(.init(deadline: deadline, ordinal: nextOrdinal - 1, region: slot))
        } else {
            setDeadline(slot)
        }
        return slot
    }

    /// Who heard the region in `slot` lately and whether it waits for offline receivers (to carry it into a rebuilt
    /// monitor).
    func receiverRecord(_ slot: Int) -> ReceiverRecord? {
        guard let record = records[slot] else { return nil }
        let hearing = hearings[slot]
        return ReceiverRecord(
            local: hearing.local == .min ? nil : hearing.local, remote: hearing.remote ?? [:],
            waitingFor: record.blind ? hearing.waitingFor : nil)
    }

    /// Puts back what `receiverRecord` said, after `install`: a region that waited still waits, with no deadline.
    mutating func applyReceiverRecord(_ saved: ReceiverRecord, to slot: Int, offline: Set<ReceiverID>) {
        offlineReceivers.formUnion(offline)
        hearings[slot].local = saved.local ?? .min
        hearings[slot].remote = saved.remote.isEmpty ? nil : saved.remote
        guard let waiting = saved.waitingFor, records[slot] != nil else { return }
        clearDeadline(slot)
        records[slot]?.state = .unknown
        records[slot]?.blind = true
        hearings[slot].waitingFor = waiting.intersection(offlineReceivers)
        if hearings[slot].waitingFor.isEmpty {
            records[slot]?.blind = false
            if !isSuspended { setDeadline(slot) }
        }
        dropOutdatedRestoredDeadlines()
    }

    /// Forgets the region in `slot`; the slot may be reused.
    mutating func remove(_ slot: Int) {
        clearDeadline(slot)
        index.remove(slot)
        records[slot] = nil
        regions[slot] = nil
        freeSlots.append(slot)
        dropOutdatedRestoredDeadlines()
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
        defer { dropOutdatedRestoredDeadlines() }
        guard !isSuspended else { return }
        if receiver != .local, let receiverRoom, receiverRooms[receiver] != receiverRoom { receiverRooms[receiver] = receiverRoom }
        let index = self.index
        var entering: [(ordinal: UInt64, slot: Int)] = []
        index.forEachMatch(of: identity) { slot in
            var weight = Self.weight(of: rssi, thresholds[slot])
            if let wanted = rules[slot].room {
                switch room {
                // Where the beacon is cannot be said (its room's receivers are offline): keep an inside region
                // inside, never enter one; leaving is decided once it is placed again.
                case .unknown: if weight == .enters { weight = .refreshes }
                case .room(let name) where name == wanted: break
                case .room:
                    weight = .ignored
                    records[slot]?.placedElsewhere = clock
                case .unplaced: weight = .ignored
                }
            }
            guard weight != .ignored else { return }
            let timeout = rules[slot].exitDelay ?? silence ?? exitTimeout
            if receiver == .local {
                hearings[slot].local = clock
            } else {
                if hearings[slot].remote == nil { hearings[slot].remote = [:] }
                hearings[slot].remote?[receiver] = clock
            }
            switch records[slot]?.state {
            case .inside?:
                records[slot]?.lastSeen = clock
                extendDeadline(slot, timeout: timeout, by: identity)
            case .some where weight == .enters:
                guard let record = records[slot] else { return }
                if rules[slot].entryDelay > 0 {
                    // An unbroken run of sightings (no silence that would have exited) for EntryDelay enters.
                    var run = record.entryRun ?? (clock, clock)
                    if clock - run.latest > timeout { run = (clock, clock) }
                    run.latest = clock
                    records[slot]?.entryRun = run
                    guard clock - run.since >= rules[slot].entryDelay else { return }
                }
                entering.append((record.ordinal, slot))
                pendingTimeouts[slot] = timeout
                records[slot]?.deadlineOwner = identity
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
        for slot in records.indices { records[slot]?.entryRun = nil }
        restoredDeadlines.removeAll()
        for slot in slotsInStartOrder() {
            records[slot]?.deadline = nil
            records[slot]?.listSlot = nil
            guard let region = regions[slot], records[slot]?.state != .unknown else { continue }
            records[slot]?.state = .unknown
            events.append(Event(kind: .didDetermineState(.unknown), slot: slot, region: region, time: clock))
        }
    }

    /// Gives every region, all unknown, `exitTimeout` from `time` to be seen (but a region blind for an offline
    /// receiver, which waits for it).
    mutating func resume(at time: Int64) {
        guard isSuspended else { return }
        isSuspended = false
        clock = max(clock, time)
        for slot in slotsInStartOrder() where records[slot]?.blind != true { setDeadline(slot) }
    }

    // MARK: Receivers

    /// `receiver` went offline (after the caller moved the clock): every inside region that only it (and other
    /// offline receivers) heard in the last `exitTimeout` becomes unknown, waiting for them, with no deadline:
    /// a receiver that cannot be heard from must not make a beacon absent.
    mutating func receiverWentOffline(_ receiver: ReceiverID, into events: inout [Event]) {
        guard receiver != .local, offlineReceivers.insert(receiver).inserted else { return }
        let since = clock.subtractingReportingOverflow(exitTimeout).partialValue
        for slot in slotsInStartOrder() {
            // Inside, or unknown since it was inside (blind, or its exit pending): what an exit could come from.
            guard let record = records[slot], let region = regions[slot],
                record.lastDetermined == .inside, record.state != .outside
            else { continue }
            let hearing = hearings[slot]
            let recent = (hearing.remote ?? [:]).filter { $0.value >= since && mayHold(slot, $0.key) }.map(\.key)
            if record.blind {
                // Already waiting: it now waits for this receiver too, if it heard the region lately.
                if recent.contains(receiver) { hearings[slot].waitingFor.insert(receiver) }
                continue
            }
            guard recent.contains(receiver), hearing.local < since, !placedElsewhereSince(record),
                recent.allSatisfy({ offlineReceivers.contains($0) })
            else { continue }
            clearDeadline(slot)
            records[slot]?.blind = true
            hearings[slot].waitingFor = Set(recent)
            if record.state != .unknown {
                records[slot]?.state = .unknown
                events.append(Event(kind: .didDetermineState(.unknown), slot: slot, region: region, time: clock))
            }
        }
    }

    /// At an exit deadline: a region that a receiver now offline heard within `exitTimeout` before its last
    /// sighting may still be beside that receiver, which cannot say so. It becomes unknown and waits for those
    /// receivers instead of exiting (a beacon that moved from this node's adapter to a receiver that then went
    /// offline, or whose receiver's going offline was not known when it was last heard).
    private mutating func blindInsteadOfExit(_ slot: Int, at time: Int64, into events: inout [Event]) -> Bool {
        guard !offlineReceivers.isEmpty, let record = records[slot], let region = regions[slot],
            record.lastDetermined == .inside, let remote = hearings[slot].remote, !placedElsewhereSince(record)
        else { return false }
        let since = (record.lastSeen ?? time).subtractingReportingOverflow(exitTimeout).partialValue
        let waiting = Set(remote.filter { $0.value >= since && offlineReceivers.contains($0.key) && mayHold(slot, $0.key) }.keys)
        guard !waiting.isEmpty else { return false }
        records[slot]?.blind = true
        hearings[slot].waitingFor = waiting
        if record.state != .unknown {
            records[slot]?.state = .unknown
            events.append(Event(kind: .didDetermineState(.unknown), slot: slot, region: region, time: time))
        }
        return true
    }

    /// `receiver` is back: a region blind only for receivers now online gets `exitTimeout` from now to be seen, as
    /// after any blind period (seen: inside again without a second entry; not seen: outside, with an exit).
    mutating func receiverCameOnline(_ receiver: ReceiverID) {
        guard offlineReceivers.remove(receiver) != nil else { return }
        for slot in slotsInStartOrder() where records[slot]?.blind == true {
            hearings[slot].waitingFor.remove(receiver)
            guard hearings[slot].waitingFor.isEmpty else { continue }
            records[slot]?.blind = false
            hearings[slot].waitingFor = []
            if !isSuspended { setDeadline(slot) }
        }
    }

    /// Receivers that heard an inside region (or one unknown since it was inside) within `exitTimeout`, and those
    /// blind regions wait for.
    var receiversHoldingRegions: Set<ReceiverID> {
        let since = clock.subtractingReportingOverflow(exitTimeout).partialValue
        var holding: Set<ReceiverID> = []
        for slot in records.indices {
            guard let record = records[slot], record.lastDetermined == .inside, record.state != .outside else { continue }
            holding.formUnion(hearings[slot].waitingFor)
            for (receiver, heard) in hearings[slot].remote ?? [:] where heard >= since { holding.insert(receiver) }
        }
        return holding
    }

    mutating func forgetReceiver(_ receiver: ReceiverID) {
        offlineReceivers.remove(receiver)
        receiverRooms[receiver] = nil
        for slot in hearings.indices {
            hearings[slot].remote?[receiver] = nil
            // A blind region that waited only for it (a monitor the daemon did not ask, Home Assistant's) gets
            // exitTimeout from now, as when its receivers come back, instead of waiting for ever.
            guard hearings[slot].waitingFor.remove(receiver) != nil, hearings[slot].waitingFor.isEmpty,
                records[slot]?.blind == true
            else { continue }
            records[slot]?.blind = false
            if !isSuspended { setDeadline(slot) }
        }
    }

    /// Whether `receiver` going offline may hold the exit of the region in `slot`: any receiver for a region without
    /// a room; for one with a room, only a receiver in that room (one that could place the beacon there). A receiver
    /// whose room is not known yet (none of its readings since a restart) may, as before rooms were scoped.
    private func mayHold(_ slot: Int, _ receiver: ReceiverID) -> Bool {
        guard let room = rules[slot].room, let receiverRoom = receiverRooms[receiver] else { return true }
        return receiverRoom == room
    }

    /// A region with a room whose beacon was placed in another room since it last counted: it is leaving, placed
    /// there by receivers that are online.
    private func placedElsewhereSince(_ record: Record) -> Bool {
        record.placedElsewhere != .min && record.placedElsewhere >= (record.lastSeen ?? .min)
    }

    // MARK: Internals

    private mutating func allocateSlot() -> Int {
        if let slot = freeSlots.popLast() { return slot }
        records.append(nil)
        regions.append(nil)
        thresholds.append(.countAll)
        rules.append(Rules())
        hearings.append(Hearing())
        return records.count - 1
    }

    /// A restored deadline still applies while its slot holds the region restored, not refreshed into the list
    /// since, and still waiting for that time.
    private func isLive(_ entry: DeadlineQueue.Entry) -> Bool {
        guard let record = records[entry.region] else { return false }
        return record.ordinal == entry.ordinal && record.listSlot == nil && record.deadline == entry.deadline
    }

    private mutating func dropOutdatedRestoredDeadlines() {
        while let entry = restoredDeadlines.first, !isLive(entry) { restoredDeadlines.popFirst() }
    }

    /// Sets the pending transition of the region in `slot` to the clock + `timeout` (`exitTimeout` if nil): the back
    /// of that timeout's list.
    private mutating func setDeadline(_ slot: Int, timeout: Int64? = nil) {
        let timeout = timeout ?? exitTimeout
        let deadline = deadline(after: clock, timeout: timeout)
        guard let record = records[slot] else { return }
        if let listSlot = record.listSlot, record.listTimeout == timeout {
            deadlines[timeout]?.moveToBack(listSlot, deadline: deadline)
        } else {
            if let listSlot = record.listSlot { deadlines[record.listTimeout]?.remove(listSlot) }
            records[slot]?.listSlot = deadlines[timeout, default: DeadlineList()]
                .append(region: slot, ordinal: record.ordinal, deadline: deadline)
            records[slot]?.listTimeout = timeout
        }
        records[slot]?.deadline = deadline
    }

    /// A sighting's refresh: the clock + `timeout`, unless a later deadline set by another beacon of the region (one
    /// that needs longer) is pending, which stays.
    private mutating func extendDeadline(_ slot: Int, timeout: Int64, by identity: BeaconIdentity) {
        guard let record = records[slot] else { return }
        var floor = record.deadlineFloor ?? .min
        if record.deadlineOwner != identity, let pending = record.deadline { floor = max(floor, pending) }
        if floor <= clock { floor = .min }
        records[slot]?.deadlineFloor = floor == .min ? nil : floor
        records[slot]?.deadlineOwner = identity
        if deadline(after: clock, timeout: timeout) >= floor {
            setDeadline(slot, timeout: timeout)
        } else if record.deadline != floor {
            // The floor is no clock + timeout, so it cannot join a list in order: it waits in the heap.
            if let listSlot = record.listSlot { deadlines[record.listTimeout]?.remove(listSlot) }
            records[slot]?.listSlot = nil
            records[slot]?.deadline = floor
            restoredDeadlines.push(.init(deadline: floor, ordinal: record.ordinal, region: slot))
        }
    }

    private mutating func clearDeadline(_ slot: Int) {
        if let record = records[slot], let listSlot = record.listSlot { deadlines[record.listTimeout]?.remove(listSlot) }
        records[slot]?.listSlot = nil
        records[slot]?.deadline = nil
        records[slot]?.entryRun = nil
        records[slot]?.deadlineOwner = nil
        records[slot]?.deadlineFloor = nil
    }

    private func deadline(after time: Int64, timeout: Int64? = nil) -> Int64 {
        let (sum, overflow) = time.addingReportingOverflow(timeout ?? exitTimeout)
        return overflow ? .max : sum
    }

    private static func weight(of rssi: Int8?, _ thresholds: Thresholds) -> SightingWeight {
        guard let rssi else { return .enters }
        if Int16(rssi) >= thresholds.enterAtOrAbove { return .enters }
        return Int16(rssi) >= thresholds.absentBelow ? .refreshes : .ignored
    }

    private mutating func determineInside(_ slot: Int, timeout: Int64, into events: inout [Event]) {
        guard let record = records[slot], let region = regions[slot] else { return }
        records[slot]?.state = .inside
        records[slot]?.blind = false
        records[slot]?.entryRun = nil
        if record.blind { hearings[slot].waitingFor = [] }
        records[slot]?.lastDetermined = .inside
        records[slot]?.lastSeen = clock
        setDeadline(slot, timeout: timeout)
        events.append(Event(kind: .didDetermineState(.inside), slot: slot, region: region, time: clock))
        if record.lastDetermined != .inside && region.notifyOnEntry {
            events.append(Event(kind: .didEnterRegion, slot: slot, region: region, time: clock))
        }
    }

    /// Makes the region in `slot` outside; its deadline has already been taken off the queues.
    private mutating func determineOutside(_ slot: Int, at time: Int64, into events: inout [Event]) {
        guard let record = records[slot], let region = regions[slot] else { return }
        records[slot]?.state = .outside
        records[slot]?.lastDetermined = .outside
        events.append(Event(kind: .didDetermineState(.outside), slot: slot, region: region, time: time))
        if record.lastDetermined == .inside && region.notifyOnExit {
            events.append(Event(kind: .didExitRegion, slot: slot, region: region, time: time))
        }
    }

    private func slotsInStartOrder() -> [Int] {
        records.indices.compactMap { slot in records[slot].map { ($0.ordinal, slot) } }.sorted { $0.0 < $1.0 }.map(\.1)
    }
}
