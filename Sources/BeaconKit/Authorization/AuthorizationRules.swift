/// Core Location's authorization model as pure functions: what each status allows, how requests and
/// administrator actions change an app's record, and what follows for its clients. Nothing here is silent:
/// every refusal is an `AuthorizationError` that names the app and the fix.
public enum AuthorizationRules {
    /// What a client sees: the stored status, or `restricted` while location services are switched off.
    public static func effectiveStatus(_ record: AuthorizationRecord, _ policy: AuthorizationPolicy) -> AuthorizationStatus {
        policy.locationServicesEnabled ? record.status : .restricted
    }

    /// How far the app may range now; the daemon pauses ranging for clients that `allows(inUse:)` refuses.
    public static func rangingPermission(_ record: AuthorizationRecord, _ policy: AuthorizationPolicy) -> RangingPermission {
        effectiveStatus(record, policy).rangingPermission
    }

    /// Throws unless a client of `app` may range now: WhenInUse while the client is in use, or Always.
    public static func checkRanging(
        app: AppDeclaration, record: AuthorizationRecord, policy: AuthorizationPolicy,
        inUse: Bool
    ) throws(AuthorizationError) {
        if let error = rangingRefusal(app, record, policy, inUse: inUse) { throw error }
    }

    /// Throws unless a client of `app` may monitor regions: only Always allows it.
    public static func checkMonitoring(
        app: AppDeclaration, record: AuthorizationRecord,
        policy: AuthorizationPolicy
    ) throws(AuthorizationError) {
        if let error = monitoringRefusal(app, record, policy) { throw error }
    }

    /// What the daemon does right after a client registers: send `AuthorizationChanged` with the current
    /// effective status, through the same path as every later change.
    public static func registration(
        app: AppDeclaration, record: AuthorizationRecord,
        policy: AuthorizationPolicy
    ) -> AuthorizationSideEffects {
        AuthorizationSideEffects(authorizationChanged: effectiveStatus(record, policy))
    }

    /// What follows for one app's clients when the policy changes (the location-services switch; `prompt` alone
    /// changes nothing, and requests already waiting keep waiting for an administrator).
    public static func policyChanged(
        app: AppDeclaration, record: AuthorizationRecord,
        from old: AuthorizationPolicy, to new: AuthorizationPolicy
    ) -> AuthorizationSideEffects {
        sideEffects(app: app, from: record, old, to: record, new)
    }

    /// The difference between two effective states as work for the daemon: `AuthorizationChanged` when the
    /// effective status changed, and whatever ranging or monitoring the new status no longer allows.
    public static func sideEffects(
        app: AppDeclaration, from oldRecord: AuthorizationRecord,
        _ oldPolicy: AuthorizationPolicy, to newRecord: AuthorizationRecord,
        _ newPolicy: AuthorizationPolicy
    ) -> AuthorizationSideEffects {
        let before = effectiveStatus(oldRecord, oldPolicy)
        let after = effectiveStatus(newRecord, newPolicy)
        guard before != after else { return .none }
        let lostMonitoring = before.allowsMonitoring && !after.allowsMonitoring
        let lostRanging = before.rangingPermission != .refused && after.rangingPermission == .refused
        return AuthorizationSideEffects(
            authorizationChanged: after,
            monitoringFailure: lostMonitoring ? monitoringRefusal(app, newRecord, newPolicy) : nil,
            rangingFailure: lostRanging ? rangingRefusal(app, newRecord, newPolicy, inUse: true) : nil,
            rangingRestrictedToInUse: before.rangingPermission == .always && after.rangingPermission == .whileInUse)
    }

    static func rangingRefusal(
        _ app: AppDeclaration, _ record: AuthorizationRecord, _ policy: AuthorizationPolicy,
        inUse: Bool
    ) -> AuthorizationError? {
        guard policy.locationServicesEnabled else {
            return AuthorizationMessages.locationServicesDisabled(.ranging, app, record, policy)
        }
        switch record.status.rangingPermission {
        case .always: return nil
        case .whileInUse: return inUse ? nil : AuthorizationMessages.notInUse(app, record)
        case .refused: return AuthorizationMessages.notAuthorized(.ranging, app, record)
        }
    }

    static func monitoringRefusal(
        _ app: AppDeclaration, _ record: AuthorizationRecord,
        _ policy: AuthorizationPolicy
    ) -> AuthorizationError? {
        guard policy.locationServicesEnabled else {
            return AuthorizationMessages.locationServicesDisabled(.monitoring, app, record, policy)
        }
        return record.status.allowsMonitoring ? nil : AuthorizationMessages.notAuthorized(.monitoring, app, record)
    }
}
