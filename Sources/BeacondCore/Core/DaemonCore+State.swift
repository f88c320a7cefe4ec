package import BeaconKit
import Fleet
import BeacondAPI

/// Durable state as the core uses it: what the engine's regions are worth saving (`StatePersistence` decides when
/// and writes), and putting them back at start.
///
/// Sightings only move a region's last-seen time: that is saved every `lastSeenSaveInterval` while sightings arrive,
/// and at shutdown. After a restart the exit timing does not depend on it (see `restoreRegions`).
extension DaemonCore {
    package mutating func saveLater(_ change: StateChange) {
        persistence.saveLater(change, &outbox)
    }

    /// Writes every pending change in one transaction, with the engine's current values of the regions marked
    /// changed (`StatePersistence.commit`).
    @discardableResult
    package mutating func commitState(_ durability: StateDurability = .processCrash, force: Bool = false) -> StateDatabaseError? {
        var current: [EngineKey: StateJournal.RegionValues] = [:]
        let keys = persistence.regionsToRead(force: force)
        if !keys.isEmpty {
            let rooms = receiverRooms()
            let exitTimeout = Self.monitoringConfiguration(configuration).exitTimeout
            for key in keys {
                guard let monitored = engine.monitoredRegion(for: key) else { continue }
                current[key] = StateJournal.RegionValues(
                    monitored: monitored, heardBy: Self.storedHearing(engine.receiverRecord(for: key), rooms: rooms, exitTimeout: exitTimeout))
            }
        }
        return persistence.commit(durability, force: force, current: current, &outbox)
    }

    /// Outside a commit (a watch event, GetStatus): recover or report a lost database now, not at the next change.
    package mutating func checkStateDatabase() {
        if case .commit(let force) = persistence.checkDatabase(&outbox) { commitState(force: force) }
    }

    // MARK: Region rows

    package func storedRegion(_ session: ClientSession, _ region: BeaconRegion) -> StoredRegion {
        let monitored =
            engine.monitoredRegion(client: session.number, identifier: region.identifier)
            ?? MonitoredRegion(region: region, state: .unknown, lastSeen: nil, lastDeterminedState: .unknown)
        return StoredRegion(client: session.number, appID: session.appID, monitored: monitored)
    }

    /// While sightings arrive, one timer saves the regions' last-seen times; none runs while nothing is seen.
    package mutating func scheduleLastSeenSave() {
        guard !outbox.isArmed(.lastSeenSave), engine.monitoredCount > 0 else { return }
        outbox.arm(.lastSeenSave, at: now + Self.lastSeenSaveInterval)
    }

    package mutating func markSeenRegionsChanged() {
        persistence.markRegionsChanged(engine.monitoredRegions.lazy.filter { $0.value.lastSeen != nil }.map(\.key))
    }

    /// Each remote receiver's room (also while no node runs, and after shutdown), to save hearings by room.
    package func receiverRooms() -> [ReceiverID: String] { fleet.rooms }

    /// A region's hearings by room, for its row (nil when only this node's scanner heard it, or nobody). Hearings
    /// more than `exitTimeout` older than the latest can decide nothing (the monitor looks back that far from a
    /// region's last sighting) and are left out, so a row stays small however many receivers ever heard it; the
    /// rooms a blind region waits for are always kept.
    package static func storedHearing(_ record: ReceiverRecord?, rooms: [ReceiverID: String], exitTimeout: Duration) -> StoredHearing? {
        guard let record else { return nil }
        let latest = max(record.local ?? .min, record.remote.values.max() ?? .min)
        let window =
            Int64(clamping: exitTimeout.components.seconds) &* 1_000_000
            &+ Int64(clamping: exitTimeout.components.attoseconds / 1_000_000_000_000)
        let since = latest.subtractingReportingOverflow(window).partialValue
        var remote: [String: Int64] = [:]
        for (id, time) in record.remote where time >= since || record.waitingFor?.contains(id) == true {
            if let room = rooms[id] { remote[room] = time }
        }
        let waiting = record.waitingFor.map { $0.compactMap { rooms[$0] }.sorted() }
        guard !remote.isEmpty || waiting?.isEmpty == false else { return nil }
        return StoredHearing(local: record.local, remote: remote, waitingFor: waiting)
    }

    /// A saved hearing for the monitor: each room gets the number it already has, else the next free one. Rooms
    /// not in ESPresense's form (a hand edit) are left out.
    package static func receiverRecord(_ hearing: StoredHearing, numbering: inout [String: ReceiverID]) -> ReceiverRecord {
        func id(_ room: String) -> ReceiverID? {
            guard ReceiverDirectory.isRoom(room) else { return nil }
            if let known = numbering[room] { return known }
            let next = ReceiverID(rawValue: UInt32(numbering.count + 1))
            numbering[room] = next
            return next
        }
        var remote: [ReceiverID: Int64] = [:]
        for (room, time) in hearing.remote.sorted(by: { $0.key < $1.key }) { if let id = id(room) { remote[id] = time } }
        let waiting = hearing.waitingFor.map { Set($0.compactMap(id)) }
        return ReceiverRecord(local: hearing.local, remote: remote, waitingFor: waiting)
    }

    // MARK: Restart

    /// Puts back the regions saved before the restart, each under its client (kept detached until the app
    /// registers again), and keeps them blind until the scanner sees: the time beacond was down counts as time
    /// nothing could be seen, never as absence. So a beacon still present gives no new `DidEnterRegion`, and one
    /// that left while beacond was down gives exactly one `DidExitRegion`, `exit_timeout` after scanning resumed
    /// (by then more than the exit timeout has passed since it was last seen). Regions of apps no longer declared
    /// or no longer allowed to monitor are dropped, each logged.
    package mutating func restoreRegions(at now: Timestamp) throws(StateDatabaseError) -> [DaemonEffect] {
        outbox.now = now
        // A bounded state, whatever the file holds: each app's first max_regions_per_app saved regions resume, the
        // rest are removed, and said (a file from before the limit, or a limit lowered since).
        let perApp = configuration.maxRegionsPerApp
        do {
            for (appID, count) in try persistence.trimRegions(perApp: perApp).sorted(by: { $0.key < $1.key }) {
                let file = configuration.configFile
                outbox.log(
                    .warning,
                    """
                    \(count) saved regions of \(appID) removed: beyond max_regions_per_app = \(perApp) in \(file) \
                    (its first \(perApp) saved regions resume); raise the limit before a restart to keep more
                    """
                )
            }
        } catch {
            outbox.log(.error, "\(error); only the first \(perApp) saved regions of each app resume, the others stay in the file")
        }
        let loaded = try persistence.loadRegions(perApp: perApp)
        for problem in loaded.problems { outbox.log(.warning, "\(persistence.file): \(problem)") }
        clients.reserveNumbers(through: try persistence.highestStoredClient())
        // Blind first, then restore: a region restored into a monitor that sees would be timed from its saved
        // last sighting, which may be long past (it is saved every few seconds, and the downtime may be long), so
        // suspending afterwards would fire its exit right here, with nobody to route it to, and the exit would be
        // lost. Restored while blind, every region waits for a full exit_timeout of scanning instead.
        _ = engine.suspendDetection(at: now)
        let core = self
        let plan = RegionRestore.plan(
            loaded.regions,
            status: { appID in
                core.configuration.apps[appID] == nil ? nil : core.effectiveStatus(appID)
            }, declaredWhere: "\(configDirectory)/apps.d")
        for dropped in plan.dropped {
            outbox.log(.notice, "\(dropped.count) saved regions of \(dropped.appID) not resumed: \(dropped.reason)")
            saveLater(.removeClient(dropped.client))
        }
        var resumedPlan = plan.resumed
        var moved: [(client: Int, region: BeaconRegion)] = []
        for index in resumedPlan.indices {
            let entry = resumedPlan[index]
            guard let app = configuration.apps[entry.appID] else { continue }
            resumedPlan[index].regions = entry.regions.compactMap { monitored in
                switch followingDevice(monitored, app: app) {
                case .unchanged: return monitored
                case .moved(let following):
                    moved.append((entry.client, following.region))
                    return following
                case .gone(let name):
                    outbox.log(
                        .warning,
                        "saved region \(monitored.region.identifier) of \(entry.appID) not resumed: no private device named "
                            + "'\(name)' is declared for it any more (declare its key again under [devices] and start it again)")
                    saveLater(.removeRegion(client: entry.client, identifier: monitored.region.identifier))
                    return nil
                }
            }
        }
        var restored = 0
        let heard = Dictionary(
            loaded.regions.map { (EngineKey.region(client: $0.client, identifier: $0.monitored.region.identifier), $0) },
            uniquingKeysWith: { _, last in last })
        var receivers: [String: ReceiverID] = [:]
        for resumed in resumedPlan where !resumed.regions.isEmpty {
            clients.restore(number: resumed.client, appID: resumed.appID, regions: resumed.regions.map(\.region))
            for monitored in resumed.regions {
                engine.restore(monitored, client: resumed.client, at: now)
                let key = EngineKey.region(client: resumed.client, identifier: monitored.region.identifier)
                guard let hearing = heard[key]?.heardBy else { continue }
                let record = Self.receiverRecord(hearing, numbering: &receivers)
                engine.restoreReceivers(
                    record, client: resumed.client, identifier: monitored.region.identifier,
                    offline: Set(receivers.values))
            }
            restored += resumed.regions.count
        }
        for (client, region) in moved {
            guard let session = clients[client] else { continue }
            outbox.log(
                .notice, "saved region \(region.identifier) of \(session.appID) follows device \(region.constraint.deviceName ?? "") to its new key")
            saveLater(.saveRegion(storedRegion(session, region)))
        }
        // Offline until their status or a reading says otherwise (or `[mqtt]` turns out to be off).
        for (room, id) in receivers { fleet.learn(id, room) }
        guard restored > 0 else { return outbox.take() }
        let apps = clients.appIDs.count
        outbox.log(
            .info,
            "resumed \(restored) monitored regions of \(apps) apps from \(persistence.file); "
                + "they are unknown until the scanner has looked for exit_timeout"
        )
        return outbox.take()
    }
}
