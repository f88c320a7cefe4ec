import BeaconKit
@testable import BeacondService
@testable import BeacondCore
import Foundation
import Testing

/// Issue 40: "a client monitors a region" and "a client ranges a constraint" each have one writer
/// (`ClientService+Regions.swift`; ranging follows `rangingActive`), and they hold after every input of randomized
/// sequences: registrations, authorization changes, regions added and removed, closes, connections lost (with the
/// app's next client taking over), sightings and time passing. Checked after each input: the registry, the engine
/// and, once committed, the state database name the same regions for every client, and the engine ranges exactly
/// the active clients' constraints. A failure prints the seed and the steps so far, to replay it.
@Suite("core: one owner per invariant, under randomized inputs")
struct DaemonCoreRegionsInvariantTests {
    /// SplitMix64: a seeded generator, so a failing sequence can be run again.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// A client's region (by identifier) or ranged constraint (by its text).
    struct Pair: Hashable, CustomStringConvertible {
        var client: Int
        var name: String
        var description: String { "\(client):\(name)" }
    }

    /// What disagrees, or nil.
    static func disagreement(_ h: CoreHarness) throws -> String? {
        let core = h.core
        let registry = Set(core.clients.registry.all.flatMap { session in session.regions.keys.map { Pair(client: session.number, name: $0) } })
        let engine = Set(
            core.clients.engine.monitoredRegions.keys.compactMap { key -> Pair? in
                if case .region(let client, let identifier) = key { return Pair(client: client, name: identifier) }
                return nil
            })
        if registry != engine { return "registry \(registry.sorted { "\($0)" < "\($1)" }) but engine \(engine.sorted { "\($0)" < "\($1)" })" }
        h.feed(.commit(.processCrash))
        let stored = Set(try core.persistence.loadRegions(perApp: .max).regions.map { Pair(client: $0.client, name: $0.monitored.region.identifier) })
        if stored != registry, h.core.persistence.journal.failure == nil {
            return "registry \(registry.sorted { "\($0)" < "\($1)" }) but saved \(stored.sorted { "\($0)" < "\($1)" })"
        }
        let ranging = Set(
            core.clients.registry.all.filter(\.rangingActive).flatMap { session in
                session.rangedConstraints.map { Pair(client: session.number, name: "\($0)") }
            })
        let ranged = Set(
            core.clients.engine.rangedKeys.compactMap { key -> Pair? in
                if case .ranging(let client, let constraint) = key { return Pair(client: client, name: "\(constraint)") }
                return nil
            })
        if ranging != ranged { return "active clients range \(ranging) but the engine \(ranged)" }
        return nil
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func theRegistryTheEngineAndTheDatabaseAgree(seed: UInt64) throws {
        var random = SeededGenerator(state: seed)
        let h = try CoreHarness()
        let senders = [":1.1", ":1.2", ":1.3"]
        let apps = [CoreHarness.door, CoreHarness.table]
        let identifiers = ["lobby", "desk", "hall"]
        let statuses: [AuthorizationStatus] = [.authorizedAlways, .authorizedWhenInUse, .denied]
        var clients: [Int] = []
        var steps: [String] = []
        for _ in 0..<150 {
            let step: String
            switch Int.random(in: 0..<11, using: &random) {
            case 0:
                let app = apps.randomElement(using: &random)!, sender = senders.randomElement(using: &random)!
                if let number = try? h.register(app, sender: sender) { clients.append(number) }
                step = "register \(app) on \(sender)"
            case 1:
                let app = apps.randomElement(using: &random)!, status = statuses.randomElement(using: &random)!
                h.call(.setAuthorization(appID: app, status: status.rawValue, sender: ":1.99"))
                step = "grant \(app) \(status)"
            case 2, 3:
                guard let client = clients.randomElement(using: &random) else { continue }
                let identifier = identifiers.randomElement(using: &random)!
                let minor = UInt16.random(in: 1...3, using: &random)
                h.call(.startMonitoring(client: client, .success(try CoreHarness.region(identifier, minor: minor))))
                step = "client \(client) monitors \(identifier) (minor \(minor))"
            case 4:
                guard let client = clients.randomElement(using: &random) else { continue }
                let identifier = identifiers.randomElement(using: &random)!
                h.call(.stopMonitoring(client: client, identifier: identifier))
                step = "client \(client) stops \(identifier)"
            case 5:
                guard let client = clients.randomElement(using: &random) else { continue }
                let minor = UInt16.random(in: 1...3, using: &random)
                let constraint = try BeaconIdentityConstraint(uuid: CoreHarness.uuid, major: 1, minor: minor)
                if Bool.random(using: &random) {
                    h.call(.startRanging(client: client, .success(constraint)))
                    step = "client \(client) ranges minor \(minor)"
                } else {
                    h.call(.stopRanging(client: client, .success(constraint)))
                    step = "client \(client) stops ranging minor \(minor)"
                }
            case 6:
                guard let client = clients.randomElement(using: &random) else { continue }
                let inUse = Bool.random(using: &random)
                h.call(.setInUse(client: client, inUse))
                step = "client \(client) in use: \(inUse)"
            case 7:
                guard let client = clients.randomElement(using: &random) else { continue }
                h.call(.close(client: client))
                step = "client \(client) closes"
            case 8:
                let sender = senders.randomElement(using: &random)!
                h.feed(.connectionClosed(sender))
                step = "connection \(sender) closed"
            case 9:
                let minor = UInt16.random(in: 1...3, using: &random)
                h.see(minor: minor)
                step = "minor \(minor) seen"
            default:
                let seconds = Double.random(in: 0...45, using: &random)
                h.run(to: h.now + .milliseconds(Int64(seconds * 1000)))
                step = "\(Int(seconds)) s pass"
            }
            steps.append(step)
            _ = h.take()
            if let problem = try Self.disagreement(h) {
                Issue.record("seed \(seed), after \(steps.count) steps (\(steps.joined(separator: "; "))): \(problem)")
                return
            }
        }
    }
}
