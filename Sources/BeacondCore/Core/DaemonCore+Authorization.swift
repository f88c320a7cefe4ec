package import BeaconKit
import BeacondAPI
import Logging

/// The authorization flow on BeaconKit's rules: client requests, administrator decisions, the services switch,
/// and what each change means for the app's clients, applied at once.
extension DaemonCore {
    package mutating func requestAuthorization(_ request: AuthorizationRequest, client number: Int) throws(CallError) -> AuthorizationStatus {
        let session = try session(number)
        let app = try app(of: session)
        let old = record(session.appID)
        let outcome: AuthorizationRequestOutcome
        do {
            outcome = try authorization.request(
                request, appID: session.appID, app: app.declaration, policy: policy,
                save: { [settings = persistence.settings] record throws(StateDatabaseError) in try settings.save(record, for: session.appID) })
        } catch {
            if case .refused(let refusal) = error {
                outbox.log(.notice, "\(request.methodName) from \(session.appID) refused: \(refusal.message)", session.logMetadata)
            }
            throw callError(error, what: "the authorization of \(session.appID)")
        }
        let disposition: String
        switch outcome.disposition {
        case .decided: disposition = "decided"
        case .pending: disposition = "pending"
        case .ignored: disposition = "ignored"
        }
        if outcome.pending, old.pendingRequest != outcome.record.pendingRequest {
            let usage = app.declaration.usageDescription(for: request) ?? ""
            let text =
                "\(session.appID) requests \(request.grantArgument) authorization (\"\(usage)\"); decide with: "
                + "beaconctl auth grant \(session.appID) \(request.grantArgument)  or  beaconctl auth deny \(session.appID)"
            outbox.log(.notice, text, session.logMetadata)
        } else if let note = outcome.note {
            outbox.log(.info, "\(request.methodName) from \(session.appID): \(note)", session.logMetadata)
        }
        outbox.notify(.authorizationRequested(ClientAddress(session), request, disposition: disposition))
        apply(outcome.sideEffects, to: session.appID)
        return outcome.effectiveStatus
    }

    /// A refusal by the rules, or a decision that could not be saved (the caller's error, not a lost grant).
    /// `what` names what was not saved: an app's authorization, or the location services switch.
    package mutating func callError(_ error: AuthorizationChangeError, what: String) -> CallError {
        switch error {
        case .refused(let refusal):
            return BeacondError(refusal).callError
        case .notSaved(let failure):
            outbox.log(.error, "could not save \(what): \(failure)")
            return Self.notSaved(what, failure)
        }
    }

    /// A decision or switch that could not be saved is not applied (a restart would undo it): `StateNotSaved`
    /// says so, with the file system's reason and the fix.
    package static func notSaved(_ what: String, _ error: StateDatabaseError) -> CallError {
        BeacondError(
            .stateNotSaved,
            "nothing changed: \(what) could not be saved (\(error.message)), and beacond "
                + "applies a decision only once it is saved, so that a restart cannot undo it. Fix: \(error.fix), then try again"
        ).callError
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

    package func declaredApp(_ appID: String) throws(CallError) -> (String, AppConfiguration) {
        guard let app = configuration.apps[appID] else {
            throw BeacondError(
                .unknownApp,
                UnknownAppMessage.text(
                    appID: appID, declared: Array(configuration.apps.keys),
                    configDirectory: configDirectory, suggestFix: false)
            ).callError
        }
        return (appID, app)
    }

    /// `SetAuthorization(app, status)`: the Settings app. `denied` answers a waiting upgrade request with
    /// "keep WhenInUse" (BeaconKit's `decide(.deny)`); `notDetermined` resets.
    package mutating func setAuthorization(_ appID: String, _ text: String, sender: String) throws(CallError) {
        let (appID, app) = try declaredApp(appID)
        guard let status = AuthorizationStatus(rawValue: text) else {
            throw BeacondError(.invalidArguments, "status must be one of \(BeacondStatus.all.joined(separator: ", "))").callError
        }
        let outcome: AuthorizationAdminOutcome
        do {
            outcome = try authorization.setStatus(
                status, appID: appID, app: app.declaration, policy: policy,
                save: { [settings = persistence.settings] record throws(StateDatabaseError) in try settings.save(record, for: appID) })
        } catch {
            throw callError(error, what: "the authorization of \(appID)")
        }
        let answered = outcome.resolvedRequest.map { " (answering its \($0.grantArgument) request)" } ?? ""
        outbox.log(
            .notice, "administrator set \(appID) to \(outcome.record.status.rawValue)\(answered)",
            ["client.app": "\(appID)", "admin.sender": "\(sender)"])
        apply(outcome.sideEffects, to: appID)
    }

    package mutating func resetAuthorization(_ appID: String) throws(CallError) {
        let (appID, app) = try declaredApp(appID)
        let outcome: AuthorizationAdminOutcome
        do {
            outcome = try authorization.reset(
                appID: appID, app: app.declaration, policy: policy,
                save: { [settings = persistence.settings] record throws(StateDatabaseError) in try settings.save(record, for: appID) })
        } catch {
            throw callError(error, what: "the authorization of \(appID)")
        }
        outbox.log(.notice, "administrator reset \(appID) to notDetermined", ["client.app": "\(appID)"])
        apply(outcome.sideEffects, to: appID)
    }

    package mutating func setLocationServicesEnabled(_ enabled: Bool) throws(CallError) {
        if enabled, !configuration.locationServicesEnabled {
            throw BeacondError(
                .locationServicesDisabled,
                "location_services = false in \(configDirectory)/beacond.toml "
                    + "overrides this switch. Fix: set location_services = true there and reload beacond (" + BeacondAdvice.reload + ")"
            ).callError
        }
        let oldPolicy = policy
        do {
            let changed = try authorization.setServicesSwitch(enabled) { [settings = persistence.settings] enabled throws(StateDatabaseError) in
                try settings.saveLocationServicesSwitch(enabled)
            }
            guard changed else { return }
        } catch {
            throw callError(error, what: "the location services switch")
        }
        applyPolicyChange(from: oldPolicy)
    }

    /// Everyone's effective status may have changed (the services switch, a reloaded beacond.toml).
    package mutating func applyPolicyChange(from oldPolicy: AuthorizationPolicy) {
        let newPolicy = policy
        guard oldPolicy != newPolicy else { return }
        if oldPolicy.locationServicesEnabled != newPolicy.locationServicesEnabled {
            outbox.log(.notice, "location services are now \(newPolicy.locationServicesEnabled ? "on" : "off")")
            outbox.emit(.managerPropertyChanged(.locationServicesEnabled(newPolicy.locationServicesEnabled)))
            outbox.notify(.locationServicesChanged(enabled: newPolicy.locationServicesEnabled))
        }
        for appID in clients.appIDs {
            guard let app = configuration.apps[appID] else { continue }
            let effects = AuthorizationRules.policyChanged(app: app.declaration, record: record(appID), from: oldPolicy, to: newPolicy)
            apply(effects, to: appID)
        }
    }
}
