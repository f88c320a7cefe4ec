import BeaconKit
@testable import BeacondService
@testable import BeacondCore
import Foundation
import Testing

/// Client sessions and the takeover decision, without a bus.
@Suite("client registry")
struct ClientRegistryTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let caller = CallerCredentials(userName: "root", userID: 0, executable: nil)

    static func region(_ identifier: String, major: UInt16 = 1) throws -> BeaconRegion {
        try BeaconRegion(identifier: identifier, constraint: BeaconIdentityConstraint(uuid: uuid, major: major))
    }

    /// Registers a client of `app` on `sender` that monitors `regions`, then detaches it if `detached`.
    static func add(
        _ registry: inout ClientRegistry, app: String = "org.example.A", sender: String,
        regions: [BeaconRegion], detached: Bool
    ) -> Int {
        let number = registry.register(appID: app, sender: sender, caller: caller, processID: 1).number
        for region in regions { registry.addRegion(region, to: number) }
        if detached { registry.detach(number) }
        return number
    }

    @Test("numbers are never reused, also after a restart put clients back")
    func numbering() throws {
        var registry = ClientRegistry()
        registry.restore(number: 7, appID: "org.example.A", regions: [try Self.region("a")])
        #expect(registry[7]?.isConnected == false)
        #expect(registry[7]?.inUse == false)
        #expect(registry.register(appID: "org.example.A", sender: ":1.1", caller: Self.caller, processID: nil).number == 8)
        registry.reserveNumbers(through: 20)
        registry.remove(8)
        #expect(registry.register(appID: "org.example.A", sender: ":1.1", caller: Self.caller, processID: nil).number == 21)
    }

    @Test("detaching keeps the regions, drops the connection and in-use; ranging is removed separately")
    func detach() throws {
        var registry = ClientRegistry()
        let number = Self.add(&registry, sender: ":1.5", regions: [try Self.region("a")], detached: false)
        let constraint = try BeaconIdentityConstraint(uuid: Self.uuid)
        registry.addRangedConstraint(constraint, to: number)
        registry.setRangingActive(true, for: number)
        registry.detach(number)
        #expect(registry[number]?.sender == nil)
        #expect(registry[number]?.inUse == false)
        #expect(registry[number]?.rangedConstraints == [constraint])
        registry.removeRangedConstraint(nil, from: number)
        #expect(registry[number]?.rangedConstraints == [])
        #expect(registry[number]?.rangingActive == false)
        #expect(registry[number]?.regionOrder == ["a"])
        #expect(registry.clients(on: ":1.5").isEmpty)
    }

    @Test("the clients on a connection follow registration, detaching and removal, in number order")
    func clientsOnAConnection() throws {
        var registry = ClientRegistry()
        let first = Self.add(&registry, sender: ":1.5", regions: [], detached: false)
        let other = Self.add(&registry, sender: ":1.6", regions: [], detached: false)
        let second = Self.add(&registry, sender: ":1.5", regions: [], detached: false)
        let third = Self.add(&registry, app: "org.example.B", sender: ":1.5", regions: [], detached: false)
        #expect(registry.clients(on: ":1.5").map(\.number) == [first, second, third])
        #expect(registry.clients(on: ":1.6").map(\.number) == [other])
        #expect(registry.clients(of: "org.example.A").map(\.number) == [first, other, second])
        registry.detach(second)
        registry.remove(first)
        #expect(registry.clients(on: ":1.5").map(\.number) == [third])
        registry.remove(third)
        registry.remove(other)
        #expect(registry.clients(on: ":1.5").isEmpty && registry.clients(on: ":1.6").isEmpty)
        #expect(registry.all.map(\.number) == [second])
    }

    @Test("a takeover moves every detached region, beyond any per-client limit, in order")
    func takesEverything() throws {
        var registry = ClientRegistry()
        let a = Self.add(&registry, sender: ":1.1", regions: try (0..<15).map { try Self.region("a\($0)") }, detached: true)
        let b = Self.add(&registry, sender: ":1.1", regions: try (0..<15).map { try Self.region("b\($0)") }, detached: true)
        let other = Self.add(&registry, app: "org.example.Other", sender: ":1.2", regions: [try Self.region("x")], detached: true)
        let live = Self.add(&registry, sender: ":1.3", regions: [], detached: false)
        let plan = try #require(registry.planTakeover(into: live) { _, _ in true })
        #expect(plan.detached.map(\.number) == [a, b])
        #expect(plan.moves.count == 30)
        #expect(plan.moves.first == .init(from: a, appID: "org.example.A", region: try Self.region("a0")))
        #expect(plan.moves.last?.from == b)
        #expect(plan.replaced.isEmpty)
        #expect(!plan.detached.contains { $0.number == other })
    }

    @Test("one identifier twice: the live client's own region wins, else the later client's; the other is named")
    func identifierCollisions() throws {
        var registry = ClientRegistry()
        let a = Self.add(
            &registry, sender: ":1.1", regions: [try Self.region("lobby", major: 1), try Self.region("own", major: 1)],
            detached: true)
        let b = Self.add(&registry, sender: ":1.1", regions: [try Self.region("lobby", major: 2)], detached: true)
        let live = Self.add(&registry, sender: ":1.3", regions: [try Self.region("own", major: 9)], detached: false)
        let plan = try #require(registry.planTakeover(into: live) { _, _ in true })
        #expect(plan.moves == [.init(from: b, appID: "org.example.A", region: try Self.region("lobby", major: 2))])
        // In the order met: a's "own" (the live client has one), then a's "lobby" (b's replaces it).
        #expect(plan.replaced.map(\.region) == [try Self.region("own", major: 1), try Self.region("lobby", major: 1)])
        #expect(plan.replaced[0].by == "this client's own region own")
        #expect(plan.replaced[1].by.contains("later client \(registry[b]!.path)"))
        _ = a
    }

    @Test("regions the engine no longer monitors are not moved; no detached client, no plan")
    func onlyMonitoredRegionsMove() throws {
        var registry = ClientRegistry()
        let a = Self.add(
            &registry, sender: ":1.1", regions: [try Self.region("gone"), try Self.region("kept", major: 2)],
            detached: true)
        let live = Self.add(&registry, sender: ":1.3", regions: [], detached: false)
        let plan = try #require(registry.planTakeover(into: live) { _, identifier in identifier == "kept" })
        #expect(plan.moves.map(\.region.identifier) == ["kept"])
        #expect(plan.detached.map(\.number) == [a])
        registry.remove(a)
        #expect(registry.planTakeover(into: live) { _, _ in true } == nil)
    }

    @Test("the newest live client of an app, other than the closing connection's")
    func newestLive() {
        var registry = ClientRegistry()
        let first = Self.add(&registry, sender: ":1.1", regions: [], detached: false)
        let second = Self.add(&registry, sender: ":1.2", regions: [], detached: false)
        _ = Self.add(&registry, sender: ":1.3", regions: [], detached: true)
        #expect(registry.newestLiveClient(of: "org.example.A", excluding: ":1.2") == first)
        #expect(registry.newestLiveClient(of: "org.example.A", excluding: ":1.1") == second)
        #expect(registry.newestLiveClient(of: "org.example.B", excluding: ":1.1") == nil)
    }
}
