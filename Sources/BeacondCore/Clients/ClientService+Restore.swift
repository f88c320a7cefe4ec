package import BeaconKit
import Fleet

/// A restart: the regions saved before it go back under their clients.
extension ClientService {
    /// Puts back the regions saved before the restart (`loaded`, read from the state database), each under its
    /// client (kept detached until the app registers again), and keeps them blind until the scanner sees: the time
    /// beacond was down counts as time nothing could be seen, never as absence. So a beacon still present gives no
    /// new `DidEnterRegion`, and one that left while beacond was down gives exactly one `DidExitRegion`,
    /// `exit_timeout` after scanning resumed (by then more than the exit timeout has passed since it was last seen).
    /// Regions of apps no longer declared or no longer allowed to monitor are dropped, each logged; a private
    /// device's region follows its name to its key now. Returns how many regions resumed, and the rooms their
    /// hearings name, numbered (offline until heard).
    package mutating func restore(
        _ loaded: [StoredRegion], highestClient: Int, _ context: Context, _ outbox: inout CoreOutbox,
        _ persistence: inout StatePersistence
    ) -> (restored: Int, receivers: [String: ReceiverID]) {
        let configuration = context.configuration
        let now = outbox.now
        registry.reserveNumbers(through: highestClient)
        // Blind first, then restore: a region restored into a monitor that sees would be timed from its saved
        // last sighting, which may be long past (it is saved every few seconds, and the downtime may be long), so
        // suspending afterwards would fire its exit right here, with nobody to route it to, and the exit would be
        // lost. Restored while blind, every region waits for a full exit_timeout of scanning instead.
        _ = engine.suspendDetection(at: now)
        let plan = RegionRestore.plan(
            loaded,
            status: { appID in
                configuration.apps[appID] == nil ? nil : context.effectiveStatus(appID)
            }, declaredWhere: "\(context.configDirectory)/apps.d")
        for dropped in plan.dropped {
            outbox.log(.notice, "\(dropped.count) saved regions of \(dropped.appID) not resumed: \(dropped.reason)")
            persistence.saveLater(.removeClient(dropped.client), &outbox)
        }
        var resumedPlan = plan.resumed
        var moved: [(client: Int, region: BeaconRegion)] = []
        for index in resumedPlan.indices {
            let entry = resumedPlan[index]
            guard let app = configuration.apps[entry.appID] else { continue }
            resumedPlan[index].regions = entry.regions.compactMap { monitored in
                switch ClientChanges.followingDevice(monitored, app: app, configuration) {
                case .unchanged: return monitored
                case .moved(let following):
                    moved.append((entry.client, following.region))
                    return following
                case .gone(let name):
                    outbox.log(
                        .warning,
                        "saved region \(monitored.region.identifier) of \(entry.appID) not resumed: no private device named "
                            + "'\(name)' is declared for it any more (declare its key again under [devices] and start it again)")
                    persistence.saveLater(.removeRegion(client: entry.client, identifier: monitored.region.identifier), &outbox)
                    return nil
                }
            }
        }
        var restored = 0
        let heard = Dictionary(
            loaded.map { (EngineKey.region(client: $0.client, identifier: $0.monitored.region.identifier), $0) },
            uniquingKeysWith: { _, last in last })
        var receivers: [String: ReceiverID] = [:]
        for resumed in resumedPlan where !resumed.regions.isEmpty {
            registry.restore(number: resumed.client, appID: resumed.appID, regions: resumed.regions.map(\.region))
            for monitored in resumed.regions {
                engine.restore(monitored, client: resumed.client, at: now)
                let key = EngineKey.region(client: resumed.client, identifier: monitored.region.identifier)
                guard let hearing = heard[key]?.heardBy else { continue }
                let record = StoredHearing.receiverRecord(hearing, numbering: &receivers)
                engine.restoreReceivers(
                    record, client: resumed.client, identifier: monitored.region.identifier,
                    offline: Set(receivers.values))
            }
            restored += resumed.regions.count
        }
        for (client, region) in moved {
            guard let session = registry[client] else { continue }
            outbox.log(
                .notice, "saved region \(region.identifier) of \(session.appID) follows device \(region.constraint.deviceName ?? "") to its new key")
            persistence.saveLater(.saveRegion(storedRegion(session, region)), &outbox)
        }
        return (restored, receivers)
    }
}
