import BeaconKit
@testable import BeacondCore
@testable import BeacondService
import Foundation
import Logging
import Testing

/// Authorization as a concern of its own, with no core: calls decide on BeaconKit's rules, save through
/// `StatePersistence`'s settings writer on the real state database file before anything changes, log and tell
/// administrators through the outbox, and hand back what the change means for the app's clients.
@Suite("authorization: calls, alone")
struct AuthorizationCallsTests {
    let fixture: ConcernFixture
    var outbox = CoreOutbox(now: CoreHarness.origin)
    var service = AuthorizationService()

    init() throws {
        fixture = try ConcernFixture()
    }

    var configuration: DaemonConfiguration { fixture.configuration }
    var database: FailingStateDatabase { fixture.database }
    var session: ClientSession { fixture.session }
    var settings: StatePersistence.SettingsWriter { StatePersistence(database: database).settings }
    static func refusal(_ error: any Error) -> BeacondError? {
        guard case .beacond(let refusal) = error as? CallError else { return nil }
        return refusal
    }

    var door: AppConfiguration { configuration.apps[CoreHarness.door]! }

    @Test("a request waits for the administrator, saved first and said to administrators; the grant's side effects tell the clients")
    mutating func requestThenGrant() throws {
        let answer = try service.requested(.always, by: session, app: door, configured: configuration.policy, settings, &outbox)
        #expect(answer.status == .notDetermined)
        #expect(try database.base.store.loadAll()[CoreHarness.door]?.pendingRequest == .always, "not saved")
        let effects = outbox.take()
        #expect(
            effects.contains {
                if case .adminEvent(.authorizationRequested(_, .always, let disposition)) = $0 { disposition == "pending" } else { false }
            })
        #expect(effects.contains { if case .log(.notice, let text, _) = $0 { text.contains("beaconctl auth grant") } else { false } })

        let granted = try service.administratorSets(
            CoreHarness.door, to: "authorizedAlways", app: door, sender: ":1.9", configured: configuration.policy, settings, &outbox)
        #expect(granted.authorizationChanged == .authorizedAlways)
        #expect(service.pendingRequests.isEmpty)
    }

    @Test("a decision that cannot be saved changes nothing and says StateNotSaved with the fix; a bad status is refused")
    mutating func notSaved() throws {
        database.failsWrites = true
        #expect {
            _ = try service.administratorSets(
                CoreHarness.door, to: "authorizedAlways", app: door, sender: ":1.9", configured: configuration.policy, settings, &outbox)
        } throws: { Self.refusal($0)?.name == .stateNotSaved && Self.refusal($0)?.message.contains("Fix: free space") == true }
        #expect(service.record(CoreHarness.door) == .initial)
        #expect(outbox.take().contains { if case .log(.error, let text, _) = $0 { text.contains("could not save") } else { false } })
        database.failsWrites = false
        #expect {
            _ = try service.administratorSets(
                CoreHarness.door, to: "always", app: door, sender: ":1.9", configured: configuration.policy, settings, &outbox)
        } throws: { Self.refusal($0)?.message.contains("status must be one of") == true }
    }

    @Test("the services switch off tells every still-declared app what it means, and is said once")
    mutating func switchOff() throws {
        let old = service.policy(configured: configuration.policy)
        _ = try service.administratorSets(
            CoreHarness.door, to: "authorizedAlways", app: door, sender: ":1.9", configured: configuration.policy, settings, &outbox)
        #expect(
            try service.administratorSwitches(
                false, configuration: configuration, configDirectory: fixture.files.configuration.path, settings, &outbox))
        #expect(
            try !service.administratorSwitches(
                false, configuration: configuration, configDirectory: fixture.files.configuration.path, settings, &outbox))
        _ = outbox.take()
        let changes = service.policyChanged(
            from: old, to: service.policy(configured: configuration.policy), appIDs: [CoreHarness.door, "org.example.Gone"],
            configuration: configuration, &outbox)
        #expect(changes.map(\.appID) == [CoreHarness.door])
        #expect(changes.first?.sideEffects.monitoringFailure != nil)
        #expect(outbox.take().contains { if case .managerPropertyChanged(.locationServicesEnabled(false)) = $0 { true } else { false } })
    }
}
