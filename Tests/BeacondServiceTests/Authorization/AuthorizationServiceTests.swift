import BeaconKit
@testable import BeacondService
@testable import BeacondCore
import Testing

/// The authorization records and the services switch, without a bus or a database: a change is applied only
/// once its write succeeds, and Settings' status maps to BeaconKit's decisions.
@Suite("authorization service")
struct AuthorizationServiceTests {
    static let appID = "org.example.Demo"
    static let app = AppDeclaration(
        appID: appID, whenInUseUsageDescription: "Shows the table you sit at",
        alwaysUsageDescription: "Greets you at the door")
    static let policy = AuthorizationPolicy()
    static let diskFull = StateDatabaseError(file: "/var/lib/beacond/state.db", message: "database or disk is full", fix: "free space")

    /// Records every write it is asked to make, or fails each one.
    final class Writes {
        var saved: [AuthorizationRecord] = []
        var fails = false
        func save(_ record: AuthorizationRecord) throws(StateDatabaseError) {
            if fails { throw AuthorizationServiceTests.diskFull }
            saved.append(record)
        }
    }

    /// A request waits for the administrator (prompt = admin), saved first; the administrator's grant answers it.
    @Test func aRequestWaitsAndAGrantAnswersIt() throws {
        var service = AuthorizationService()
        let writes = Writes()
        let outcome = try service.request(.whenInUse, appID: Self.appID, app: Self.app, policy: Self.policy, save: writes.save)
        #expect(outcome.disposition == .pending)
        #expect(writes.saved.count == 1)
        #expect(service.pendingRequests.map(\.appID) == [Self.appID])
        let granted = try service.setStatus(
            .authorizedWhenInUse, appID: Self.appID, app: Self.app, policy: Self.policy,
            save: writes.save)
        #expect(granted.resolvedRequest == .whenInUse)
        #expect(service.effectiveStatus(Self.appID, Self.policy) == .authorizedWhenInUse)
        #expect(service.pendingRequests.isEmpty)
        #expect(writes.saved.last == service.record(Self.appID))
    }

    /// A write that fails changes nothing: the app keeps its status and its waiting request.
    @Test func aDecisionThatCannotBeSavedChangesNothing() throws {
        var service = AuthorizationService()
        let writes = Writes()
        _ = try service.request(.whenInUse, appID: Self.appID, app: Self.app, policy: Self.policy, save: writes.save)
        let before = service.record(Self.appID)
        writes.fails = true
        for status in [AuthorizationStatus.authorizedAlways, .denied, .notDetermined] {
            #expect(throws: AuthorizationChangeError.self) {
                _ = try service.setStatus(status, appID: Self.appID, app: Self.app, policy: Self.policy, save: writes.save)
            }
        }
        #expect(throws: AuthorizationChangeError.self) {
            _ = try service.reset(appID: Self.appID, app: Self.app, policy: Self.policy, save: writes.save)
        }
        #expect(service.record(Self.appID) == before)
        #expect(service.pendingRequests.count == 1)
    }

    /// Denying a waiting upgrade keeps WhenInUse (iOS's "Keep Only While Using"); denying otherwise denies.
    @Test func denyAnswersAnUpgradeWithWhenInUse() throws {
        var service = AuthorizationService()
        let writes = Writes()
        _ = try service.setStatus(.authorizedWhenInUse, appID: Self.appID, app: Self.app, policy: Self.policy, save: writes.save)
        _ = try service.request(.always, appID: Self.appID, app: Self.app, policy: Self.policy, save: writes.save)
        _ = try service.setStatus(.denied, appID: Self.appID, app: Self.app, policy: Self.policy, save: writes.save)
        #expect(service.record(Self.appID).status == .authorizedWhenInUse)
        _ = try service.setStatus(.denied, appID: Self.appID, app: Self.app, policy: Self.policy, save: writes.save)
        #expect(service.record(Self.appID).status == .denied)
    }

    /// A request the rules refuse (no usage description for it) is refused before anything is written.
    @Test func aRefusedRequestWritesNothing() throws {
        var service = AuthorizationService()
        let writes = Writes()
        let undeclared = AppDeclaration(appID: Self.appID)
        do {
            _ = try service.request(.always, appID: Self.appID, app: undeclared, policy: Self.policy, save: writes.save)
            Issue.record("the request was accepted")
        } catch {
            guard case .refused = error else { Issue.record("refused for the wrong reason: \(error)"); return }
        }
        #expect(writes.saved.isEmpty)
        #expect(service.record(Self.appID) == .initial)
    }

    /// The switch: written only when it changes, kept as it was when the write fails, and off in the policy if
    /// either beacond.toml or the switch says off.
    @Test func theServicesSwitchChangesOnlyOnceSaved() throws {
        var service = AuthorizationService()
        var written: [Bool] = []
        #expect(try service.setServicesSwitch(true) { written.append($0) } == false)
        #expect(written.isEmpty)
        #expect(throws: AuthorizationChangeError.self) {
            _ = try service.setServicesSwitch(false) { (_: Bool) throws(StateDatabaseError) in throw Self.diskFull }
        }
        #expect(service.servicesSwitch)
        #expect(try service.setServicesSwitch(false) { written.append($0) })
        #expect(written == [false])
        #expect(!service.policy(configured: Self.policy).locationServicesEnabled)
        _ = try service.setServicesSwitch(true) { written.append($0) }
        #expect(!service.policy(configured: Self.policy.withLocationServices(false)).locationServicesEnabled)
        #expect(service.policy(configured: Self.policy).locationServicesEnabled)
    }
}
