package import BeaconKit
import BeacondAPI

/// What changes outside a client's own calls do to clients and their regions: an authorization change, a reloaded
/// declaration or exit timeout, a private device's new key (or its name gone). Each is applied at once, and each
/// stopped region or ranging is told to its client with the reason and the fix (never stopped silently).
package enum ClientChanges {
    package typealias Context = ClientService.Context
    package typealias EngineEvent = ClientService.EngineEvent

    // MARK: Authorization

    /// What a change of status means for every client of the app, applied now.
    package static func apply(
        _ clients: inout ClientService, _ effects: AuthorizationSideEffects, to appID: String, _ context: Context, _ outbox: inout CoreOutbox,
        _ persistence: inout StatePersistence, _ delivery: inout BackgroundDelivery
    ) {
        let sessions = clients.registry.clients(of: appID)
        if let status = effects.authorizationChanged, sessions.isEmpty {
            // An administrator watching events sees every change, also of an app with no client to tell.
            outbox.notify(.authorizationChanged(appID: appID, status))
        }
        for session in sessions {
            if let status = effects.authorizationChanged {
                outbox.notify(session, .authorizationChanged(status), .clientOnly)
                clients.propertiesChanged(session.number, [.authorizationStatus], context, &outbox)
                outbox.notify(session, .authorizationChanged(status), .administratorsOnly)
            }
            if let failure = effects.monitoringFailure {
                failMonitoring(&clients, session.number, BeacondError(failure), context, &outbox, &persistence, &delivery)
            }
            if let failure = effects.rangingFailure { failRanging(&clients, session.number, BeacondError(failure), context, &outbox) }
            clients.refreshRanging(session.number, context, &outbox, &persistence, &delivery)
        }
        if effects.authorizationChanged != nil {
            outbox.log(.info, "\(appID) is now \(context.effectiveStatus(appID).rawValue)", ["client.app": "\(appID)"])
        }
    }

    /// Monitoring is no longer allowed: every region fails with the reason and stops (Core Location's
    /// monitoringDidFailFor, made loud).
    package static func failMonitoring(
        _ clients: inout ClientService,
        _ number: Int, _ error: BeacondError, _ context: Context, _ outbox: inout CoreOutbox,
        _ persistence: inout StatePersistence, _ delivery: inout BackgroundDelivery
    ) {
        guard let session = clients.registry[number], !session.regions.isEmpty else { return }
        var events: [EngineEvent] = []
        for region in session.orderedRegions {
            outbox.notify(session, .monitoringDidFail(region, error))
            events += clients.unmonitor(region.identifier, client: number, &outbox, &persistence)
        }
        outbox.log(.notice, "monitoring of \(session.path) stopped: \(error.message)", session.logMetadata)
        clients.propertiesChanged(number, [.monitoredRegions], context, &outbox)
        if !session.isConnected { clients.removeSession(number, context, &outbox, &persistence, &delivery) }
        clients.route(events, context, &outbox, &persistence, &delivery)
    }

    package static func failRanging(
        _ clients: inout ClientService, _ number: Int, _ error: BeacondError, _ context: Context, _ outbox: inout CoreOutbox
    ) {
        guard let session = clients.registry[number], !session.rangedConstraints.isEmpty else { return }
        for constraint in session.rangedConstraints {
            outbox.notify(session, .rangingDidFail(constraint, error))
        }
        clients.unrange(nil, client: number)
        clients.propertiesChanged(number, [.rangedConstraints], context, &outbox)
    }

    // MARK: A reload

    /// The reloaded declarations (in `context`): clients of apps no longer declared end, each told why; connected
    /// clients whose user (or program) the declaration no longer allows are revoked alike. A detached client's
    /// regions are the app's and stay; its next client is checked when it registers.
    package static func applyDeclarations(
        _ clients: inout ClientService, _ context: Context, _ outbox: inout CoreOutbox, _ persistence: inout StatePersistence,
        _ delivery: inout BackgroundDelivery
    ) {
        let apps = context.configuration.apps
        for session in clients.registry.all where apps[session.appID] == nil {
            let error = BeacondError(.unknownApp, "app '\(session.appID)' is no longer declared in \(context.configDirectory)/apps.d")
            failMonitoring(&clients, session.number, error, context, &outbox, &persistence, &delivery)
            failRanging(&clients, session.number, error, context, &outbox)
            clients.end(session.number, reason: "app no longer declared", context, &outbox, &persistence, &delivery)
        }
        for session in clients.registry.all where session.isConnected {
            guard let app = apps[session.appID], let caller = session.caller else { continue }
            do {
                try AuthorizationRules.checkCaller(caller, app: app.declaration)
            } catch {
                let error = BeacondError(.accessDenied, "revoked by the reloaded declaration: \(error.message)")
                failMonitoring(&clients, session.number, error, context, &outbox, &persistence, &delivery)
                failRanging(&clients, session.number, error, context, &outbox)
                clients.end(
                    session.number, reason: "its user or program is no longer allowed by \(app.declaration.declarationFile)", context,
                    &outbox, &persistence, &delivery)
            }
        }
    }

    // MARK: Private devices

    /// What a saved region of a private device becomes under this configuration (a restart).
    package enum DeviceFollowing {
        case unchanged
        /// The region for the key its device's name has now, starting over (unknown), as StartMonitoring of it.
        case moved(MonitoredRegion)
        /// The name is declared no more.
        case gone(String)
    }

    package static func followingDevice(_ monitored: MonitoredRegion, app: AppConfiguration, _ configuration: DaemonConfiguration)
        -> DeviceFollowing
    {
        let constraint = monitored.region.constraint
        guard constraint.kind == .privateDevice, let name = constraint.deviceName else { return .unchanged }
        guard let key = configuration.deviceKey(name, for: app) else { return .gone(name) }
        let fingerprint = key.fingerprint
        guard fingerprint != constraint.uuid else { return .unchanged }
        var region = monitored.region
        region.constraint = constraint.resolvingDevice(fingerprint: fingerprint)
        return .moved(MonitoredRegion(region: region, state: .unknown, lastSeen: nil, lastDeterminedState: .unknown))
    }

    /// Regions and ranging that name a private device follow its name, not the key it had when they were added: a
    /// reload that gives the name another key moves them to it; one that removes the name stops them, each said
    /// with the fix (never a region left waiting for a key nobody declares any more).
    package static func followDeviceKeys(
        _ clients: inout ClientService, _ context: Context, _ outbox: inout CoreOutbox, _ persistence: inout StatePersistence,
        _ delivery: inout BackgroundDelivery
    ) {
        let configuration = context.configuration
        for session in clients.registry.all {
            guard let app = configuration.apps[session.appID] else { continue }
            var events: [EngineEvent] = []
            var regionsChanged = false
            for region in session.orderedRegions where region.constraint.kind == .privateDevice {
                guard let name = region.constraint.deviceName else { continue }
                if let key = configuration.deviceKey(name, for: app) {
                    let fingerprint = key.fingerprint
                    guard fingerprint != region.constraint.uuid else { continue }
                    // As StartMonitoring of it again: the region starts over (unknown), for the phone the name
                    // means now.
                    var moved = region
                    moved.constraint = region.constraint.resolvingDevice(fingerprint: fingerprint)
                    events += clients.monitor(moved, session: session, &outbox, &persistence)
                    outbox.log(
                        .notice, "region \(region.identifier) of \(session.appID) follows device \(name) to its new key",
                        session.logMetadata)
                } else {
                    let error = Self.deviceGone(name, app: app, what: "its region '\(region.identifier)' stops", context)
                    outbox.notify(session, .monitoringDidFail(region, error))
                    events += clients.unmonitor(region.identifier, client: session.number, &outbox, &persistence)
                    outbox.log(.notice, "region \(region.identifier) of \(session.appID) stopped: \(error.message)", session.logMetadata)
                }
                regionsChanged = true
            }
            var rangingChanged = false
            for constraint in session.rangedConstraints where constraint.kind == .privateDevice {
                guard let name = constraint.deviceName else { continue }
                let key = configuration.deviceKey(name, for: app)
                if let key, key.fingerprint == constraint.uuid { continue }
                clients.unrange(constraint, client: session.number)
                if let key {
                    clients.range(constraint.resolvingDevice(fingerprint: key.fingerprint), client: session.number)
                } else {
                    outbox.notify(session, .rangingDidFail(constraint, Self.deviceGone(name, app: app, what: "its ranging stops", context)))
                }
                rangingChanged = true
            }
            if regionsChanged { clients.propertiesChanged(session.number, [.monitoredRegions], context, &outbox) }
            if rangingChanged {
                clients.propertiesChanged(session.number, [.rangedConstraints], context, &outbox)
                clients.refreshRanging(session.number, context, &outbox, &persistence, &delivery)
            }
            guard regionsChanged || rangingChanged else { continue }
            if !session.isConnected, clients.registry[session.number]?.regions.isEmpty == true {
                clients.removeSession(session.number, context, &outbox, &persistence, &delivery)
            }
            clients.route(events, context, &outbox, &persistence, &delivery)
        }
    }

    private static func deviceGone(_ name: String, app: AppConfiguration, what: String, _ context: Context) -> BeacondError {
        BeacondError(
            .invalidRegion,
            "no private device named '\(name)' is declared for \(app.declaration.appID) any more, so \(what). Fix: "
                + "declare its Identity Resolving Key again under [devices] in \(app.declaration.declarationFile) or in "
                + "\(context.configDirectory)/devices.d, reload, and start it again")
    }
}
