import BeaconKit
@testable import BeacondCore
@testable import BeacondService
import Testing

/// The clients and their regions as a concern of its own, with no core: registration, monitoring, leaving and
/// takeover, and what an authorization change does, over the real state database file; the registry, the engine and
/// the saved rows are checked to agree after each step.
@Suite("clients and their regions, alone")
struct ClientServiceTests {
    let fixture: ConcernFixture
    var service: ClientService
    var state: ConcernState
    let context: ClientService.Context

    init() throws {
        fixture = try ConcernFixture()
        service = ClientService(engine: BeaconEngine(fixture.configuration.monitoring))
        state = ConcernState(fixture)
        context = ClientService.Context(
            configuration: fixture.configuration, configDirectory: fixture.files.configuration.path,
            authorization: AuthorizationService(records: [CoreHarness.door: AuthorizationRecord(status: .authorizedAlways)]),
            fleet: FleetRooms())
    }

    mutating func register(sender: String = ":1.5") throws -> Int {
        try service.register(CoreHarness.door, sender: sender, caller: CoreHarness.alice, context, &state.outbox, &state.persistence, &state.delivery)
            .number
    }

    mutating func monitor(_ client: Int, _ identifier: String) throws {
        try LocationManagerCalls.startMonitoring(
            &service, client: client, .success(try CoreHarness.region(identifier)), context, &state.outbox, &state.persistence, &state.delivery)
    }

    /// What the registry, the engine and (once committed) the database say each client monitors.
    mutating func views() throws -> (registry: Set<String>, engine: Set<String>, saved: Set<String>) {
        state.persistence.commit(.powerLoss, force: false, current: [:], &state.outbox)
        let registry = Set(service.registry.all.flatMap { session in session.regionOrder.map { "\(session.number):\($0)" } })
        let engine = Set(
            service.engine.monitoredRegions.keys.compactMap { key -> String? in
                guard case .region(let client, let identifier) = key else { return nil }
                return "\(client):\(identifier)"
            })
        let saved = Set(try state.persistence.loadRegions(perApp: .max).regions.map { "\($0.client):\($0.monitored.region.identifier)" })
        return (registry, engine, saved)
    }

    @Test("a region started and stopped is in the registry, the engine and the saved rows together, then in none")
    mutating func monitorAndStop() throws {
        let client = try register()
        #expect(state.outbox.take().contains { if case .exportClient(client) = $0 { true } else { false } })
        try monitor(client, "front")
        var seen = try views()
        #expect(seen.registry == ["\(client):front"] && seen.engine == seen.registry && seen.saved == seen.registry)
        try LocationManagerCalls.stopMonitoring(&service, client: client, "front", context, &state.outbox, &state.persistence, &state.delivery)
        seen = try views()
        #expect(seen.registry.isEmpty && seen.engine.isEmpty && seen.saved.isEmpty)
        #expect {
            try LocationManagerCalls.stopMonitoring(&service, client: client, "front", context, &state.outbox, &state.persistence, &state.delivery)
        } throws: { error in
            guard case .beacond(let refusal) = error as? CallError else { return false }
            return refusal.name == .unknownRegion
        }
    }

    @Test("an Always client that leaves keeps its regions for the app, and the app's next client takes them over")
    mutating func leaveAndTakeOver() throws {
        let first = try register()
        try monitor(first, "front")
        service.connectionClosed(":1.5", context, &state.outbox, &state.persistence, &state.delivery)
        #expect(service[first]?.isConnected == false)
        #expect(try views().engine == ["\(first):front"], "an Always app's region must outlive the client's connection")
        let second = try register(sender: ":1.6")
        #expect(service[first] == nil)
        let seen = try views()
        #expect(seen.registry == ["\(second):front"] && seen.engine == seen.registry && seen.saved == seen.registry)
    }

    @Test("monitoring no longer allowed: each region fails with the reason, and stops everywhere")
    mutating func authorizationRevoked() throws {
        let client = try register()
        try monitor(client, "front")
        try monitor(client, "back")
        _ = state.outbox.take()
        let failure = AuthorizationError(kind: .notAuthorized, appID: CoreHarness.door, message: "Always was revoked")
        ClientChanges.apply(
            &service, AuthorizationSideEffects(authorizationChanged: .denied, monitoringFailure: failure), to: CoreHarness.door, context,
            &state.outbox, &state.persistence, &state.delivery)
        let failed = state.outbox.take().compactMap { effect -> String? in
            guard case .notify(_, .monitoringDidFail(let region, _), _) = effect else { return nil }
            return region.identifier
        }
        #expect(failed == ["front", "back"])
        let seen = try views()
        #expect(seen.registry.isEmpty && seen.engine.isEmpty && seen.saved.isEmpty)
    }
}
