package import BeaconKit
import BeacondAPI
import Logging

/// The clients' side of authorization: calls are routed to `AuthorizationService` (which decides, saves and logs),
/// and what each change means for the app's clients (`AuthorizationSideEffects`) is applied here, at once.
extension DaemonCore {
    package mutating func requestAuthorization(_ request: AuthorizationRequest, client number: Int) throws(CallError) -> AuthorizationStatus {
        let session = try session(number)
        let app = try app(of: session)
        let answer = try authorization.requested(
            request, by: session, app: app, configured: configuration.policy, persistence.settings, &outbox)
        apply(answer.sideEffects, to: session.appID)
        return answer.status
    }

    /// What a change of status means for every client of the app, applied now.
    package mutating func apply(_ effects: AuthorizationSideEffects, to appID: String) {
        let sessions = clients.clients(of: appID)
        if let status = effects.authorizationChanged, sessions.isEmpty {
            // An administrator watching events sees every change, also of an app with no client to tell.
            outbox.notify(.authorizationChanged(appID: appID, status))
        }
        for session in sessions {
            if let status = effects.authorizationChanged {
                outbox.notify(session, .authorizationChanged(status), .clientOnly)
                clientPropertiesChanged(session.number, [.authorizationStatus])
                outbox.notify(session, .authorizationChanged(status), .administratorsOnly)
            }
            if let failure = effects.monitoringFailure { failMonitoring(session.number, BeacondError(failure)) }
            if let failure = effects.rangingFailure { failRanging(session.number, BeacondError(failure)) }
            refreshRanging(session.number)
        }
        if effects.authorizationChanged != nil {
            outbox.log(.info, "\(appID) is now \(effectiveStatus(appID).rawValue)", ["client.app": "\(appID)"])
        }
    }

    /// Monitoring is no longer allowed: every region fails with the reason and stops (Core Location's
    /// monitoringDidFailFor, made loud).
    package mutating func failMonitoring(_ number: Int, _ error: BeacondError) {
        guard let session = clients[number], !session.regions.isEmpty else { return }
        var events: [EngineEvent] = []
        for region in session.orderedRegions {
            outbox.notify(session, .monitoringDidFail(region, error))
            events += unmonitor(region.identifier, client: number)
        }
        outbox.log(.notice, "monitoring of \(session.path) stopped: \(error.message)", session.logMetadata)
        clientPropertiesChanged(number, [.monitoredRegions])
        if !session.isConnected { removeSession(number) }
        engineChanged(events)
    }

    package mutating func failRanging(_ number: Int, _ error: BeacondError) {
        guard let session = clients[number], !session.rangedConstraints.isEmpty else { return }
        for constraint in session.rangedConstraints {
            outbox.notify(session, .rangingDidFail(constraint, error))
        }
        unrange(nil, client: number)
        clientPropertiesChanged(number, [.rangedConstraints])
        engineChanged([])
    }

    // MARK: Administrator

    package func declaredApp(_ appID: String) throws(CallError) -> AppConfiguration {
        guard let app = configuration.apps[appID] else {
            throw BeacondError(
                .unknownApp,
                UnknownAppMessage.text(
                    appID: appID, declared: Array(configuration.apps.keys),
                    configDirectory: configDirectory, suggestFix: false)
            ).callError
        }
        return app
    }

    package mutating func setAuthorization(_ appID: String, _ text: String, sender: String) throws(CallError) {
        let app = try declaredApp(appID)
        let sideEffects = try authorization.administratorSets(
            appID, to: text, app: app, sender: sender, configured: configuration.policy, persistence.settings, &outbox)
        apply(sideEffects, to: appID)
    }

    package mutating func resetAuthorization(_ appID: String) throws(CallError) {
        let app = try declaredApp(appID)
        let sideEffects = try authorization.administratorResets(
            appID, app: app, configured: configuration.policy, persistence.settings, &outbox)
        apply(sideEffects, to: appID)
    }

    package mutating func setLocationServicesEnabled(_ enabled: Bool) throws(CallError) {
        let oldPolicy = policy
        guard
            try authorization.administratorSwitches(
                enabled, configuration: configuration, configDirectory: configDirectory, persistence.settings, &outbox)
        else { return }
        applyPolicyChange(from: oldPolicy)
    }

    /// Everyone's effective status may have changed (the services switch, a reloaded beacond.toml).
    package mutating func applyPolicyChange(from oldPolicy: AuthorizationPolicy) {
        let changes = authorization.policyChanged(
            from: oldPolicy, to: policy, appIDs: clients.appIDs, configuration: configuration, &outbox)
        for change in changes { apply(change.sideEffects, to: change.appID) }
    }
}
