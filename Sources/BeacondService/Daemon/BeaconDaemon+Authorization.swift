import BeaconKit
import BeacondAPI
import DBus
import Logging

/// The authorization flow on BeaconKit's rules: client requests, administrator decisions, the services switch,
/// and what each change means for the app's clients, applied at once.
extension BeaconDaemon {
    func requestAuthorization(_ request: AuthorizationRequest, client number: Int) throws(DBusCallError) -> [DBusValue] {
        let session = try session(number)
        let app = try app(of: session)
        let old = record(session.appID)
        let outcome: AuthorizationRequestOutcome
        do {
            outcome = try authorization.request(
                request, appID: session.appID, app: app.declaration, policy: policy,
                save: { record throws(StateStoreError) in try stateFile.save(record, for: session.appID) })
        } catch {
            if case .refused(let refusal) = error {
                logger.notice("\(request.methodName) from \(session.appID) refused: \(refusal.message)", metadata: metadata(session))
            }
            throw dbusError(error, what: "the authorization of \(session.appID)")
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
            logger.notice(
                "\(text)",
                metadata: metadata(session))
        } else if let note = outcome.note {
            logger.info("\(request.methodName) from \(session.appID): \(note)", metadata: metadata(session))
        }
        notify(.authorizationRequested(ClientAddress(session), request, disposition: disposition))
        apply(outcome.sideEffects, to: session.appID)
        return [.string(outcome.effectiveStatus.rawValue)]
    }

    /// A refusal by the rules, or a decision that could not be saved (the caller's error, not a lost grant).
    /// `what` names what was not saved: an app's authorization, or the location services switch.
    func dbusError(_ error: AuthorizationChangeError, what: String) -> DBusCallError {
        switch error {
        case .refused(let refusal):
            return BeacondError(refusal).dbusError
        case .notSaved(let failure):
            logger.error("could not save \(what): \(failure)")
            return Self.notSaved(what, failure)
        }
    }

    /// A decision or switch that could not be saved is not applied (a restart would undo it): `StateNotSaved`
    /// says so, with the file system's reason and the fix.
    static func notSaved(_ what: String, _ error: StateStoreError) -> DBusCallError {
        BeacondError(
            .stateNotSaved,
            "nothing changed: \(what) could not be saved (\(error.message)), and beacond "
                + "applies a decision only once it is saved, so that a restart cannot undo it. Fix: \(error.fix), then try again"
        ).dbusError
    }

    /// What a change of status means for every client of the app, applied now.
    func apply(_ effects: AuthorizationSideEffects, to appID: String) {
        let sessions = clients.clients(of: appID)
        if let status = effects.authorizationChanged, sessions.isEmpty {
            // An administrator watching events sees every change, also of an app with no client to tell.
            notify(.authorizationChanged(appID: appID, status))
        }
        for session in sessions {
            if let status = effects.authorizationChanged {
                notify(session, .authorizationChanged(status), .clientOnly)
                clientPropertiesChanged(session.number, [.authorizationStatus])
                notify(session, .authorizationChanged(status), .administratorsOnly)
            }
            if let failure = effects.monitoringFailure { failMonitoring(session.number, BeacondError(failure)) }
            if let failure = effects.rangingFailure { failRanging(session.number, BeacondError(failure)) }
            refreshRanging(session.number)
        }
        if effects.authorizationChanged != nil {
            logger.info("\(appID) is now \(effectiveStatus(appID).rawValue)", metadata: ["client.app": "\(appID)"])
        }
    }

    /// Monitoring is no longer allowed: every region fails with the reason and stops (Core Location's
    /// monitoringDidFailFor, made loud).
    func failMonitoring(_ number: Int, _ error: BeacondError) {
        guard let session = clients[number], !session.regions.isEmpty else { return }
        var events: [EngineEvent] = []
        for region in session.orderedRegions {
            notify(session, .monitoringDidFail(region, error))
            events += engine.stopMonitoring(client: number, identifier: region.identifier, at: clock())
            clients.removeRegion(region.identifier, from: number)
            saveLater(.removeRegion(client: number, identifier: region.identifier))
        }
        logger.notice("monitoring of \(session.path) stopped: \(error.message)", metadata: metadata(session))
        clientPropertiesChanged(number, [.monitoredRegions])
        if !session.isConnected { removeSession(number) }
        engineChanged(events)
    }

    func failRanging(_ number: Int, _ error: BeacondError) {
        guard let session = clients[number], !session.rangedConstraints.isEmpty else { return }
        for constraint in session.rangedConstraints {
            notify(session, .rangingDidFail(constraint, error))
        }
        if session.rangingActive { engine.stopRanging(session.rangedConstraints, client: number) }
        clients.removeRangedConstraint(nil, from: number)
        clientPropertiesChanged(number, [.rangedConstraints])
        engineChanged([])
    }

    // MARK: Administrator

    func checkAdministrator(_ sender: String) throws(DBusCallError) {
        let peer = try peerCredentials(sender)
        guard let uid = peer.unixUserID else {
            throw BeacondError(.accessDenied, "the bus did not report who you are (no UnixUserID)").dbusError
        }
        if uid == 0 { return }
        let group = configuration.adminGroup
        let user = UnixAccounts.user(uid: uid)
        if let user, UnixAccounts.user(user, isMemberOf: group) { return }
        let name = user?.name ?? "uid \(uid)"
        throw BeacondError(
            .accessDenied,
            "\(BeacondInterface.admin) is for root and members of group '\(group)' "
                + "(admin_group in \(options.configDirectory)/beacond.toml); \(name) (uid \(uid)) is neither. "
                + "Fix: sudo usermod -aG \(group) \(user?.name ?? "<user>") and log in again, or run the command as root"
        ).dbusError
    }

    func declaredApp(_ value: DBusValue) throws(DBusCallError) -> (String, AppConfiguration) {
        guard case .string(let appID) = value else {
            throw BeacondError(.invalidArguments, "app_id must be a string").dbusError
        }
        guard let app = configuration.apps[appID] else {
            throw BeacondError(
                .unknownApp,
                UnknownAppMessage.text(
                    appID: appID, declared: Array(configuration.apps.keys),
                    configDirectory: options.configDirectory, suggestFix: false)
            ).dbusError
        }
        return (appID, app)
    }

    /// `SetAuthorization(app, status)`: the Settings app. `denied` answers a waiting upgrade request with
    /// "keep WhenInUse" (BeaconKit's `decide(.deny)`); `notDetermined` resets.
    func setAuthorization(_ call: DBusMethodCall) throws(DBusCallError) -> [DBusValue] {
        let (appID, app) = try declaredApp(call.arguments[0])
        guard case .string(let text) = call.arguments[1], let status = AuthorizationStatus(rawValue: text) else {
            throw BeacondError(.invalidArguments, "status must be one of \(BeacondStatus.all.joined(separator: ", "))").dbusError
        }
        let outcome: AuthorizationAdminOutcome
        do {
            outcome = try authorization.setStatus(
                status, appID: appID, app: app.declaration, policy: policy,
                save: { record throws(StateStoreError) in try stateFile.save(record, for: appID) })
        } catch {
            throw dbusError(error, what: "the authorization of \(appID)")
        }
        let answered = outcome.resolvedRequest.map { " (answering its \($0.grantArgument) request)" } ?? ""
        logger.notice(
            "administrator set \(appID) to \(outcome.record.status.rawValue)\(answered)",
            metadata: ["client.app": "\(appID)", "admin.sender": "\(call.sender)"])
        apply(outcome.sideEffects, to: appID)
        return []
    }

    func resetAuthorization(_ call: DBusMethodCall) throws(DBusCallError) -> [DBusValue] {
        let (appID, app) = try declaredApp(call.arguments[0])
        let outcome: AuthorizationAdminOutcome
        do {
            outcome = try authorization.reset(
                appID: appID, app: app.declaration, policy: policy, save: { record throws(StateStoreError) in try stateFile.save(record, for: appID) }
            )
        } catch {
            throw dbusError(error, what: "the authorization of \(appID)")
        }
        logger.notice("administrator reset \(appID) to notDetermined", metadata: ["client.app": "\(appID)"])
        apply(outcome.sideEffects, to: appID)
        return []
    }

    func setLocationServicesEnabled(_ call: DBusMethodCall) throws(DBusCallError) -> [DBusValue] {
        guard case .boolean(let enabled) = call.arguments[0] else { return [] }
        if enabled, !configuration.locationServicesEnabled {
            throw BeacondError(
                .locationServicesDisabled,
                "location_services = false in \(options.configDirectory)/beacond.toml "
                    + "overrides this switch. Fix: set location_services = true there and run systemctl reload beacond"
            ).dbusError
        }
        let oldPolicy = policy
        do {
            let changed = try authorization.setServicesSwitch(enabled) { enabled throws(StateStoreError) in
                try stateFile.saveLocationServicesSwitch(enabled)
            }
            guard changed else { return [] }
        } catch {
            throw dbusError(error, what: "the location services switch")
        }
        applyPolicyChange(from: oldPolicy)
        return []
    }

    /// Everyone's effective status may have changed (the services switch, a reloaded beacond.toml).
    func applyPolicyChange(from oldPolicy: AuthorizationPolicy) {
        let newPolicy = policy
        guard oldPolicy != newPolicy else { return }
        if oldPolicy.locationServicesEnabled != newPolicy.locationServicesEnabled {
            logger.notice("location services are now \(newPolicy.locationServicesEnabled ? "on" : "off")")
            bus?.propertyChanged(.locationServicesEnabled(newPolicy.locationServicesEnabled))
            notify(.locationServicesChanged(enabled: newPolicy.locationServicesEnabled))
        }
        for appID in clients.appIDs {
            guard let app = configuration.apps[appID] else { continue }
            let effects = AuthorizationRules.policyChanged(app: app.declaration, record: record(appID), from: oldPolicy, to: newPolicy)
            apply(effects, to: appID)
        }
    }
}
