package import BeaconKit
import BeacondAPI

/// The LocationManager1 methods that change what a client monitors and ranges, each checked against the app's
/// authorization and the configured limits first.
extension ClientService {
    // MARK: Monitoring

    package mutating func startMonitoring(
        client number: Int, _ argument: Result<BeaconRegion, BeacondError>, _ context: Context, _ outbox: inout CoreOutbox,
        _ persistence: inout StatePersistence, _ delivery: inout BackgroundDelivery
    ) throws(CallError) {
        let session = try session(number)
        let app = try app(of: session, context)
        var region: BeaconRegion
        do { region = try argument.get() } catch { throw .beacond(error) }
        region.constraint = try resolvingDevice(region.constraint, app: app, context)
        if let room = region.room, engine.presence == nil {
            let configDirectory = context.configDirectory
            let why =
                context.fleet.problem.map {
                    "MQTT is configured but not running (\($0)). Fix: correct [mqtt] in "
                        + "\(configDirectory)/beacond.toml and reload, or leave 'Room' out"
                }
                ?? "rooms are receivers' rooms on an MQTT broker. Fix: set [mqtt] broker (and room) in "
                + "\(configDirectory)/beacond.toml, or leave 'Room' out"
            throw BeacondError(.invalidRegion, "'\(BeacondKey.room)' \(room) needs rooms, and this daemon has none: \(why)").callError
        }
        do {
            try AuthorizationRules.checkMonitoring(app: app.declaration, record: context.record(session.appID), policy: context.policy)
        } catch {
            throw BeacondError(error).callError
        }
        if session.regions[region.identifier] == nil { try checkRegionLimits(session, context.configuration) }
        if session.regions[region.identifier] == region,
            let current = engine.monitoredRegion(client: number, identifier: region.identifier)?.state
        {
            // The same region again (an app that re-adds its regions at every launch, or after beacond restarted)
            // keeps its state: a beacon that is still there must not enter again. The client hears the state.
            outbox.notify(session, .didStartMonitoring(region))
            if current != .unknown {
                outbox.notify(session, .didDetermineState(current, region, EventInfo(at: outbox.now)), .clientOnly)
            }
            return
        }
        // Same identifier again replaces the region (Core Location); the engine stops the old one first.
        let events = monitor(region, session: session, &outbox, &persistence)
        outbox.log(.info, "\(session.appID) monitors \(region)", session.logMetadata)
        propertiesChanged(number, [.monitoredRegions], context, &outbox)
        route(events, context, &outbox, &persistence, &delivery)
    }

    /// One more region for this client: within `max_regions_per_client` for the client and `max_regions_per_app`
    /// for its app, whose disconnected clients' regions count too (they are the app's, and its next client takes
    /// them over), so no sequence of connections grows an app past its limit.
    private func checkRegionLimits(_ session: ClientSession, _ configuration: DaemonConfiguration) throws(CallError) {
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
        let ofApp = registry.regionCount(of: session.appID)
        guard ofApp < perApp else {
            throw BeacondError(
                .regionLimitExceeded,
                "app \(session.appID) already monitors \(ofApp) regions in all its clients, "
                    + "connected or not, the limit (max_regions_per_app = \(perApp) in \(file)); this client has "
                    + "\(session.regions.count) of them. Fix: \(fix) (beaconctl regions lists the app's)"
            ).callError
        }
    }

    package mutating func stopMonitoring(
        client number: Int, _ identifier: String, _ context: Context, _ outbox: inout CoreOutbox,
        _ persistence: inout StatePersistence, _ delivery: inout BackgroundDelivery
    ) throws(CallError) {
        try checkMonitors(number, identifier)
        let events = unmonitor(identifier, client: number, &outbox, &persistence)
        propertiesChanged(number, [.monitoredRegions], context, &outbox)
        route(events, context, &outbox, &persistence, &delivery)
    }

    package mutating func requestState(
        client number: Int, _ identifier: String, _ context: Context, _ outbox: inout CoreOutbox,
        _ persistence: inout StatePersistence, _ delivery: inout BackgroundDelivery
    ) throws(CallError) {
        try checkMonitors(number, identifier)
        // The engine's answer first, then routed: `route` reads the registry and engine as the request left them.
        let events = engine.requestState(client: number, identifier: identifier, at: outbox.now)
        route(events, context, &outbox, &persistence, &delivery)
    }

    /// The client monitors a region of that identifier, or the call is refused with the ones it does.
    private func checkMonitors(_ number: Int, _ identifier: String) throws(CallError) {
        let session = try session(number)
        guard session.regions[identifier] == nil else { return }
        let known = session.regionOrder
        throw BeacondError(
            .unknownRegion,
            "this client monitors no region \(ClientText.quoted(identifier))"
                + (known.isEmpty ? " (it monitors none)" : " (it monitors: \(known.joined(separator: ", ")))")
                + "; see the MonitoredRegions property"
        ).callError
    }

    // MARK: Ranging

    package mutating func startRanging(
        client number: Int, _ argument: Result<BeaconIdentityConstraint, BeacondError>, _ context: Context,
        _ outbox: inout CoreOutbox, _ persistence: inout StatePersistence, _ delivery: inout BackgroundDelivery
    ) throws(CallError) {
        let session = try session(number)
        let app = try app(of: session, context)
        let requested: BeaconIdentityConstraint
        do { requested = try argument.get() } catch { throw .beacond(error) }
        let constraint = try resolvingDevice(requested, app: app, context)
        do {
            try AuthorizationRules.checkRanging(
                app: app.declaration, record: context.record(session.appID), policy: context.policy, inUse: session.inUse)
        } catch {
            throw BeacondError(error).callError
        }
        guard !session.rangedConstraints.contains(constraint) else { return }
        let limit = context.configuration.maxRegionsPerClient
        guard session.rangedConstraints.count < limit else {
            throw BeacondError(
                .regionLimitExceeded,
                "this client already ranges \(limit) constraints (max_regions_per_client "
                    + "in \(context.configDirectory)/beacond.toml also bounds ranging). Fix: StopRanging one, or range a wider constraint"
            ).callError
        }
        registry.addRangedConstraint(constraint, to: number)
        outbox.log(.info, "\(session.appID) ranges \(constraint)", session.logMetadata)
        propertiesChanged(number, [.rangedConstraints], context, &outbox)
        refreshRanging(number, context, &outbox, &persistence, &delivery)
    }

    package mutating func stopRanging(
        client number: Int, _ argument: Result<BeaconIdentityConstraint, BeacondError>, _ context: Context,
        _ outbox: inout CoreOutbox
    ) throws(CallError) {
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
        propertiesChanged(number, [.rangedConstraints], context, &outbox)
    }

    /// Puts the client's ranging into the engine or takes it out, by what its status allows now: WhenInUse
    /// clients range only while in use (paused otherwise, resumed by `SetInUse(true)`).
    package mutating func refreshRanging(
        _ number: Int, _ context: Context, _ outbox: inout CoreOutbox, _ persistence: inout StatePersistence,
        _ delivery: inout BackgroundDelivery
    ) {
        guard let session = registry[number] else { return }
        let allowed =
            session.isConnected && !session.rangedConstraints.isEmpty
            && AuthorizationRules.rangingPermission(context.record(session.appID), context.policy).allows(inUse: session.inUse)
        if allowed {
            // Every constraint not yet in the engine: all of them when ranging resumes, the new one when a
            // client that already ranges adds another.
            let events = engine.startRanging(session.rangedConstraints, client: number, at: outbox.now)
            registry.setRangingActive(true, for: number)
            route(events, context, &outbox, &persistence, &delivery)
        } else if session.rangingActive {
            engine.stopRanging(session.rangedConstraints, client: number)
            registry.setRangingActive(false, for: number)
            if !session.rangedConstraints.isEmpty, session.isConnected {
                outbox.log(
                    .info, "ranging of \(session.path) paused: \(session.appID) is authorizedWhenInUse and the client is not in use",
                    session.logMetadata)
            }
        }
    }

    package mutating func setInUse(
        client number: Int, _ inUse: Bool, _ context: Context, _ outbox: inout CoreOutbox, _ persistence: inout StatePersistence,
        _ delivery: inout BackgroundDelivery
    ) {
        guard let session = registry[number], session.inUse != inUse else { return }
        registry.setInUse(inUse, for: number)
        propertiesChanged(number, [.inUse], context, &outbox)
        refreshRanging(number, context, &outbox, &persistence, &delivery)
    }
}
