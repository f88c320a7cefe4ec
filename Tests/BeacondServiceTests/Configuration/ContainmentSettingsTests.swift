import BeaconKit
@testable import BeacondService
@testable import BeacondCore
import Foundation
import TestKit
import Testing

/// The bounds of issue 21: their keys, defaults and warnings, and the registry's counts they are checked against.
@Suite("bounds per app and per user")
struct ContainmentSettingsTests {
    @Test("the limits' keys are read, with 100 regions and 64 clients by default")
    func keysAndDefaults() throws {
        #expect(DaemonConfiguration.defaults.maxRegionsPerApp == 100)
        #expect(DaemonConfiguration.defaults.maxClientsPerApp == 64)
        #expect(DaemonConfiguration.defaults.maxClientsPerUser == 64)
        let directory = try ConfigurationDirectory()
        try directory.write(
            "[monitoring]\nmax_regions_per_app = 7\n[clients]\nmax_clients_per_app = 3\nmax_clients_per_user = 4\n",
            to: "beacond.toml")
        let configuration = try directory.load()
        #expect(configuration.maxRegionsPerApp == 7)
        #expect(configuration.maxClientsPerApp == 3)
        #expect(configuration.maxClientsPerUser == 4)
        #expect(configuration.warnings.count == 0)
    }

    /// A deployment that raised max_regions_per_client before max_regions_per_app existed must not lose regions
    /// at the first start after an upgrade (the restart trims each app to max_regions_per_app).
    @Test("unset, max_regions_per_app is never below max_regions_per_client")
    func appLimitFollowsARaisedClientLimit() throws {
        let directory = try ConfigurationDirectory()
        try directory.write("[monitoring]\nmax_regions_per_client = 500\n", to: "beacond.toml")
        #expect(try directory.load().maxRegionsPerApp == 500)
    }

    @Test("a client limit above the app's is a warning at its line")
    func clientLimitAboveTheAppsWarns() throws {
        let directory = try ConfigurationDirectory()
        try directory.write("[monitoring]\nmax_regions_per_client = 50\nmax_regions_per_app = 10\n", to: "beacond.toml")
        let warnings = try directory.load().warnings
        #expect(warnings.count == 1)
        #expect(warnings.first?.line == 2)
        #expect("\(warnings.first.map { "\($0)" } ?? "")".contains("max_regions_per_app"))
    }

    @Test(
        "out of range limits are errors naming the key",
        arguments: [
            "[monitoring]\nmax_regions_per_app = 0", "[monitoring]\nmax_regions_per_app = 10001",
            "[clients]\nmax_clients_per_app = 0", "[clients]\nmax_clients_per_user = 1001",
        ])
    func outOfRange(_ text: String) throws {
        let directory = try ConfigurationDirectory()
        try directory.write(text + "\n", to: "beacond.toml")
        let error = try #require(directory.loadError())
        let key = String(text.split(separator: "\n")[1].split(separator: " ")[0])
        #expect("\(error)".contains(key))
    }

    /// The per-app and global counts are kept as sessions change, never recounted: after any sequence of the
    /// registry's changes they must equal a recount (a drift would let an app past its limit, or lock it out).
    @Test("the region and connection counts always equal a recount", arguments: [UInt64(1), 2, 3, 4, 5])
    func countsNeverDrift(seed: UInt64) throws {
        var random = SplitMix64(state: seed)
        var registry = ClientRegistry()
        let apps = ["org.example.A", "org.example.B", "org.example.C"]
        var restored = 1000
        for step in 0..<2000 {
            let numbers = registry.all.map(\.number)
            switch Int.random(in: 0..<9, using: &random) {
            case 0, 1:
                let caller = CallerCredentials(userName: "u", userID: UInt32.random(in: 0..<3, using: &random), executable: nil)
                _ = registry.register(
                    appID: apps.randomElement(using: &random)!, sender: ":1.\(Int.random(in: 0..<5, using: &random))",
                    caller: caller, processID: nil)
            case 2, 3:
                if let number = numbers.randomElement(using: &random) {
                    registry.addRegion(try ClientRegistryTests.region("r\(Int.random(in: 0..<8, using: &random))"), to: number)
                }
            case 4:
                if let number = numbers.randomElement(using: &random) {
                    registry.removeRegion("r\(Int.random(in: 0..<8, using: &random))", from: number)
                }
            case 5:
                if let number = numbers.randomElement(using: &random) { registry.detach(number) }
            case 6:
                if let number = numbers.randomElement(using: &random) { registry.remove(number) }
            case 7:
                // A takeover as the daemon does it: the moved regions added to the live client, the old ones removed.
                if let live = numbers.filter({ registry[$0]?.isConnected == true }).randomElement(using: &random),
                    let plan = registry.planTakeover(into: live, monitored: { _, _ in true })
                {
                    for move in plan.moves { registry.addRegion(move.region, to: live) }
                    for old in plan.detached { registry.remove(old.number) }
                }
            default:
                restored += 1
                registry.restore(
                    number: restored, appID: apps.randomElement(using: &random)!,
                    regions: [try ClientRegistryTests.region("s\(step)")])
            }
            let all = registry.all
            #expect(registry.regionCount == all.map(\.regions.count).reduce(0, +), "step \(step)")
            #expect(registry.connectedCount == all.filter(\.isConnected).count, "step \(step)")
            for app in apps {
                #expect(registry.regionCount(of: app) == all.filter { $0.appID == app }.map(\.regions.count).reduce(0, +))
                #expect(registry.connectedCount(of: app) == all.filter { $0.appID == app && $0.isConnected }.count)
            }
            for user in UInt32(0)..<3 {
                #expect(registry.connectedCount(ofUser: user) == all.filter { $0.userID == user && $0.isConnected }.count)
            }
        }
    }
}
