package import BeaconKit
import BeacondAPI
import Logging

/// Client sessions: registration (credentials checked against the app's declaration), the
/// LocationManager1 methods, and cleanup when a client closes or its connection vanishes.
extension DaemonCore {
    package mutating func registerClient(_ appID: String, sender: String, caller: Caller) throws(CallError) -> String {
        guard let app = configuration.apps[appID] else {
            // A caller learns only the apps it may act as, not every declared app (nor their users).
            let mine = configuration.apps.values.filter { $0.declaration.users.contains(caller.credentials.userName) }
                .map(\.declaration.appID)
            throw BeacondError(
                .unknownApp,
                UnknownAppMessage.text(
                    appID: appID, declared: mine, configDirectory: configDirectory,
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
        try checkClientLimits(app: appID, sender: sender, userID: caller.credentials.userID, userName: caller.credentials.userName)
        let number = clients.register(
            appID: appID, sender: sender, caller: caller.credentials,
            processID: caller.processID
        ).number
        adoptDetachedRegions(into: number)
        guard let session = clients[number] else { throw .clientClosed(number) }
        outbox.emit(.exportClient(number))
        outbox.log(
            .info, "client \(session.path) registered as \(appID)",
            session.logMetadata.merging([
                "client.user": "\(caller.credentials.userName)",
                "client.sender": "\(sender)",
            ]) { $1 })
        outbox.notify(.clientRegistered(ClientAddress(session)))
        // One code path for clients: the current status arrives as AuthorizationChanged (after this reply).
        let effects = AuthorizationRules.registration(app: app.declaration, record: record(appID), policy: policy)
        if let status = effects.authorizationChanged {
            outbox.notify(session, .authorizationChanged(status), .clientOnly)
        }
        commitState()
        BackgroundDelivery.deliverQueue(
            to: session, status: effectiveStatus(session.appID), configuration: configuration, &persistence, &outbox)
        return session.path
    }

    /// Connected clients are bounded per connection, per app and per unix user, so no caller can grow the
    /// daemon by registering (each client is a session and an exported object). Detached clients are bounded by
    /// their app's regions instead: a client without regions ends with its connection.
    package func checkClientLimits(app appID: String, sender: String, userID: UInt32, userName: String) throws(CallError) {
        let onConnection = clients.clients(on: sender).count
        guard onConnection < Self.maximumClientsPerConnection else {
            throw BeacondError(
                .clientLimitExceeded,
                "this connection already has \(onConnection) clients, the most one connection "
                    + "may have; call Close() on the ones you no longer use"
            ).callError
        }
        let ofApp = clients.connectedCount(of: appID)
        guard ofApp < configuration.maxClientsPerApp else {
            throw BeacondError(
                .clientLimitExceeded,
                "app \(appID) already has \(ofApp) connected clients, the limit (max_clients_per_app "
                    + "= \(configuration.maxClientsPerApp) in \(configuration.configFile)). Fix: Close() clients of the app that are no "
                    + "longer used (one client per process is enough: it can monitor and range everything the app needs), "
                    + "or ask an administrator to raise the limit"
            ).callError
        }
        let ofUser = clients.connectedCount(ofUser: userID)
        guard ofUser < configuration.maxClientsPerUser else {
            throw BeacondError(
                .clientLimitExceeded,
                "user \(userName) already has \(ofUser) connected clients, the limit "
                    + "(max_clients_per_user = \(configuration.maxClientsPerUser) in \(configuration.configFile)). Fix: Close() "
                    + "clients that are no longer used, or ask an administrator to raise the limit"
            ).callError
        }
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
    package mutating func adoptDetachedRegions(into number: Int, announce: Bool = false) {
        let takeover: ClientRegistry.Takeover? = {
            let engine = self.engine
            return clients.planTakeover(
                into: number,
                monitored: { client, identifier in
                    engine.monitoredRegion(client: client, identifier: identifier) != nil
                })
        }()
        guard let plan = takeover else { return }
        let events = engine.advance(to: now)
        // What fell due before the takeover belongs to the old (detached) sessions: routed now, while they
        // exist, it is queued for the app and handed to the new client with the rest of its queue.
        route(events)
        for move in plan.moves {
            moveRegion(move.region, appID: move.appID, from: move.from, to: number)
        }
        guard let session = clients[number] else { return }
        for old in plan.detached {
            removeSession(old.number)
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
        if announce, !plan.moves.isEmpty { clientPropertiesChanged(number, [.monitoredRegions]) }
        engineChanged([])
    }

    package func session(_ number: Int) throws(CallError) -> ClientSession {
        guard let session = clients[number] else { throw .clientClosed(number) }
        return session
    }

    package func app(of session: ClientSession) throws(CallError) -> AppConfiguration {
        guard let app = configuration.apps[session.appID] else {
            throw BeacondError(.unknownApp, "app '\(session.appID)' is no longer declared in \(configDirectory)/apps.d").callError
        }
        return app
    }

    // MARK: Monitoring

    package mutating func startMonitoring(client number: Int, _ argument: Result<BeaconRegion, BeacondError>) throws(CallError) {
        let session = try session(number)
        let app = try app(of: session)
        var region: BeaconRegion
        do { region = try argument.get() } catch { throw .beacond(error) }
        region.constraint = try resolvingDevice(region.constraint, app: app)
        if let room = region.room, engine.presence == nil {
            let why =
                fleet.problem.map {
                    "MQTT is configured but not running (\($0)). Fix: correct [mqtt] in "
                        + "\(configDirectory)/beacond.toml and reload, or leave 'Room' out"
                }
                ?? "rooms are receivers' rooms on an MQTT broker. Fix: set [mqtt] broker (and room) in "
                + "\(configDirectory)/beacond.toml, or leave 'Room' out"
            throw BeacondError(.invalidRegion, "'\(BeacondKey.room)' \(room) needs rooms, and this daemon has none: \(why)").callError
        }
        do {
            try AuthorizationRules.checkMonitoring(app: app.declaration, record: record(session.appID), policy: policy)
        } catch {
            throw BeacondError(error).callError
        }
        if session.regions[region.identifier] == nil { try checkRegionLimits(session) }
        if session.regions[region.identifier] == region,
            let current = engine.monitoredRegion(client: number, identifier: region.identifier)?.state
        {
            // The same region again (an app that re-adds its regions at every launch, or after beacond restarted)
            // keeps its state: a beacon that is still there must not enter again. The client hears the state.
            outbox.notify(session, .didStartMonitoring(region))
            if current != .unknown {
                outbox.notify(session, .didDetermineState(current, region, EventInfo(at: now)), .clientOnly)
            }
            return
        }
        // Same identifier again replaces the region (Core Location); the engine stops the old one first.
        let events = monitor(region, session: session)
        outbox.log(.info, "\(session.appID) monitors \(region)", session.logMetadata)
        clientPropertiesChanged(number, [.monitoredRegions])
        engineChanged(events)
    }

    /// One more region for this client: within `max_regions_per_client` for the client and `max_regions_per_app`
    /// for its app, whose disconnected clients' regions count too (they are the app's, and its next client takes
    /// them over), so no sequence of connections grows an app past its limit.
    package func checkRegionLimits(_ session: ClientSession) throws(CallError) {
        let file = configuration.configFile
        let fix =
            "StopMonitoring a region you no longer need, monitor a wider region (UUID or UUID+major), or ask an "
            + "administrator to raise the limit"
        let perClient = configuration.maxRegionsPerClient
        guard session.regions.count < perClient else {
            throw BeacondError(
                .regionLimitExceeded,
                "this client already monitors \(session.regions.count) regions, the limit "
                    + "(max_regions_per_client = \(perClient) in \(file)). Fix: \(fix)"
            ).callError
        }
        let perApp = configuration.maxRegionsPerApp
        let ofApp = clients.regionCount(of: session.appID)
        guard ofApp < perApp else {
            throw BeacondError(
                .regionLimitExceeded,
                "app \(session.appID) already monitors \(ofApp) regions in all its clients, "
                    + "connected or not, the limit (max_regions_per_app = \(perApp) in \(file)); this client has "
                    + "\(session.regions.count) of them. Fix: \(fix) (beaconctl regions lists the app's)"
            ).callError
        }
    }

    package mutating func stopMonitoring(client number: Int, _ identifier: String) throws(CallError) {
        let session = try session(number)
        guard session.regions[identifier] != nil else { throw unknownRegion(identifier, session) }
        let events = unmonitor(identifier, client: number)
        clientPropertiesChanged(number, [.monitoredRegions])
        engineChanged(events)
    }

    package mutating func requestState(client number: Int, _ identifier: String) throws(CallError) {
        let session = try session(number)
        guard session.regions[identifier] != nil else { throw unknownRegion(identifier, session) }
        engineChanged(engine.requestState(client: number, identifier: identifier, at: now))
    }

    package func unknownRegion(_ identifier: String, _ session: ClientSession) -> CallError {
        let known = session.regionOrder
        return BeacondError(
            .unknownRegion,
            "this client monitors no region \(ClientText.quoted(identifier))"
                + (known.isEmpty ? " (it monitors none)" : " (it monitors: \(known.joined(separator: ", ")))")
                + "; see the MonitoredRegions property"
        ).callError
    }

    // MARK: Ranging

    package mutating func startRanging(client number: Int, _ argument: Result<BeaconIdentityConstraint, BeacondError>) throws(CallError) {
        let session = try session(number)
        let app = try app(of: session)
        let requested: BeaconIdentityConstraint
        do { requested = try argument.get() } catch { throw .beacond(error) }
        let constraint = try resolvingDevice(requested, app: app)
        do {
            try AuthorizationRules.checkRanging(
                app: app.declaration, record: record(session.appID), policy: policy,
                inUse: session.inUse)
        } catch {
            throw BeacondError(error).callError
        }
        guard !session.rangedConstraints.contains(constraint) else { return }
        let limit = configuration.maxRegionsPerClient
        guard session.rangedConstraints.count < limit else {
            throw BeacondError(
                .regionLimitExceeded,
                "this client already ranges \(limit) constraints (max_regions_per_client "
                    + "in \(configDirectory)/beacond.toml also bounds ranging). Fix: StopRanging one, or range a wider constraint"
            ).callError
        }
        clients.addRangedConstraint(constraint, to: number)
        outbox.log(.info, "\(session.appID) ranges \(constraint)", session.logMetadata)
        clientPropertiesChanged(number, [.rangedConstraints])
        refreshRanging(number)
    }

    package mutating func stopRanging(client number: Int, _ argument: Result<BeaconIdentityConstraint, BeacondError>) throws(CallError) {
        let session = try session(number)
        var constraint: BeaconIdentityConstraint
        do { constraint = try argument.get() } catch { throw .beacond(error) }
        if constraint.kind == .privateDevice,
            let ranged = session.rangedConstraints.first(where: {
                $0.kind == .privateDevice && $0.deviceName == constraint.deviceName
            })
        {
            // By name: the one it ranges (its key may have changed in a reload since).
            constraint = ranged
        }
        guard session.rangedConstraints.contains(constraint) else {
            let known = session.rangedConstraints.map(\.description)
            throw BeacondError(
                .unknownRegion,
                "this client is not ranging \(constraint)"
                    + (known.isEmpty ? " (it ranges nothing)" : " (it ranges: \(known.joined(separator: ", ")))")
            ).callError
        }
        unrange(constraint, client: number)
        clientPropertiesChanged(number, [.rangedConstraints])
        engineChanged([])
    }

    /// Puts the client's ranging into the engine or takes it out, by what its status allows now: WhenInUse
    /// clients range only while in use (paused otherwise, resumed by `SetInUse(true)`).
    package mutating func refreshRanging(_ number: Int) {
        guard let session = clients[number] else { return }
        let allowed =
            session.isConnected && !session.rangedConstraints.isEmpty
            && AuthorizationRules.rangingPermission(record(session.appID), policy).allows(inUse: session.inUse)
        var events: [EngineEvent] = []
        if allowed {
            // Every constraint not yet in the engine: all of them when ranging resumes, the new one when a
            // client that already ranges adds another.
            events = engine.startRanging(session.rangedConstraints, client: number, at: now)
            clients.setRangingActive(true, for: number)
        } else if session.rangingActive {
            engine.stopRanging(session.rangedConstraints, client: number)
            clients.setRangingActive(false, for: number)
            if !session.rangedConstraints.isEmpty, session.isConnected {
                outbox.log(
                    .info, "ranging of \(session.path) paused: \(session.appID) is authorizedWhenInUse and the client is not in use",
                    session.logMetadata)
            }
        }
        engineChanged(events)
    }

    package mutating func setInUse(client number: Int, _ inUse: Bool) {
        guard let session = clients[number], session.inUse != inUse else { return }
        clients.setInUse(inUse, for: number)
        clientPropertiesChanged(number, [.inUse])
        refreshRanging(number)
    }

    // MARK: Ending

    /// `Close()`: the client ends as when its connection closes. Its ranging stops; the regions it monitors are
    /// the app's, not the client's (as in Core Location), so they go on for the app, under the app's other
    /// connected client or detached until the next one registers. Only StopMonitoring, an administrator or a
    /// change of authorization stops a region.
    package mutating func clientAsksToClose(_ number: Int) {
        guard let session = clients[number] else { return }
        leave(session, why: "Close() called", takeoverExcluding: { $0.number == number })
    }

    /// Ends a client and everything of it, regions included: for an app no longer declared or a user no longer
    /// allowed, after its regions failed with MonitoringDidFail.
    package mutating func closeClient(_ number: Int, reason: String) {
        guard let session = clients[number] else { return }
        outbox.log(.info, "client \(session.path) (\(session.appID)) closed: \(reason)", session.logMetadata)
        removeSession(number)
        outbox.notify(.clientClosed(ClientAddress(session)))
        engineChanged([])
    }

    /// Removes a session and its engine entries (no events are produced for it).
    package mutating func removeSession(_ number: Int) {
        guard let session = clients.remove(number) else { return }
        if !session.regions.isEmpty { saveLater(.removeClient(number)) }
        let events = engine.remove(
            client: number, regions: session.regionOrder,
            ranging: session.rangingActive ? session.rangedConstraints : [], at: now)
        route(events)
        outbox.emit(.unexportClient(path: session.path))
    }

    /// A connection left the bus: its clients are no longer in use, and each leaves as with `Close()`.
    package mutating func connectionClosed(_ name: String) {
        for session in clients.clients(on: name) {
            leave(session, why: "its connection \(name) closed", takeoverExcluding: { $0.sender == name })
        }
    }

    /// A client that leaves (Close(), or its connection closed): ranging stops; an Always app's regions stay
    /// monitored without it (docs/dbus-api.md), the client detached; a client without regions (or whose app may
    /// no longer monitor, whose regions were already stopped with MonitoringDidFail) just ends. The app's newest
    /// other connected client, if any, takes the regions over at once: while the app has a client, its region
    /// events go to that client, not into the queue for a client that may never come.
    private mutating func leave(_ session: ClientSession, why: String, takeoverExcluding excluded: (ClientSession) -> Bool) {
        let keepsMonitoring = effectiveStatus(session.appID).allowsMonitoring && !session.regions.isEmpty
        guard keepsMonitoring else {
            closeClient(session.number, reason: why)
            return
        }
        // Detached, its ranging is taken out of the engine (which needs the constraints), then forgotten.
        clients.detach(session.number)
        refreshRanging(session.number)
        unrange(nil, client: session.number)
        outbox.emit(.unexportClient(path: session.path))
        outbox.notify(.clientClosed(ClientAddress(session)))
        let live = clients.newestLiveClient(of: session.appID, excluding: excluded)
        if let live {
            outbox.log(
                .info,
                """
                client \(session.path) (\(session.appID)) left (\(why)); the app's client \(BeacondBus.clientPathPrefix)\(live) \
                takes over its \(session.regions.count) Always regions
                """,
                session.logMetadata)
            adoptDetachedRegions(into: live, announce: true)
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
