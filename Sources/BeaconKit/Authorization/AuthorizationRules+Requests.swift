extension AuthorizationRules {
    /// `RequestWhenInUseAuthorization` / `RequestAlwaysAuthorization` from a client of `app`.
    ///
    /// A missing usage description is an error whatever the status (even when the request would do nothing),
    /// because it is a mistake in the app's declaration that iOS would hide. Otherwise the request acts only
    /// while the app is `notDetermined`, plus one WhenInUse→Always upgrade; everything else is ignored.
    public static func request(
        _ request: AuthorizationRequest, app: AppDeclaration, record: AuthorizationRecord,
        policy: AuthorizationPolicy
    ) throws(AuthorizationError) -> AuthorizationRequestOutcome {
        guard app.usageDescription(for: request) != nil else {
            throw AuthorizationMessages.missingUsageDescription(request, app)
        }
        let (newRecord, disposition) = answer(request, record, policy)
        return AuthorizationRequestOutcome(
            record: newRecord,
            effectiveStatus: effectiveStatus(newRecord, policy),
            disposition: disposition,
            sideEffects: sideEffects(app: app, from: record, policy, to: newRecord, policy),
            note: AuthorizationMessages.note(for: disposition, request, app, newRecord, policy))
    }

    private static func answer(
        _ request: AuthorizationRequest, _ record: AuthorizationRecord,
        _ policy: AuthorizationPolicy
    ) -> (AuthorizationRecord, AuthorizationRequestDisposition) {
        guard policy.locationServicesEnabled else { return (record, .ignored(.locationServicesDisabled)) }
        let used = record.upgradeRequestUsed
        switch record.status {
        case .restricted:
            return (record, .ignored(.restricted))
        case .denied:
            return (record, .ignored(.denied))
        case .authorizedAlways:
            return (record, .ignored(.alreadyDetermined))
        case .notDetermined:
            // A second request while one waits widens it: the app has now asked for the larger grant.
            if let waiting = record.pendingRequest {
                return (
                    AuthorizationRecord(
                        status: .notDetermined, upgradeRequestUsed: used,
                        pendingRequest: max(waiting, request)), .pending
                )
            }
            switch policy.prompt {
            case .admin:
                return (
                    AuthorizationRecord(status: .notDetermined, upgradeRequestUsed: used, pendingRequest: request),
                    .pending
                )
            case .deny:
                return (AuthorizationRecord(status: .denied, upgradeRequestUsed: used), .decided)
            case .whenInUse:
                return (AuthorizationRecord(status: .authorizedWhenInUse, upgradeRequestUsed: used), .decided)
            case .always:
                // Never more than asked for: a WhenInUse request gets WhenInUse.
                return (AuthorizationRecord(status: request.requestedStatus, upgradeRequestUsed: used), .decided)
            }
        case .authorizedWhenInUse:
            guard request == .always else { return (record, .ignored(.alreadyDetermined)) }
            if record.hasPendingUpgrade { return (record, .pending) }
            if used { return (record, .ignored(.upgradeAlreadyUsed)) }
            // The one upgrade request is spent when it is made, whatever the answer.
            switch policy.prompt {
            case .admin:
                return (
                    AuthorizationRecord(
                        status: .authorizedWhenInUse, upgradeRequestUsed: true,
                        pendingRequest: .always), .pending
                )
            case .deny, .whenInUse:
                return (AuthorizationRecord(status: .authorizedWhenInUse, upgradeRequestUsed: true), .decided)
            case .always:
                return (AuthorizationRecord(status: .authorizedAlways, upgradeRequestUsed: true), .decided)
            }
        }
    }
}
