package import BeaconKit
import BeacondAPI

/// The authorization flow as calls meet it: a client's request, the administrator's decisions and the services
/// switch, each saved before it is applied (`StatePersistence.SettingsWriter`), logged and told to administrators
/// through the outbox. What a change means for the app's clients comes back as BeaconKit's
/// `AuthorizationSideEffects`, for the clients' side of the core to carry out.
extension AuthorizationService {
    /// `RequestWhenInUseAuthorization` / `RequestAlwaysAuthorization` of `session`'s app: the status it has now,
    /// and what the request changed for the app's clients.
    package mutating func requested(
        _ request: AuthorizationRequest, by session: ClientSession, app: AppConfiguration, configured: AuthorizationPolicy,
        _ settings: StatePersistence.SettingsWriter, _ outbox: inout CoreOutbox
    ) throws(CallError) -> (status: AuthorizationStatus, sideEffects: AuthorizationSideEffects) {
        let old = record(session.appID)
        let outcome: AuthorizationRequestOutcome
        do {
            outcome = try self.request(
                request, appID: session.appID, app: app.declaration, policy: policy(configured: configured),
                save: { record throws(StateDatabaseError) in try settings.save(record, for: session.appID) })
        } catch {
            if case .refused(let refusal) = error {
                outbox.log(.notice, "\(request.methodName) from \(session.appID) refused: \(refusal.message)", session.logMetadata)
            }
            throw Self.callError(error, what: "the authorization of \(session.appID)", &outbox)
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
        return (outcome.effectiveStatus, outcome.sideEffects)
    }

    /// `SetAuthorization(app, status)`: the Settings app. `denied` answers a waiting upgrade request with
    /// "keep WhenInUse" (BeaconKit's `decide(.deny)`); `notDetermined` resets.
    package mutating func administratorSets(
        _ appID: String, to text: String, app: AppConfiguration, sender: String, configured: AuthorizationPolicy,
        _ settings: StatePersistence.SettingsWriter, _ outbox: inout CoreOutbox
    ) throws(CallError) -> AuthorizationSideEffects {
        guard let status = AuthorizationStatus(rawValue: text) else {
            throw BeacondError(.invalidArguments, "status must be one of \(BeacondStatus.all.joined(separator: ", "))").callError
        }
        let outcome: AuthorizationAdminOutcome
        do {
            outcome = try setStatus(
                status, appID: appID, app: app.declaration, policy: policy(configured: configured),
                save: { record throws(StateDatabaseError) in try settings.save(record, for: appID) })
        } catch {
            throw Self.callError(error, what: "the authorization of \(appID)", &outbox)
        }
        let answered = outcome.resolvedRequest.map { " (answering its \($0.grantArgument) request)" } ?? ""
        outbox.log(
            .notice, "administrator set \(appID) to \(outcome.record.status.rawValue)\(answered)",
            ["client.app": "\(appID)", "admin.sender": "\(sender)"])
        return outcome.sideEffects
    }

    /// `ResetAuthorization(app)`: back to notDetermined, its one upgrade request given back.
    package mutating func administratorResets(
        _ appID: String, app: AppConfiguration, configured: AuthorizationPolicy, _ settings: StatePersistence.SettingsWriter,
        _ outbox: inout CoreOutbox
    ) throws(CallError) -> AuthorizationSideEffects {
        let outcome: AuthorizationAdminOutcome
        do {
            outcome = try reset(
                appID: appID, app: app.declaration, policy: policy(configured: configured),
                save: { record throws(StateDatabaseError) in try settings.save(record, for: appID) })
        } catch {
            throw Self.callError(error, what: "the authorization of \(appID)", &outbox)
        }
        outbox.log(.notice, "administrator reset \(appID) to notDetermined", ["client.app": "\(appID)"])
        return outcome.sideEffects
    }

    /// `SetLocationServicesEnabled`: the administrator's switch, refused while beacond.toml turns location services
    /// off. Returns whether the switch changed.
    package mutating func administratorSwitches(
        _ enabled: Bool, configuration: DaemonConfiguration, configDirectory: String, _ settings: StatePersistence.SettingsWriter,
        _ outbox: inout CoreOutbox
    ) throws(CallError) -> Bool {
        if enabled, !configuration.locationServicesEnabled {
            throw BeacondError(
                .locationServicesDisabled,
                "location_services = false in \(configDirectory)/beacond.toml "
                    + "overrides this switch. Fix: set location_services = true there and reload beacond (" + BeacondAdvice.reload + ")"
            ).callError
        }
        do {
            return try setServicesSwitch(enabled) { enabled throws(StateDatabaseError) in try settings.saveLocationServicesSwitch(enabled) }
        } catch {
            throw Self.callError(error, what: "the location services switch", &outbox)
        }
    }

    /// Everyone's effective status may have changed (the services switch, a reloaded beacond.toml): the switch's
    /// news, and what the change means for each app in `appIDs` that is still declared.
    package func policyChanged(
        from oldPolicy: AuthorizationPolicy, to newPolicy: AuthorizationPolicy, appIDs: [String], configuration: DaemonConfiguration,
        _ outbox: inout CoreOutbox
    ) -> [(appID: String, sideEffects: AuthorizationSideEffects)] {
        guard oldPolicy != newPolicy else { return [] }
        if oldPolicy.locationServicesEnabled != newPolicy.locationServicesEnabled {
            outbox.log(.notice, "location services are now \(newPolicy.locationServicesEnabled ? "on" : "off")")
            outbox.emit(.managerPropertyChanged(.locationServicesEnabled(newPolicy.locationServicesEnabled)))
            outbox.notify(.locationServicesChanged(enabled: newPolicy.locationServicesEnabled))
        }
        return appIDs.compactMap { appID in
            guard let app = configuration.apps[appID] else { return nil }
            return (appID, AuthorizationRules.policyChanged(app: app.declaration, record: record(appID), from: oldPolicy, to: newPolicy))
        }
    }

    /// A refusal by the rules, or a decision that could not be saved (the caller's error, not a lost grant).
    /// `what` names what was not saved: an app's authorization, or the location services switch.
    private static func callError(_ error: AuthorizationChangeError, what: String, _ outbox: inout CoreOutbox) -> CallError {
        switch error {
        case .refused(let refusal):
            return BeacondError(refusal).callError
        case .notSaved(let failure):
            outbox.log(.error, "could not save \(what): \(failure)")
            return notSaved(what, failure)
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
}
