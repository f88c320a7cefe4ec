import BeaconKit
import BeacondAPI
@testable import BeacondService
@testable import BeacondCore
import DBus
import Foundation
import TestKit
import Testing

/// Issue 21: no client can grow its app or the daemon without bound, and no client's leaving deletes what its
/// app monitors. The whole daemon in-process on a private bus, driven as a hostile client would.
@Suite("beacond contains every client", .serialized)
struct ContainmentTests {
    static func withDaemon(settings: String = "", _ body: (RunningDaemon) async throws -> Void) async throws {
        try await DaemonOnPrivateBusTests.withDaemon(settings: settings, body)
    }

    static func status(_ running: RunningDaemon) throws -> [String: DBusValue] {
        let reply = try DaemonOnPrivateBusTests.admin(running).call(
            destination: BeacondBus.name, path: BeacondBus.managerPath, interface: BeacondInterface.admin,
            member: BeacondMember.getStatus)
        guard case .dictionary(_, _, let entries)? = reply.first else { throw TestFailure("GetStatus: \(reply)") }
        return Dictionary(
            entries.compactMap { entry -> (String, DBusValue)? in
                guard case .string(let key) = entry.key else { return nil }
                if case .variant(let value) = entry.value { return (key, value) }
                return (key, entry.value)
            }, uniquingKeysWith: { first, _ in first })
    }

    static func regionCount(_ running: RunningDaemon) throws -> UInt32? {
        if case .uint32(let count)? = try status(running)[BeacondStatusKey.regionCount] { return count }
        return nil
    }

    /// `Admin1.ListRegions(offset, limit)`: the identifiers of the page and the total.
    static func listRegions(_ running: RunningDaemon, offset: UInt32, limit: UInt32) throws -> (identifiers: [String], total: UInt32) {
        let reply = try DaemonOnPrivateBusTests.admin(running).call(
            destination: BeacondBus.name, path: BeacondBus.managerPath, interface: BeacondInterface.admin,
            member: BeacondMember.listRegions, arguments: [.uint32(offset), .uint32(limit)])
        guard reply.count == 2, case .array(_, let regions) = reply[0], case .uint32(let total) = reply[1] else {
            throw TestFailure("ListRegions: \(reply)")
        }
        let identifiers = regions.compactMap { region -> String? in
            guard case .dictionary(_, _, let entries) = region else { return nil }
            for entry in entries where entry.key == .string(BeacondKey.identifier) {
                if case .variant(.string(let identifier)) = entry.value { return identifier }
            }
            return nil
        }
        return (identifiers, total)
    }

    static func errorName(_ body: () throws -> Void) -> (name: String, message: String)? {
        do {
            try body()
            return nil
        } catch let error as DBusCallError {
            return (error.name, error.message)
        } catch {
            return ("?", "\(error)")
        }
    }

    /// The issue's second defect: the app's next client took `keep-me` over at registration, and its `Close()`
    /// stopped it. Close() now leaves as a disconnect does: the app keeps its regions.
    @Test func closeNeverDeletesTheAppsRegions() async throws {
        try await Self.withDaemon { running in
            try DaemonOnPrivateBusTests.authorizeAlways(running)
            var first: TestClient? = try TestClient(running)
            try first?.call(BeacondMember.startMonitoring, [try RunningDaemon.region("keep-me", minor: 7)])
            first = nil // `beaconctl client ... --keep-monitoring` exits
            #expect(await eventually { (try? Self.regionCount(running)) == 1 })

            let second = try TestClient(running) // `beaconctl client --app A range UUID --count 1`
            #expect(try second.monitoredIdentifiers() == ["keep-me"], "the next client did not take the region over")
            try second.call(BeacondMember.close)
            #expect(try Self.regionCount(running) == 1, "Close() of the client that took the region over deleted it")
            #expect(try Self.listRegions(running, offset: 0, limit: 0).identifiers == ["keep-me"])

            // A client that monitors a region itself and closes: the region is the app's too.
            let third = try TestClient(running)
            try third.call(BeacondMember.startMonitoring, [try RunningDaemon.region("mine", minor: 8)])
            try third.call(BeacondMember.close)
            #expect(try Self.regionCount(running) == 2)
            let fourth = try TestClient(running)
            #expect(try Set(fourth.monitoredIdentifiers()) == ["keep-me", "mine"])
            // Only StopMonitoring stops one.
            try fourth.call(BeacondMember.stopMonitoring, [.string("mine")])
            #expect(try Self.regionCount(running) == 1)
        }
    }

    /// The issue's first defect: connections that each register clients, monitor, and close, grew the app by
    /// ~620 regions each, without bound. Attached and detached regions count together against
    /// max_regions_per_app, so the loop cannot take the app past it, and the refusal names the key.
    @Test func noLoopOfConnectionsGrowsAnAppPastItsLimit() async throws {
        try await Self.withDaemon(settings: "max_regions_per_app = 12\nmax_regions_per_client = 5") { running in
            try DaemonOnPrivateBusTests.authorizeAlways(running)
            var accepted = 0
            var refusals: [String] = []
            for connection in 0..<6 {
                var clients: [TestClient] = []
                for _ in 0..<3 { clients.append(try TestClient(running)) }
                for (index, client) in clients.enumerated() {
                    for region in 0..<5 {
                        let identifier = String(repeating: "x", count: 200) + "-\(connection)-\(index)-\(region)"
                        if let refusal = Self.errorName({
                            try client.call(BeacondMember.startMonitoring, [try RunningDaemon.region(identifier, minor: UInt16(region))])
                        }) {
                            refusals.append(refusal.name)
                            if refusals.count == 1 {
                                #expect(refusal.message.contains("max_regions_per_app = 12"), "\(refusal.message)")
                            }
                        } else {
                            accepted += 1
                        }
                    }
                }
                clients.removeAll() // the connections close; their regions stay detached for the app
                #expect(await eventually { (try? Self.regionCount(running)) == 12 || accepted < 12 })
                #expect(try Self.regionCount(running).map { $0 <= 12 } == true)
            }
            #expect(accepted == 12)
            #expect(Set(refusals) == [BeacondErrorName.regionLimitExceeded.rawValue])
            #expect(try Self.regionCount(running) == 12)
            // The next client takes the app's twelve over, and the app still adds none.
            let next = try TestClient(running)
            #expect(try next.monitoredIdentifiers().count == 12)
            #expect(
                Self.errorName({ try next.call(BeacondMember.startMonitoring, [try RunningDaemon.region("one-more", minor: 1)]) })?
                    .name == BeacondErrorName.regionLimitExceeded.rawValue)
            // Stopping one makes room for one (in another client: this one holds more than max_regions_per_client).
            try next.call(BeacondMember.stopMonitoring, [.string(try #require(next.monitoredIdentifiers().first))])
            let other = try TestClient(running)
            try other.call(BeacondMember.startMonitoring, [try RunningDaemon.region("one-more", minor: 1)])
            #expect(try Self.regionCount(running) == 12)
        }
    }

    /// Connected clients are bounded per app and per unix user (the tests' user is the app's only user).
    @Test func clientsAreBoundedPerAppAndPerUser() async throws {
        try await Self.withDaemon(settings: "[clients]\nmax_clients_per_app = 3\nmax_clients_per_user = 5") { running in
            var clients = [try TestClient(running), try TestClient(running), try TestClient(running)]
            var refusal = Self.errorName { _ = try TestClient(running) }
            #expect(refusal?.name == BeacondErrorName.clientLimitExceeded.rawValue)
            #expect(refusal?.message.contains("max_clients_per_app = 3") == true, "\(refusal?.message ?? "")")
            try clients[0].call(BeacondMember.close)
            clients.removeFirst()
            clients.append(try TestClient(running)) // room again once one closed
            try running.writeSettings("[clients]\nmax_clients_per_app = 10\nmax_clients_per_user = 4")
            #expect(try running.reload() == "")
            clients.append(try TestClient(running))
            refusal = Self.errorName { _ = try TestClient(running) }
            #expect(refusal?.name == BeacondErrorName.clientLimitExceeded.rawValue)
            #expect(refusal?.message.contains("max_clients_per_user = 4") == true, "\(refusal?.message ?? "")")
        }
    }

    /// A restart loads a bounded state: each app's first max_regions_per_app saved regions, the rest removed
    /// from the file (80,042 rows once started beacond at 236 MB).
    @Test func aRestartLoadsAtMostTheAppsLimit() async throws {
        let running = try RunningDaemon(settings: "max_regions_per_app = 30\nmax_regions_per_client = 10")
        try await running.start()
        do {
            try DaemonOnPrivateBusTests.authorizeAlways(running)
            let clients = [try TestClient(running), try TestClient(running), try TestClient(running)]
            for (index, client) in clients.enumerated() {
                for region in 0..<10 {
                    try client.call(BeacondMember.startMonitoring, [try RunningDaemon.region("r\(index)-\(region)", minor: UInt16(region))])
                }
            }
            #expect(try Self.regionCount(running) == 30)
            // Lowered by a reload: the app keeps its 30 until the restart, and the warning says so.
            try running.writeSettings("max_regions_per_app = 12\nmax_regions_per_client = 10")
            #expect(try running.reload() == "")
            guard case .array(_, let warnings)? = try Self.status(running)[BeacondStatusKey.warnings] else {
                Issue.record("no Warnings in GetStatus")
                return
            }
            #expect(warnings.contains { "\($0)".contains("monitors 30 regions, more than max_regions_per_app = 12") }, "\(warnings)")
            #expect(try Self.regionCount(running) == 30)
            await running.stop()
            try await running.start()
            #expect(try Self.regionCount(running) == 12)
            // The first saved ones, in client then addition order; the rest are gone from the file too.
            let listed = try Self.listRegions(running, offset: 0, limit: 0)
            #expect(listed.identifiers == (0..<10).map { "r0-\($0)" } + ["r1-0", "r1-1"])
            #expect(try running.savedRegionCount() == 12)
        } catch {
            await running.stop()
            throw error
        }
        await running.stop()
    }

    /// Lists come in pages: the offset and limit are honoured, a limit of 0 or above the most gives the most,
    /// and the total says how many there are; GetStatus has counts, never lists.
    @Test func listsComeInPagesAndStatusHasCounts() async throws {
        try await Self.withDaemon(settings: "max_regions_per_client = 20") { running in
            try DaemonOnPrivateBusTests.authorizeAlways(running)
            let client = try TestClient(running)
            for region in 0..<7 {
                try client.call(BeacondMember.startMonitoring, [try RunningDaemon.region("p\(region)", minor: UInt16(region))])
            }
            let page = try Self.listRegions(running, offset: 2, limit: 3)
            #expect(page.identifiers == ["p2", "p3", "p4"])
            #expect(page.total == 7)
            #expect(try Self.listRegions(running, offset: 6, limit: 3).identifiers == ["p6"])
            #expect(try Self.listRegions(running, offset: 9, limit: 3).identifiers.isEmpty)
            #expect(try Self.listRegions(running, offset: 0, limit: 100_000).identifiers.count == 7)
            let status = try Self.status(running)
            for list in ["Regions", "Clients", "Apps", "PendingRequests"] { #expect(status[list] == nil) }
            #expect(status[BeacondStatusKey.regionCount] == .uint32(7))
            #expect(status[BeacondStatusKey.clientCount] == .uint32(1))
            guard case .dictionary(_, _, let limits)? = status[BeacondStatusKey.limits] else {
                Issue.record("no Limits in GetStatus")
                return
            }
            #expect(limits.contains { $0.key == .string(BeacondLimitKey.maxPageSize) && $0.value == .variant(.uint32(500)) })
        }
    }

    /// A caller learns only what it may know: an unknown app id lists the apps the caller's user may act as, not
    /// every declared one, and a refusal does not name the app's other users.
    @Test func refusalsTellTheCallerOnlyWhatItMayKnow() async throws {
        let running = try RunningDaemon()
        try """
        app_id = "org.example.Secret"
        users = ["secret-keeper"]
        when_in_use_usage = "Not yours."

        """.write(toFile: running.configDirectory + "/apps.d/secret.toml", atomically: true, encoding: .utf8)
        try await running.start()
        do {
            try Self.checkRefusals(running)
        } catch {
            await running.stop()
            throw error
        }
        await running.stop()
    }

    static func checkRefusals(_ running: RunningDaemon) throws {
        let connection = try DBusConnection(.address(running.bus.address))
        func register(_ app: String) -> String {
            Self.errorName {
                _ = try connection.call(
                    destination: BeacondBus.name, path: BeacondBus.managerPath, interface: BeacondInterface.manager,
                    member: BeacondMember.registerClient, arguments: [.string(app)])
            }?.message ?? ""
        }
        let unknown = register("org.example.Nope")
        #expect(unknown.contains(RunningDaemon.app), "\(unknown)")
        #expect(!unknown.contains("org.example.Secret"), "\(unknown)")
        let refused = register("org.example.Secret")
        #expect(refused.contains("is not in users"), "\(refused)")
        #expect(!refused.contains("secret-keeper"), "\(refused)")
    }
}
