import BeaconKit
@testable import BeacondService
@testable import BeacondCore
import Foundation
import Testing

/// Which saved regions resume after a restart, without a database.
@Suite("region restore")
struct RegionRestoreTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    static func stored(_ identifier: String, client: Int, app: String, state: RegionState = .inside) throws -> StoredRegion {
        let region = try BeaconRegion(identifier: identifier, constraint: BeaconIdentityConstraint(uuid: uuid))
        return StoredRegion(
            client: client, appID: app,
            monitored: MonitoredRegion(
                region: region, state: state,
                lastSeen: nil, lastDeterminedState: state))
    }

    /// Each client's regions resume together, in saved order, clients by number, with their saved state.
    @Test func savedRegionsResumeUnderTheirClients() throws {
        let saved = [
            try Self.stored("b", client: 9, app: "org.example.A"), try Self.stored("a", client: 3, app: "org.example.A"),
            try Self.stored("c", client: 9, app: "org.example.A", state: .outside),
        ]
        let plan = RegionRestore.plan(saved, status: { _ in .authorizedAlways }, declaredWhere: "/etc/beacond/apps.d")
        #expect(plan.dropped.isEmpty)
        #expect(plan.resumed.map(\.client) == [3, 9])
        #expect(plan.resumed[1].regions.map(\.region.identifier) == ["b", "c"])
        #expect(plan.resumed[1].regions[1].state == .outside)
    }

    /// An app no longer declared, or no longer allowed to monitor (denied, WhenInUse, services off), loses its
    /// saved regions, each drop with its reason; the others resume.
    @Test func appsThatMayNoLongerMonitorAreNotResumed() throws {
        let saved = [
            try Self.stored("a", client: 1, app: "org.example.Gone"), try Self.stored("b", client: 2, app: "org.example.Denied"),
            try Self.stored("c", client: 2, app: "org.example.Denied"), try Self.stored("d", client: 3, app: "org.example.InUse"),
            try Self.stored("e", client: 4, app: "org.example.Always"),
        ]
        let statuses: [String: AuthorizationStatus] = [
            "org.example.Denied": .denied, "org.example.InUse": .authorizedWhenInUse,
            "org.example.Always": .authorizedAlways,
        ]
        let plan = RegionRestore.plan(saved, status: { statuses[$0] }, declaredWhere: "/etc/beacond/apps.d")
        #expect(plan.resumed.map(\.appID) == ["org.example.Always"])
        #expect(
            plan.dropped == [
                .init(client: 1, appID: "org.example.Gone", count: 1, reason: "it is no longer declared in /etc/beacond/apps.d"),
                .init(client: 2, appID: "org.example.Denied", count: 2, reason: "it is denied now"),
                .init(client: 3, appID: "org.example.InUse", count: 1, reason: "it is authorizedWhenInUse now"),
            ])
    }
}
