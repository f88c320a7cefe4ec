import BeaconKit
import BeacondAPI

/// Client sessions: registration (credentials checked against the app's declaration), takeover of an Always app's
/// detached regions, and what a client's leaving does (Close(), or its connection gone).
extension ClientService {
    /// `RegisterClient(app)`: the new client, exported and told its status. Its app's queued events are the core's
    /// to hand over next (`BackgroundDelivery.deliverQueue`), once what this changed is saved.
    package mutating func register(
        _ appID: String, sender: String, caller: Caller, _ context: Context, _ outbox: inout CoreOutbox,
        _ persistence: inout StatePersistence, _ delivery: inout BackgroundDelivery
    ) throws(CallError) -> ClientSession {
        let configuration = context.configuration
        guard let app = configuration.apps[appID] else {
            // A caller learns only the apps it may act as, not every declared app (nor their users).
            let mine = configuration.apps.values.filter { $0.declaration.users.contains(caller.credentials.userName) }
                .map(\.declaration.appID)
            throw BeacondError(
                .unknownApp,
                UnknownAppMessage.text(
                    appID: appID, declared: mine, configDirectory: context.configDirectory,
                    suggestFix: true, forCaller: caller.credentials.userName)
            ).callError
        }
        if let required = app.declaration.executable, caller.credentials.executable == nil,
            app.declaration.users.contains(caller.credentials.userName)
        {
            // Not the caller's fault: the daemon could not look. Say what the administrator can do.
            throw BeacondError(
                .accessDenied,
                "app \(appID) may only be used by \(required) (executable in "
                    + "\(app.declaration.declarationFile)), but beacond cannot read /proc/\(caller.processID.map(String.init) ?? "PID")/exe "
                    + "of a process of another user: that needs CAP_SYS_PTRACE and ProtectProc=default in beacond.service "
                    + "(see systemd/README.md), or remove executable from the declaration"
            ).callError
        }
        do {
            try AuthorizationRules.checkCaller(caller.credentials, app: app.declaration)
        } catch {
            outbox.log(.notice, "refused RegisterClient(\(appID)) from \(sender): \(error.message)")
            throw BeacondError(error).callError
        }
        try registry.checkRoomForClient(
            app: appID, sender: sender, userID: caller.credentials.userID, userName: caller.credentials.userName, configuration)
        let number = registry.register(appID: appID, sender: sender, caller: caller.credentials, processID: caller.processID).number
        adoptDetachedRegions(into: number, context, &outbox, &persistence, &delivery)
        guard let session = registry[number] else { throw .clientClosed(number) }
        outbox.emit(.exportClient(number))
        outbox.log(
            .info, "client \(session.path) registered as \(appID)",
            session.logMetadata.merging([
                "client.user": "\(caller.credentials.userName)",
                "client.sender": "\(sender)",
            ]) { $1 })
        outbox.notify(.clientRegistered(ClientAddress(session)))
        // One code path for clients: the current status arrives as AuthorizationChanged (after this reply).
        let effects = AuthorizationRules.registration(app: app.declaration, record: context.record(appID), policy: context.policy)
        if let status = effects.authorizationChanged {
            outbox.notify(session, .authorizationChanged(status), .clientOnly)
        }
        return session
    }

    /// Core Location restores an app's monitored regions when it is relaunched: an Always client that
    /// disconnected left its regions running; the app's live client (the next one to register, or one already
    /// connected when another disconnects) takes them over as they are. The monitor re-keys each region, so its
    /// state, last sighting and pending exit stay exactly as they were: no false re-entry, and no fresh exit timer.
    ///
    /// Nothing the app monitors vanishes here: every region is taken over, even beyond `max_regions_per_client`
    /// (the limit bounds what a client adds with StartMonitoring, not regions the app already has). Where two
    /// regions have one identifier (two clients of the app monitored "lobby"), one must go, as a later
    /// StartMonitoring with the same identifier replaces the earlier in Core Location: the live client's own region
    /// wins, else the one of the later client; the app's client is told of the other with `MonitoringDidFail`
    /// (`RegionReplaced`). `announce`: the client was registered before (not a takeover at registration), so it
    /// also hears `PropertiesChanged(MonitoredRegions)`.
    private mutating func adoptDetachedRegions(
        into number: Int, announce: Bool = false, _ context: Context, _ outbox: inout CoreOutbox,
        _ persistence: inout StatePersistence, _ delivery: inout BackgroundDelivery
    ) {
        let takeover: ClientRegistry.Takeover? = {
            let engine = self.engine
            return registry.planTakeover(
                into: number,
                monitored: { client, identifier in
                    engine.monitoredRegion(client: client, identifier: identifier) != nil
                })
        }()
        guard let plan = takeover else { return }
        let events = engine.advance(to: outbox.now)
        // What fell due before the takeover belongs to the old (detached) sessions: routed now, while they
        // exist, it is queued for the app and handed to the new client with the rest of its queue.
        route(events, context, &outbox, &persistence, &delivery)
        for move in plan.moves {
            moveRegion(move.region, appID: move.appID, from: move.from, to: number, context, &outbox, &persistence)
        }
        guard let session = registry[number] else { return }
        for old in plan.detached {
            removeSession(old.number, context, &outbox, &persistence, &delivery)
            let taken = plan.moves.filter { $0.from == old.number }.count
            outbox.log(.info, "\(session.path) took over \(taken) of the \(old.regions.count) regions of disconnected \(old.path) (\(session.appID))")
        }
        for replaced in plan.replaced {
            let region = replaced.region
            let message =
                "region \(region.identifier) of \(session.appID) stopped: \(replaced.by) has the same identifier and replaces "
                + "it (one identifier is one region per app, as in Core Location). Fix: give the app's regions distinct identifiers"
            outbox.log(.notice, message, session.logMetadata)
            outbox.notify(session, .monitoringDidFail(region, BeacondError(.regionReplaced, message)))
        }
        if announce, !plan.moves.isEmpty { propertiesChanged(number, [.monitoredRegions], context, &outbox) }
    }

    /// `route` with what `context` says.
    package func route(
        _ events: [EngineEvent], _ context: Context, _ outbox: inout CoreOutbox, _ persistence: inout StatePersistence,
        _ delivery: inout BackgroundDelivery
    ) {
        guard !events.isEmpty else { return }
        route(events, configuration: context.configuration, nodeRuns: context.fleet.nodeRuns, &outbox, &persistence, &delivery)
    }

    // MARK: Ending

    /// `Close()`: the client ends as when its connection closes. Its ranging stops; the regions it monitors are
    /// the app's, not the client's (as in Core Location), so they go on for the app, under the app's other
    /// connected client or detached until the next one registers. Only StopMonitoring, an administrator or a
    /// change of authorization stops a region.
    package mutating func close(
        _ number: Int, _ context: Context, _ outbox: inout CoreOutbox, _ persistence: inout StatePersistence,
        _ delivery: inout BackgroundDelivery
    ) {
        guard let session = registry[number] else { return }
        leave(session, why: "Close() called", takeoverExcluding: { $0.number == number }, context, &outbox, &persistence, &delivery)
    }

    /// A connection left the bus: its clients are no longer in use, and each leaves as with `Close()`.
    package mutating func connectionClosed(
        _ name: String, _ context: Context, _ outbox: inout CoreOutbox, _ persistence: inout StatePersistence,
        _ delivery: inout BackgroundDelivery
    ) {
        for session in registry.clients(on: name) {
            leave(
                session, why: "its connection \(name) closed", takeoverExcluding: { $0.sender == name }, context, &outbox,
                &persistence, &delivery)
        }
    }

    /// Ends a client and everything of it, regions included: for an app no longer declared or a user no longer
    /// allowed, after its regions failed with MonitoringDidFail.
    package mutating func end(
        _ number: Int, reason: String, _ context: Context, _ outbox: inout CoreOutbox, _ persistence: inout StatePersistence,
        _ delivery: inout BackgroundDelivery
    ) {
        guard let session = registry[number] else { return }
        outbox.log(.info, "client \(session.path) (\(session.appID)) closed: \(reason)", session.logMetadata)
        removeSession(number, context, &outbox, &persistence, &delivery)
        outbox.notify(.clientClosed(ClientAddress(session)))
    }

    /// Removes a session and its engine entries (no events are produced for it).
    package mutating func removeSession(
        _ number: Int, _ context: Context, _ outbox: inout CoreOutbox, _ persistence: inout StatePersistence,
        _ delivery: inout BackgroundDelivery
    ) {
        guard let session = registry.remove(number) else { return }
        if !session.regions.isEmpty { persistence.saveLater(.removeClient(number), &outbox) }
        let events = engine.remove(
            client: number, regions: session.regionOrder,
            ranging: session.rangingActive ? session.rangedConstraints : [], at: outbox.now)
        route(events, context, &outbox, &persistence, &delivery)
        outbox.emit(.unexportClient(path: session.path))
    }

    /// A client that leaves (Close(), or its connection closed): ranging stops; an Always app's regions stay
    /// monitored without it (docs/dbus-api.md), the client detached; a client without regions (or whose app may
    /// no longer monitor, whose regions were already stopped with MonitoringDidFail) just ends. The app's newest
    /// other connected client, if any, takes the regions over at once: while the app has a client, its region
    /// events go to that client, not into the queue for a client that may never come.
    private mutating func leave(
        _ session: ClientSession, why: String, takeoverExcluding excluded: (ClientSession) -> Bool, _ context: Context,
        _ outbox: inout CoreOutbox, _ persistence: inout StatePersistence, _ delivery: inout BackgroundDelivery
    ) {
        let keepsMonitoring = context.effectiveStatus(session.appID).allowsMonitoring && !session.regions.isEmpty
        guard keepsMonitoring else {
            end(session.number, reason: why, context, &outbox, &persistence, &delivery)
            return
        }
        // Detached, its ranging is taken out of the engine (which needs the constraints), then forgotten.
        registry.detach(session.number)
        refreshRanging(session.number, context, &outbox, &persistence, &delivery)
        unrange(nil, client: session.number)
        outbox.emit(.unexportClient(path: session.path))
        outbox.notify(.clientClosed(ClientAddress(session)))
        let live = registry.newestLiveClient(of: session.appID, excluding: excluded)
        if let live {
            outbox.log(
                .info,
                """
                client \(session.path) (\(session.appID)) left (\(why)); the app's client \(BeacondBus.clientPathPrefix)\(live) \
                takes over its \(session.regions.count) Always regions
                """,
                session.logMetadata)
            adoptDetachedRegions(into: live, announce: true, context, &outbox, &persistence, &delivery)
        } else {
            outbox.log(
                .info,
                """
                client \(session.path) (\(session.appID)) left (\(why)); \
                its \(session.regions.count) Always regions stay monitored for the app's next client
                """,
                session.logMetadata)
        }
    }
}

extension ClientRegistry {
    /// Connected clients are bounded per connection, per app and per unix user, so no caller can grow the
    /// daemon by registering (each client is a session and an exported object). Detached clients are bounded by
    /// their app's regions instead: a client without regions ends with its connection.
    func checkRoomForClient(
        app appID: String, sender: String, userID: UInt32, userName: String, _ configuration: DaemonConfiguration
    ) throws(CallError) {
        let onConnection = clients(on: sender).count
        guard onConnection < ClientService.maximumClientsPerConnection else {
            throw BeacondError(
                .clientLimitExceeded,
                "this connection already has \(onConnection) clients, the most one connection "
                    + "may have; call Close() on the ones you no longer use"
            ).callError
        }
        let ofApp = connectedCount(of: appID)
        guard ofApp < configuration.maxClientsPerApp else {
            throw BeacondError(
                .clientLimitExceeded,
                "app \(appID) already has \(ofApp) connected clients, the limit (max_clients_per_app "
                    + "= \(configuration.maxClientsPerApp) in \(configuration.configFile)). Fix: Close() clients of the app that are no "
                    + "longer used (one client per process is enough: it can monitor and range everything the app needs), "
                    + "or ask an administrator to raise the limit"
            ).callError
        }
        let ofUser = connectedCount(ofUser: userID)
        guard ofUser < configuration.maxClientsPerUser else {
            throw BeacondError(
                .clientLimitExceeded,
                "user \(userName) already has \(ofUser) connected clients, the limit "
                    + "(max_clients_per_user = \(configuration.maxClientsPerUser) in \(configuration.configFile)). Fix: Close() "
                    + "clients that are no longer used, or ask an administrator to raise the limit"
            ).callError
        }
    }
}
