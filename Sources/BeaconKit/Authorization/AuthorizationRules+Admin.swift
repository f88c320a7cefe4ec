extension AuthorizationRules {
    /// The administrator sets the app's status (the iOS Settings app): it applies at once, answers any waiting
    /// request, and keeps the upgrade record, so a downgrade from Always does not hand the app a fresh upgrade
    /// request. Setting `notDetermined` is a reset.
    public static func setStatus(
        _ status: AuthorizationStatus, app: AppDeclaration, record: AuthorizationRecord,
        policy: AuthorizationPolicy
    ) -> AuthorizationAdminOutcome {
        guard status != .notDetermined else { return reset(app: app, record: record, policy: policy) }
        let newRecord = AuthorizationRecord(
            status: status,
            upgradeRequestUsed: record.upgradeRequestUsed || record.hasPendingUpgrade)
        return outcome(app, record, newRecord, policy)
    }

    /// The administrator resets the app to `notDetermined`: it may ask again, including its one upgrade request.
    /// A waiting request is dropped (the app asks again to be answered).
    public static func reset(
        app: AppDeclaration, record: AuthorizationRecord,
        policy: AuthorizationPolicy
    ) -> AuthorizationAdminOutcome {
        outcome(app, record, .initial, policy)
    }

    /// The administrator answers the app (`beaconctl auth grant APP always|when-in-use`, `beaconctl auth deny APP`).
    /// A grant sets that status whether or not a request waits (the administrator may grant more than was asked).
    /// Deny refuses the waiting request: a refused upgrade keeps WhenInUse (iOS's "Keep Only While Using");
    /// otherwise the app becomes `denied`.
    public static func decide(
        _ decision: AuthorizationDecision, app: AppDeclaration, record: AuthorizationRecord,
        policy: AuthorizationPolicy
    ) -> AuthorizationAdminOutcome {
        let status: AuthorizationStatus =
            switch decision {
            case .grantAlways: .authorizedAlways
            case .grantWhenInUse: .authorizedWhenInUse
            case .deny: record.hasPendingUpgrade ? .authorizedWhenInUse : .denied
            }
        return setStatus(status, app: app, record: record, policy: policy)
    }

    private static func outcome(
        _ app: AppDeclaration, _ record: AuthorizationRecord, _ newRecord: AuthorizationRecord,
        _ policy: AuthorizationPolicy
    ) -> AuthorizationAdminOutcome {
        AuthorizationAdminOutcome(
            record: newRecord, effectiveStatus: effectiveStatus(newRecord, policy),
            resolvedRequest: record.pendingRequest,
            sideEffects: sideEffects(app: app, from: record, policy, to: newRecord, policy))
    }
}
