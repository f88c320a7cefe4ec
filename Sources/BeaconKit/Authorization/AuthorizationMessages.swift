/// The text of every refusal and every request that did not act at once. Kept in one place so the
/// wording (and the commands and keys it names) stays consistent; each sentence names the app and a fix.
enum AuthorizationMessages {
    /// What a client tried that authorization gates.
    enum Activity: String {
        case ranging
        case monitoring

        /// The request that would allow it.
        var neededRequest: AuthorizationRequest {
            switch self {
            case .ranging: .whenInUse
            case .monitoring: .always
            }
        }

        var requirement: String {
            switch self {
            case .ranging: "ranging needs authorizedWhenInUse or authorizedAlways"
            case .monitoring: "monitoring needs authorizedAlways"
            }
        }
    }

    /// How beacond reads its files again: systemd's reload, or SIGHUP to a beacond run by hand (a test's, one on a
    /// private bus); both are said, since the rules cannot know how the daemon was started.
    static let reloadCommand = "systemctl reload beacond, or kill -HUP a beacond run by hand"
    static let reload = "reload beacond (\(reloadCommand))"

    static func grant(_ request: AuthorizationRequest, _ app: AppDeclaration) -> String {
        "beaconctl auth grant \(app.appID) \(request.grantArgument)"
    }

    static func reset(_ app: AppDeclaration) -> String {
        "beaconctl auth reset \(app.appID)"
    }

    static func addUsage(_ request: AuthorizationRequest, _ app: AppDeclaration) -> String {
        "add \(request.usageDescriptionKey) = \"<why \(app.appID) needs location>\" to \(app.declarationFile)"
    }

    static func servicesOn(_ policy: AuthorizationPolicy) -> String {
        "beaconctl services on, or set location_services = true in \(policy.configFile) and \(reload)"
    }

    // MARK: errors

    static func missingUsageDescription(_ request: AuthorizationRequest, _ app: AppDeclaration) -> AuthorizationError {
        let label = request == .whenInUse ? "a when-in-use" : "an always"
        return AuthorizationError(
            kind: .missingUsageDescription, appID: app.appID,
            message: "\(request.methodName) needs \(label) usage description, and app '\(app.appID)' declares none. "
                + "Fix: \(addUsage(request, app)) and \(reload), then call \(request.methodName) again.")
    }

    static func locationServicesDisabled(
        _ activity: Activity, _ app: AppDeclaration, _ record: AuthorizationRecord,
        _ policy: AuthorizationPolicy
    ) -> AuthorizationError {
        AuthorizationError(
            kind: .locationServicesDisabled, appID: app.appID,
            message: "\(activity.rawValue) is refused: location services are switched off for every app, so app "
                + "'\(app.appID)' is effectively restricted (its own status, \(record.status), returns when they are "
                + "switched on). Fix: \(servicesOn(policy)).")
    }

    static func notAuthorized(
        _ activity: Activity, _ app: AppDeclaration,
        _ record: AuthorizationRecord
    ) -> AuthorizationError {
        AuthorizationError(
            kind: .notAuthorized, appID: app.appID,
            message: "\(activity.requirement); \(situation(activity, app, record))")
    }

    static func notInUse(_ app: AppDeclaration, _ record: AuthorizationRecord) -> AuthorizationError {
        AuthorizationError(
            kind: .notAuthorized, appID: app.appID,
            message: "ranging with authorizedWhenInUse works only while the client is in use, and this client of app "
                + "'\(app.appID)' marked itself background (SetInUse(false)). Fix: call SetInUse(true) while it is in "
                + "use, or get authorizedAlways to range in background: \(upgradePath(app, record))")
    }

    /// Where the app stands and what would change it, after "X needs Y; ".
    private static func situation(_ activity: Activity, _ app: AppDeclaration, _ record: AuthorizationRecord) -> String {
        let id = app.appID
        let needed = activity.neededRequest
        switch record.status {
        case .notDetermined:
            if let pending = record.pendingRequest {
                if pending >= needed {
                    return "app '\(id)' is notDetermined and its \(pending.methodName) waits for an administrator. "
                        + "Fix: wait for AuthorizationChanged, or ask an administrator: \(grant(needed, app))"
                }
                return "app '\(id)' is notDetermined and its \(pending.methodName) waits for an administrator, but "
                    + "\(pending.requestedStatus) would not allow \(activity.rawValue). Fix: "
                    + requestPath(needed, app, note: "it widens the waiting request")
            }
            let request =
                activity == .ranging && app.usageDescription(for: .whenInUse) == nil
                    && app.usageDescription(for: .always) != nil ? AuthorizationRequest.always : needed
            return "app '\(id)' is notDetermined: request authorization first. Fix: "
                + requestPath(request, app, note: nil)
        case .restricted, .denied:
            return "app '\(id)' is \(locked(record.status, needed, app))"
        case .authorizedWhenInUse:
            return "app '\(id)' is authorizedWhenInUse. Fix: \(upgradePath(app, record))"
        case .authorizedAlways:
            // Nothing is refused for Always; kept total so a future rule cannot produce an empty message.
            return "app '\(id)' is authorizedAlways"
        }
    }

    /// "Call M (…) or ask an administrator: beaconctl auth grant APP G", with the declaration fix first when the
    /// request would fail for lack of a usage description.
    private static func requestPath(_ request: AuthorizationRequest, _ app: AppDeclaration, note: String?) -> String {
        let call = "call \(request.methodName)" + (note.map { " (\($0))" } ?? "")
        let prefix = app.usageDescription(for: request) == nil ? "\(addUsage(request, app)), \(reload), then " : ""
        return "\(prefix)\(call), or ask an administrator: \(grant(request, app))"
    }

    /// Why requests do nothing for a restricted or denied app, and who can change it, after "is ".
    private static func locked(
        _ status: AuthorizationStatus, _ request: AuthorizationRequest,
        _ app: AppDeclaration
    ) -> String {
        let undo = "\(grant(request, app)), or \(reset(app)) to let the app ask again"
        return status == .restricted
            ? "restricted: an administrator locked its location access, and requests do nothing. Fix: only an "
                + "administrator can lift the lock: \(undo)"
            : "\(status), and requests do nothing until an administrator changes it. Fix: ask an administrator: \(undo)"
    }

    /// How an authorizedWhenInUse app gets Always, given its one upgrade request.
    private static func upgradePath(_ app: AppDeclaration, _ record: AuthorizationRecord) -> String {
        if record.hasPendingUpgrade {
            return "its RequestAlwaysAuthorization waits for an administrator (wait for AuthorizationChanged, or ask "
                + "an administrator: \(grant(.always, app)))"
        }
        if record.upgradeRequestUsed {
            return "it has used its one upgrade request, so only an administrator can grant Always: "
                + grant(.always, app)
        }
        return requestPath(.always, app, note: "one upgrade request is allowed")
    }

    // MARK: requests that did not act at once

    static func note(
        for disposition: AuthorizationRequestDisposition, _ request: AuthorizationRequest,
        _ app: AppDeclaration, _ record: AuthorizationRecord, _ policy: AuthorizationPolicy
    ) -> String? {
        let id = app.appID
        let did = "\(request.methodName) from app '\(id)' did nothing"
        switch disposition {
        case .decided:
            return nil
        case .pending:
            return "\(request.methodName) from app '\(id)' waits for an administrator: "
                + "beaconctl auth grant \(id) always|when-in-use, or beaconctl auth deny \(id). "
                + "AuthorizationChanged follows the decision."
        case .ignored(.locationServicesDisabled):
            return "\(did): location services are switched off, so every app is effectively restricted. "
                + "Fix: \(servicesOn(policy)), then request again."
        case .ignored(.restricted), .ignored(.denied):
            return "\(did): the app is \(locked(record.status, request, app))."
        case .ignored(.alreadyDetermined):
            return "\(did): the app is already \(record.status), which \(request.methodName) cannot change."
        case .ignored(.upgradeAlreadyUsed):
            return "\(did): the app has used its one upgrade request (authorizedWhenInUse to authorizedAlways). "
                + "Fix: only an administrator can grant Always now: \(grant(.always, app))."
        }
    }
}
