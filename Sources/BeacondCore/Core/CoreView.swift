package import BeaconKit
package import Fleet

/// What the adapters may read of the core: the answers the bus gives (properties, `GetStatus`, the `List*`
/// pages) in the domain's terms, never the core's parts, and nothing that changes it. `BeaconDaemon` holds the core
/// privately and hands out only this, so the bus cannot reach the registry, the engine or the database.
///
/// A view is a copy of the core's value (its storage is shared until the core changes, so it is cheap); read it
/// and drop it, as an answer to one call.
package struct CoreView {
    private let core: DaemonCore

    package init(_ core: DaemonCore) { self.core = core }

    // MARK: Settings and state

    /// The configuration in force (the last good one after a rejected reload).
    package var configuration: DaemonConfiguration { core.configuration }
    /// Why the last reload was rejected, if it was.
    package var rejectedConfiguration: String? { core.source.rejection }
    /// Location services as clients are told: the configuration's and the administrator's switch together.
    package var locationServicesEnabled: Bool { core.policy.locationServicesEnabled }
    /// The administrator's switch alone (`SetLocationServicesEnabled`).
    package var locationServicesSwitch: Bool { core.authorization.servicesSwitch }
    /// What the scanner is doing, with the detail status shows.
    package var scanner: ScannerPhase { core.scanControl.phase }
    /// `Manager1.ScannerState` as last signalled (it changes only with a signal).
    package var scannerState: String { core.scanControl.shownState }
    /// Why the state cannot be saved now, if it cannot.
    package var stateError: String? { core.persistence.journal.failure?.reason }
    /// Why no `[mqtt]` node runs although one is configured.
    package var mqttProblem: String? { core.fleet.problem }

    /// Each app's queued events, read from the state database through the core's port to it.
    package func queuedEventCounts() throws(StateDatabaseError) -> [String: Int] { try core.persistence.queuedEventCounts() }

    // MARK: Clients, regions, authorization

    package func client(_ number: Int) -> ClientSession? { core.clients[number] }
    /// Every client, by number.
    package var clients: [ClientSession] { core.clients.registry.all }
    package var clientCount: Int { core.clients.registry.count }
    package var connectedClientCount: Int { core.clients.registry.connectedCount }
    package var regionCount: Int { core.clients.registry.regionCount }
    package func regionCount(of appID: String) -> Int { core.clients.registry.regionCount(of: appID) }
    package func connectedClientCount(of appID: String) -> Int { core.clients.registry.connectedCount(of: appID) }

    /// One page of every monitored region, with its client and its state now (nil: not determined yet).
    package func regions(offset: Int, limit: Int) -> [(session: ClientSession, region: BeaconRegion, state: MonitoredRegion?)] {
        core.clients.registry.regions(offset: offset, limit: limit).map { session, region in
            (session, region, core.clients.engine.monitoredRegion(client: session.number, identifier: region.identifier))
        }
    }

    /// The app's authorization record as saved.
    package func record(_ appID: String) -> AuthorizationRecord { core.authorization.record(appID) }
    /// The app's status as its clients are told (location services off makes it denied).
    package func effectiveStatus(_ appID: String) -> AuthorizationStatus { core.effectiveStatus(appID) }
    package var pendingRequests: [(appID: String, request: AuthorizationRequest, status: AuthorizationStatus)] {
        core.authorization.pendingRequests
    }

    /// Whether the caller may use `Admin1`; the refusal says how to become one.
    package func checkAdministrator(_ candidate: AdministratorCandidate) throws(BeacondError) {
        try candidate.mayAdminister(core.configuration, configDirectory: core.source.directory)
    }

    // MARK: The fleet

    /// Every receiver's latest reading of each beacon since `since`, by beacon and then receiver (empty without rooms).
    package func receiverReadings(since: Timestamp) -> [(
        constraint: BeaconIdentityConstraint, receiver: String, reading: RoomPresence.ReceiverReading
    )] {
        guard let presence = core.clients.engine.presence else { return [] }
        let deviceNames = core.configuration.deviceNamesByFingerprint
        var fresh: [(BeaconIdentityConstraint, String, RoomPresence.ReceiverReading)] = []
        for identity in presence.latestReadings.keys.sorted() {
            let readings = (presence.latestReadings[identity] ?? [:]).filter { $0.value.time >= since }
            guard !readings.isEmpty else { continue }
            // The beacon as a ranged beacon shows it: a private device by its administrator's name for it.
            let constraint =
                identity.kind == .privateDevice
                ? BeaconIdentityConstraint.privateDevice(fingerprint: identity.uuid, name: deviceNames[identity.uuid])
                : BeaconIdentityConstraint(identity)
            for (room, reading) in readings.sorted(by: { $0.key < $1.key }) { fresh.append((constraint, room, reading)) }
        }
        return fresh
    }

    /// What receivers heard of each other since `since`, by listener and then the receiver heard (empty without rooms).
    package func receiverHearings(since: Timestamp) -> [(
        listener: String, advertiser: String, reading: RoomPresence.ReceiverReading
    )] {
        core.clients.engine.presence?.hearings.readings(since: since) ?? []
    }

    /// The receivers a new `[mqtt]` node starts with: the old node's (online unless the engine has them offline),
    /// and every other receiver numbered in this process, offline until heard.
    package func receiversForNewNode(carrying carried: [ReceiverDirectory.Receiver]) -> [ReceiverDirectory.Receiver] {
        core.fleet.receiversForNewNode(carrying: carried, configuration: core.configuration, engine: core.clients.engine)
    }

    /// Receivers a monitored region was last heard by: the node must keep them when its table is full.
    package var receiversHoldingRegions: Set<ReceiverID> { core.clients.engine.receiversHoldingRegions }
}
