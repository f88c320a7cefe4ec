package import BeaconKit
import BeacondAPI

/// The LocationManager1 methods that change what a client monitors and ranges, each checked against the app's
/// authorization and the configured limits first.
package enum LocationManagerCalls {
    package typealias Context = ClientService.Context

    // MARK: Monitoring

    package static func startMonitoring(
        _ clients: inout ClientService, client number: Int, _ argument: Result<BeaconRegion, BeacondError>, _ context: Context,
        _ outbox: inout CoreOutbox,
        _ persistence: inout StatePersistence, _ delivery: inout BackgroundDelivery
    ) throws(CallError) {
        let session = try clients.session(number)
        let app = try context.app(of: session)
        var region: BeaconRegion
        do { region = try argument.get() } catch { throw .beacond(error) }
        region.constraint = try resolvingDevice(region.constraint, app: app, context)
        if let room = region.room, clients.engine.presence == nil {
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
        if session.regions[region.identifier] == nil { try checkRegionLimits(clients, session, context.configuration) }
        if session.regions[region.identifier] == region,
            let current = clients.engine.monitoredRegion(client: number, identifier: region.identifier)?.state
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
        let events = clients.monitor(region, session: session, &outbox, &persistence)
        outbox.log(.info, "\(session.appID) monitors \(region)", session.logMetadata)
        clients.propertiesChanged(number, [.monitoredRegions], context, &outbox)
        clients.route(events, context, &outbox, &persistence, &delivery)
    }

    /// One more region for this client: within `max_regions_per_client` for the client and `max_regions_per_app`
    /// for its app, whose disconnected clients' regions count too (they are the app's, and its next client takes
    /// them over), so no sequence of connections grows an app past its limit.
    private static func checkRegionLimits(_ clients: ClientService, _ session: ClientSession, _ configuration: DaemonConfiguration) throws(CallError)
    {
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
        let ofApp = clients.registry.regionCount(of: session.appID)
        guard ofApp < perApp else {
            throw BeacondError(
                .regionLimitExceeded,
                "app \(session.appID) already monitors \(ofApp) regions in all its clients, "
                    + "connected or not, the limit (max_regions_per_app = \(perApp) in \(file)); this client has "
                    + "\(session.regions.count) of them. Fix: \(fix) (beaconctl regions lists the app's)"
            ).callError
        }
    }

    package static func stopMonitoring(
        _ clients: inout ClientService, client number: Int, _ identifier: String, _ context: Context, _ outbox: inout CoreOutbox,
        _ persistence: inout StatePersistence, _ delivery: inout BackgroundDelivery
    ) throws(CallError) {
        try checkMonitors(clients, number, identifier)
        let events = clients.unmonitor(identifier, client: number, &outbox, &persistence)
        clients.propertiesChanged(number, [.monitoredRegions], context, &outbox)
        clients.route(events, context, &outbox, &persistence, &delivery)
    }

    package static func requestState(
        _ clients: inout ClientService, client number: Int, _ identifier: String, _ context: Context, _ outbox: inout CoreOutbox,
        _ persistence: inout StatePersistence, _ delivery: inout BackgroundDelivery
    ) throws(CallError) {
        try checkMonitors(clients, number, identifier)
        // The engine's answer first, then routed: `route` reads the registry and engine as the request left them.
        let events = clients.requestState(client: number, identifier: identifier, at: outbox.now)
        clients.route(events, context, &outbox, &persistence, &delivery)
    }

    /// The client monitors a region of that identifier, or the call is refused with the ones it does.
    private static func checkMonitors(_ clients: ClientService, _ number: Int, _ identifier: String) throws(CallError) {
        let session = try clients.session(number)
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

    package static func startRanging(
        _ clients: inout ClientService, client number: Int, _ argument: Result<BeaconIdentityConstraint, BeacondError>, _ context: Context,
        _ outbox: inout CoreOutbox, _ persistence: inout StatePersistence, _ delivery: inout BackgroundDelivery
    ) throws(CallError) {
        let session = try clients.session(number)
        let app = try context.app(of: session)
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
        clients.range(constraint, client: number)
        outbox.log(.info, "\(session.appID) ranges \(constraint)", session.logMetadata)
        clients.propertiesChanged(number, [.rangedConstraints], context, &outbox)
        clients.refreshRanging(number, context, &outbox, &persistence, &delivery)
    }

    package static func stopRanging(
        _ clients: inout ClientService, client number: Int, _ argument: Result<BeaconIdentityConstraint, BeacondError>, _ context: Context,
        _ outbox: inout CoreOutbox
    ) throws(CallError) {
        let session = try clients.session(number)
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
        clients.unrange(constraint, client: number)
        clients.propertiesChanged(number, [.rangedConstraints], context, &outbox)
    }

    /// A client's private-device constraint with its key: the app's own device of that name first, else the
    /// administrator's. Other kinds pass unchanged.
    private static func resolvingDevice(_ constraint: BeaconIdentityConstraint, app: AppConfiguration, _ context: Context) throws(CallError)
        -> BeaconIdentityConstraint
    {
        if let resolved = context.configuration.resolvingDevice(constraint, for: app) { return resolved }
        let known = (Array(app.devices.keys) + Array(context.configuration.devices.keys)).sorted()
        throw BeacondError(
            .invalidRegion,
            "no private device named '\(constraint.deviceName ?? "")' is declared for \(app.declaration.appID)"
                + (known.isEmpty ? " (it knows none)" : " (it knows: \(known.joined(separator: ", ")))")
                + ". Fix: declare its Identity Resolving Key under [devices] in \(app.declaration.declarationFile), or as "
                + "the administrator in \(context.configDirectory)/\(ConfigurationNames.devicesDirectory)/ "
                + "(beaconctl devices import), then reload; docs/devices.md says where keys come from"
        ).callError
    }
}
