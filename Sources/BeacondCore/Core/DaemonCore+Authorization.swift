package import BeaconKit
import BeacondAPI
import Logging

/// Authorization calls, routed: `AuthorizationService` decides, saves and logs; what each change means for the app's
/// clients (`AuthorizationSideEffects`) goes to `ClientChanges`, at once.
extension DaemonCore {
    package mutating func requestAuthorization(_ request: AuthorizationRequest, client number: Int) throws(CallError) -> AuthorizationStatus {
        let session = try clients.session(number)
        let app = try clientContext.app(of: session)
        let answer = try authorization.requested(
            request, by: session, app: app, configured: configuration.policy, persistence.settings, &outbox)
        apply(answer.sideEffects, to: session.appID)
        return answer.status
    }

    /// What a change of status means for every client of the app (`ClientChanges.apply`), with the status as it is now.
    package mutating func apply(_ effects: AuthorizationSideEffects, to appID: String) {
        let context = clientContext
        ClientChanges.apply(&clients, effects, to: appID, context, &outbox, &persistence, &delivery)
    }

    // MARK: Administrator

    package mutating func setAuthorization(_ appID: String, _ text: String, sender: String) throws(CallError) {
        let app = try configuration.declaredApp(appID, configDirectory: configDirectory)
        let sideEffects = try authorization.administratorSets(
            appID, to: text, app: app, sender: sender, configured: configuration.policy, persistence.settings, &outbox)
        apply(sideEffects, to: appID)
    }

    package mutating func resetAuthorization(_ appID: String) throws(CallError) {
        let app = try configuration.declaredApp(appID, configDirectory: configDirectory)
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
            from: oldPolicy, to: policy, appIDs: clients.registry.appIDs, configuration: configuration, &outbox)
        for change in changes { apply(change.sideEffects, to: change.appID) }
    }
}
