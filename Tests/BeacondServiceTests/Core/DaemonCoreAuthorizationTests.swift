import BeaconKit
@testable import BeacondService
@testable import BeacondCore
import Testing

/// The authorization flow through the core: requests, the administrator's decisions, refusals, and decisions
/// that could not be saved.
@Suite("daemon core: authorization")
struct DaemonCoreAuthorizationTests {
    typealias H = CoreHarness

    /// prompt = "admin" (the default): the request waits for an administrator, who is told in the log and by an
    /// Admin1 event; the reply is the status now, notDetermined.
    @Test(arguments: [AuthorizationRequest.always, .whenInUse])
    func aRequestWaitsForTheAdministrator(_ request: AuthorizationRequest) throws {
        let h = try H()
        let client = try h.register()
        _ = h.take()
        let reply = h.call(.requestAuthorization(request, client: client))
        #expect(reply == .success(.status(.notDetermined)))
        #expect(h.core.authorization.pendingRequests.map(\.appID) == [H.door])
        let effects = h.take()
        #expect(
            effects.logs(.notice).contains {
                $0.contains("requests \(request.grantArgument) authorization") && $0.contains("beaconctl auth grant \(H.door)")
            })
        let address = ClientAddress(try #require(h.core.clients[client]))
        #expect(effects.adminEvents == [.authorizationRequested(address, request, disposition: "pending")])
        #expect(effects.signals(to: client).isEmpty, "no AuthorizationChanged while the administrator decides")
    }

    /// The administrator's grant reaches every client of the app: AuthorizationChanged to the client,
    /// PropertiesChanged(AuthorizationStatus), then the Admin1 mirror, in that order.
    @Test func aGrantReachesEveryClientOfTheApp() throws {
        let files = try CoreFiles()
        try grantWithTwoClients(files)
        // Saved before the reply: a restart keeps it.
        #expect(try H(files: files).core.effectiveStatus(H.door) == .authorizedAlways)
    }

    private func grantWithTwoClients(_ files: CoreFiles) throws {
        let h = try H(files: files)
        let first = try h.register(sender: ":1.1")
        let second = try h.register(sender: ":1.2")
        _ = h.call(.requestAuthorization(.always, client: first))
        _ = h.take()
        #expect(h.call(.setAuthorization(appID: H.door, status: "authorizedAlways", sender: ":1.99")) == .success(.none))
        let effects = h.take()
        for client in [first, second] {
            let mine = effects.filter {
                switch $0 {
                case .notify(let address, _, _), .clientPropertiesChanged(let address, _): address.number == client
                default: false
                }
            }
            let expected: [String] = ["client authorizationChanged", "properties", "admins authorizationChanged"]
            #expect(
                mine.map { effect -> String in
                    switch effect {
                    case .notify(_, let event, .clientOnly): "client \(event.text.split(separator: " ")[0])"
                    case .notify(_, let event, .administratorsOnly): "admins \(event.text.split(separator: " ")[0])"
                    case .clientPropertiesChanged: "properties"
                    default: "other"
                    }
                } == expected)
            #expect(effects.signals(to: client) == ["authorizationChanged authorizedAlways"])
            #expect(effects.properties(of: client) == [[.authorizationStatus(.authorizedAlways)]])
        }
        #expect(h.core.authorization.pendingRequests.isEmpty)
        #expect(h.core.effectiveStatus(H.door) == .authorizedAlways)
    }

    /// StartMonitoring needs authorizedAlways: while notDetermined it is refused, saying so; nothing is monitored.
    @Test func monitoringWhileNotDeterminedIsRefused() throws {
        let h = try H()
        let client = try h.register()
        let reply = h.call(.startMonitoring(client: client, .success(try H.region("lobby"))))
        guard case .failure(.beacond(let error)) = reply else {
            Issue.record("StartMonitoring while notDetermined answered \(reply)")
            return
        }
        #expect(error.name == .notAuthorized)
        #expect(error.message.contains("authorizedAlways"))
        #expect(h.core.clients.engine.monitoredCount == 0)
        #expect(h.core.clients[client]?.regions.isEmpty == true)
    }

    /// An app that declares no always_usage cannot ask for Always: MissingUsageDescription, naming the key.
    @Test func aRequestWithoutItsUsageDescriptionIsRefused() throws {
        let h = try H()
        let client = try h.register(H.table)
        let reply = h.call(.requestAuthorization(.always, client: client))
        guard case .failure(.beacond(let error)) = reply else {
            Issue.record("RequestAlwaysAuthorization without always_usage answered \(reply)")
            return
        }
        #expect(error.name == .missingUsageDescription)
        #expect(error.message.contains("always_usage"))
        #expect(h.core.authorization.pendingRequests.isEmpty)
    }

    static func onADatabaseThatCanFail() throws -> (H, FailingStateDatabase) {
        var failing: FailingStateDatabase?
        let h = try H(database: { file in
            let store = FailingStateDatabase(file)
            failing = store
            return store
        })
        return (h, try #require(failing))
    }

    /// A decision whose save fails is not applied: StateNotSaved, the app keeps its status and its waiting request,
    /// and no client hears anything.
    @Test func aDecisionThatCannotBeSavedChangesNothing() throws {
        let (h, failing) = try Self.onADatabaseThatCanFail()
        let client = try h.register()
        _ = h.call(.requestAuthorization(.always, client: client))
        _ = h.take()
        failing.failsWrites = true
        let reply = h.call(.setAuthorization(appID: H.door, status: "authorizedAlways", sender: ":1.99"))
        guard case .failure(.beacond(let error)) = reply else {
            Issue.record("a grant that could not be saved answered \(reply)")
            return
        }
        #expect(error.name == .stateNotSaved)
        #expect(error.message.contains("nothing changed") && error.message.contains("database or disk is full"))
        #expect(h.core.effectiveStatus(H.door) == .notDetermined)
        #expect(h.core.authorization.pendingRequests.map(\.appID) == [H.door])
        let effects = h.take()
        #expect(effects.notified.isEmpty)
        #expect(effects.properties(of: client).isEmpty)
    }

    /// The same for a request: the pending request would be lost at a restart, so it is not made.
    @Test func aRequestThatCannotBeSavedIsNotMade() throws {
        let (h, failing) = try Self.onADatabaseThatCanFail()
        let client = try h.register()
        _ = h.take()
        failing.failsWrites = true
        let reply = h.call(.requestAuthorization(.always, client: client))
        guard case .failure(.beacond(let error)) = reply else {
            Issue.record("a request that could not be saved answered \(reply)")
            return
        }
        #expect(error.name == .stateNotSaved)
        #expect(h.core.authorization.pendingRequests.isEmpty)
        #expect(h.take().adminEvents.isEmpty)
    }
}
