package import BeaconKit

/// Every app's authorization and the administrator's location services switch: Core Location's Settings, on
/// BeaconKit's rules. It owns the records (loaded from the state database at start) and changes one only once
/// the change is saved, so a restart cannot undo a decision: each changing method takes the write to make, and
/// changes nothing if it throws. What a change means for the app's clients is in the returned outcome, for the
/// daemon to carry out.
package struct AuthorizationService {
    package private(set) var records: [String: AuthorizationRecord]
    /// `beaconctl services off`: the administrator's switch, on top of `location_services` in beacond.toml.
    package private(set) var servicesSwitch: Bool

    package init(records: [String: AuthorizationRecord] = [:], servicesSwitch: Bool = true) {
        self.records = records
        self.servicesSwitch = servicesSwitch
    }

    package func record(_ appID: String) -> AuthorizationRecord { records[appID] ?? .initial }

    /// The policy in force: beacond.toml's, with location services off if either the file or the switch says so.
    package func policy(configured: AuthorizationPolicy) -> AuthorizationPolicy {
        configured.withLocationServices(configured.locationServicesEnabled && servicesSwitch)
    }

    package func effectiveStatus(_ appID: String, _ policy: AuthorizationPolicy) -> AuthorizationStatus {
        AuthorizationRules.effectiveStatus(record(appID), policy)
    }

    /// Apps with a request waiting for the administrator, by app id.
    package var pendingRequests: [(appID: String, request: AuthorizationRequest, status: AuthorizationStatus)] {
        records.keys.sorted().compactMap { appID in
            guard let stored = records[appID], let request = stored.pendingRequest else { return nil }
            return (appID, request, stored.status)
        }
    }

    /// A client's RequestWhenInUseAuthorization / RequestAlwaysAuthorization. Throws the rules' refusal (a
    /// missing usage description) before anything is saved.
    package mutating func request(
        _ request: AuthorizationRequest, appID: String, app: AppDeclaration, policy: AuthorizationPolicy,
        save: (AuthorizationRecord) throws(StateDatabaseError) -> Void
    )
        throws(AuthorizationChangeError) -> AuthorizationRequestOutcome
    {
        let outcome: AuthorizationRequestOutcome
        do {
            outcome = try AuthorizationRules.request(request, app: app, record: record(appID), policy: policy)
        } catch {
            throw .refused(error)
        }
        if outcome.record != record(appID) { try keep(outcome.record, for: appID, save: save) }
        return outcome
    }

    /// `SetAuthorization(app, status)`: a grant sets that status; `denied` answers a waiting upgrade request with
    /// "keep WhenInUse" (iOS's "Keep Only While Using"), else denies; `notDetermined` resets.
    package mutating func setStatus(
        _ status: AuthorizationStatus, appID: String, app: AppDeclaration, policy: AuthorizationPolicy,
        save: (AuthorizationRecord) throws(StateDatabaseError) -> Void
    )
        throws(AuthorizationChangeError) -> AuthorizationAdminOutcome
    {
        let old = record(appID)
        let outcome: AuthorizationAdminOutcome =
            switch status {
            case .authorizedAlways: AuthorizationRules.decide(.grantAlways, app: app, record: old, policy: policy)
            case .authorizedWhenInUse: AuthorizationRules.decide(.grantWhenInUse, app: app, record: old, policy: policy)
            case .denied: AuthorizationRules.decide(.deny, app: app, record: old, policy: policy)
            case .restricted, .notDetermined: AuthorizationRules.setStatus(status, app: app, record: old, policy: policy)
            }
        try keep(outcome.record, for: appID, save: save)
        return outcome
    }

    /// `ResetAuthorization(app)`: back to notDetermined, its one upgrade request given back.
    package mutating func reset(
        appID: String, app: AppDeclaration, policy: AuthorizationPolicy,
        save: (AuthorizationRecord) throws(StateDatabaseError) -> Void
    )
        throws(AuthorizationChangeError) -> AuthorizationAdminOutcome
    {
        let outcome = AuthorizationRules.reset(app: app, record: record(appID), policy: policy)
        try keep(outcome.record, for: appID, save: save)
        return outcome
    }

    /// The administrator's switch. Returns whether it changed; an unchanged switch is not written.
    package mutating func setServicesSwitch(_ enabled: Bool, save: (Bool) throws(StateDatabaseError) -> Void)
        throws(AuthorizationChangeError) -> Bool
    {
        guard enabled != servicesSwitch else { return false }
        do { try save(enabled) } catch { throw .notSaved(error) }
        servicesSwitch = enabled
        return true
    }

    private mutating func keep(
        _ record: AuthorizationRecord, for appID: String,
        save: (AuthorizationRecord) throws(StateDatabaseError) -> Void
    ) throws(AuthorizationChangeError) {
        do { try save(record) } catch { throw .notSaved(error) }
        records[appID] = record
    }
}

/// Why an authorization change did not happen: the rules refused it, or it could not be saved (then nothing
/// changed).
package enum AuthorizationChangeError: Error {
    case refused(AuthorizationError)
    case notSaved(StateDatabaseError)
}
