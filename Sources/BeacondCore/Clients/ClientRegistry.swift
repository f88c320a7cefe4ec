package import BeaconKit
import BeacondAPI

/// The registered clients (`/org/beacond/client/N`): numbering, who registered each, what each monitors and
/// ranges, which are detached (an Always client whose connection closed), and how a live client takes over the
/// detached regions of its app. Pure: sessions change only through these methods, one change at a time, so no
/// caller holds a copy of a session across another change to it.
package struct ClientRegistry: Sendable {
    private var sessions: [Int: ClientSession] = [:]
    /// The clients on each connection: asked at every registration and every disconnect, so it must not cost a
    /// pass over every session (with 1,000 sessions, sorting them all per call held the loop for seconds).
    private var numbersBySender: [String: Set<Int>] = [:]
    /// The number the next client gets; never reused, also across restarts (`reserveNumbers`).
    package private(set) var nextNumber = 1
    /// Regions per app, attached and detached clients together: the app's limit is checked at every
    /// StartMonitoring, so it is kept as sessions change rather than counted.
    private var regionsByApp: [String: Int] = [:]
    /// Connected clients per app and per unix user, for their limits (detached clients hold regions, not a connection).
    private var connectedByApp: [String: Int] = [:]
    private var connectedByUser: [UInt32: Int] = [:]
    /// Every region, attached or detached.
    package private(set) var regionCount = 0

    package init() {}

    package subscript(number: Int) -> ClientSession? { sessions[number] }

    /// The regions the app monitors, in all its clients (connected or not).
    package func regionCount(of appID: String) -> Int { regionsByApp[appID] ?? 0 }
    /// The app's clients with a connection.
    package func connectedCount(of appID: String) -> Int { connectedByApp[appID] ?? 0 }
    /// The clients with a connection registered by this unix user, whatever their app.
    package func connectedCount(ofUser userID: UInt32) -> Int { connectedByUser[userID] ?? 0 }
    package var count: Int { sessions.count }
    package var connectedCount: Int { connectedByApp.values.reduce(0, +) }

    /// Every client, by number.
    package var all: [ClientSession] { sessions.keys.sorted().compactMap { sessions[$0] } }
    package var isEmpty: Bool { sessions.isEmpty }
    /// Up to `limit` regions from the `offset`th on, counting every client's regions in client then addition order
    /// (Admin1.ListRegions): whole clients before the offset are skipped by their count, not walked.
    package func regions(offset: Int, limit: Int) -> [(session: ClientSession, region: BeaconRegion)] {
        var page: [(session: ClientSession, region: BeaconRegion)] = []
        var skip = offset
        for number in sessions.keys.sorted() {
            guard page.count < limit else { break }
            guard let session = sessions[number] else { continue }
            if skip >= session.regionOrder.count {
                skip -= session.regionOrder.count
                continue
            }
            for identifier in session.regionOrder.dropFirst(skip).prefix(limit - page.count) {
                if let region = session.regions[identifier] { page.append((session, region)) }
            }
            skip = 0
        }
        return page
    }

    /// The apps that have clients, sorted.
    package var appIDs: [String] { Set(sessions.values.map(\.appID)).sorted() }

    package func clients(of appID: String) -> [ClientSession] {
        sessions.values.filter { $0.appID == appID }.sorted { $0.number < $1.number }
    }

    package func clients(on sender: String) -> [ClientSession] {
        (numbersBySender[sender] ?? []).sorted().compactMap { sessions[$0] }
    }

    /// The app's newest client with a connection, other than those of `sender`.
    package func newestLiveClient(of appID: String, excluding sender: String) -> Int? {
        newestLiveClient(of: appID) { $0.sender == sender }
    }

    /// The app's newest client with a connection, other than those `excluded` says.
    package func newestLiveClient(of appID: String, excluding excluded: (ClientSession) -> Bool) -> Int? {
        sessions.values.filter { $0.appID == appID && $0.isConnected && !excluded($0) }.map(\.number).max()
    }

    // MARK: Registration and removal

    /// A new client, numbered after every client before it.
    package mutating func register(appID: String, sender: String, caller: CallerCredentials, processID: UInt32?) -> ClientSession {
        let number = nextNumber
        nextNumber += 1
        var session = ClientSession(number: number, appID: appID, sender: sender, userID: caller.userID, processID: processID)
        session.caller = caller
        sessions[number] = session
        numbersBySender[sender, default: []].insert(number)
        countConnection(of: session, by: 1)
        return session
    }

    /// After a restart: numbers up to `highest` were used before.
    package mutating func reserveNumbers(through highest: Int) {
        nextNumber = max(nextNumber, highest + 1)
    }

    /// A detached client put back after a restart, with its saved regions.
    package mutating func restore(number: Int, appID: String, regions: [BeaconRegion]) {
        remove(number) // one session per number, and the counts follow (the daemon restores before anyone registers)
        var session = ClientSession(number: number, appID: appID, sender: nil, userID: nil, processID: nil)
        session.inUse = false
        for region in regions { session.addRegion(region) }
        sessions[number] = session
        countRegions(of: appID, by: session.regions.count)
        reserveNumbers(through: number)
    }

    @discardableResult
    package mutating func remove(_ number: Int) -> ClientSession? {
        guard let removed = sessions.removeValue(forKey: number) else { return nil }
        if let sender = removed.sender {
            forget(number, on: sender)
            countConnection(of: removed, by: -1)
        }
        countRegions(of: removed.appID, by: -removed.regions.count)
        return removed
    }

    private mutating func countRegions(of appID: String, by change: Int) {
        regionCount += change
        let count = (regionsByApp[appID] ?? 0) + change
        regionsByApp[appID] = count == 0 ? nil : count
    }

    private mutating func countConnection(of session: ClientSession, by change: Int) {
        let app = (connectedByApp[session.appID] ?? 0) + change
        connectedByApp[session.appID] = app == 0 ? nil : app
        guard let userID = session.userID else { return }
        let user = (connectedByUser[userID] ?? 0) + change
        connectedByUser[userID] = user == 0 ? nil : user
    }

    private mutating func forget(_ number: Int, on sender: String) {
        numbersBySender[sender]?.remove(number)
        if numbersBySender[sender]?.isEmpty == true { numbersBySender[sender] = nil }
    }

    /// Its connection closed and it keeps monitoring (Always): no sender, not in use. (Its ranging stops:
    /// the caller takes it out of the engine, then calls `removeRangedConstraint(nil, from:)`.)
    package mutating func detach(_ number: Int) {
        if let session = sessions[number], let sender = session.sender {
            forget(number, on: sender)
            countConnection(of: session, by: -1)
        }
        sessions[number]?.sender = nil
        sessions[number]?.inUse = false
    }

    // MARK: What a client monitors and ranges

    package mutating func addRegion(_ region: BeaconRegion, to number: Int) {
        guard let session = sessions[number] else { return }
        if session.regions[region.identifier] == nil { countRegions(of: session.appID, by: 1) }
        sessions[number]?.addRegion(region)
    }

    package mutating func removeRegion(_ identifier: String, from number: Int) {
        guard let session = sessions[number], session.regions[identifier] != nil else { return }
        countRegions(of: session.appID, by: -1)
        sessions[number]?.removeRegion(identifier)
    }

    package mutating func addRangedConstraint(_ constraint: BeaconIdentityConstraint, to number: Int) {
        sessions[number]?.rangedConstraints.append(constraint)
    }

    /// Removes one constraint, or all of them (`nil`); ranging is no longer active once none is left.
    package mutating func removeRangedConstraint(_ constraint: BeaconIdentityConstraint?, from number: Int) {
        if let constraint {
            sessions[number]?.rangedConstraints.removeAll { $0 == constraint }
        } else {
            sessions[number]?.rangedConstraints = []
        }
        if sessions[number]?.rangedConstraints.isEmpty == true { sessions[number]?.rangingActive = false }
    }

    package mutating func setRangingActive(_ active: Bool, for number: Int) {
        sessions[number]?.rangingActive = active
    }

    package mutating func setInUse(_ inUse: Bool, for number: Int) {
        sessions[number]?.inUse = inUse
    }

    // MARK: Takeover

    /// One detached region the live client takes, or one that must go because another has its identifier.
    package struct Takeover: Sendable {
        package struct Move: Equatable, Sendable {
            package var from: Int
            package var appID: String
            package var region: BeaconRegion
        }
        package struct Replaced: Equatable, Sendable {
            package var region: BeaconRegion
            /// Says what replaces it, for the client's MonitoringDidFail.
            package var by: String
        }
        /// The detached clients, by number, each to be removed once its regions moved.
        package var detached: [ClientSession]
        package var moves: [Move]
        package var replaced: [Replaced]
    }

    /// What happens when client `number` takes over its app's detached regions (Core Location restores an app's
    /// regions when it is relaunched). Every region is taken, even beyond `max_regions_per_client` (the limit
    /// bounds what a client adds, not what the app has). Where two regions share an identifier, one goes, as a
    /// later StartMonitoring with that identifier replaces the earlier in Core Location: the live client's own
    /// region wins, else the one of the later client. `monitored`: whether the engine still monitors a region of
    /// a detached client (one it no longer monitors is not moved).
    package func planTakeover(into number: Int, monitored: (Int, String) -> Bool) -> Takeover? {
        guard let session = sessions[number] else { return nil }
        let detached = sessions.values.filter { $0.appID == session.appID && !$0.isConnected && $0.number != number }
            .sorted { $0.number < $1.number }
        guard !detached.isEmpty else { return nil }
        let own = Set(session.regions.keys)
        var taken: [String: Int] = [:]
        var plan = Takeover(detached: detached, moves: [], replaced: [])
        for old in detached {
            for region in old.orderedRegions where monitored(old.number, region.identifier) {
                if own.contains(region.identifier) {
                    plan.replaced.append(.init(region: region, by: "this client's own region \(region.identifier)"))
                    continue
                }
                if let earlier = taken[region.identifier] {
                    plan.replaced.append(
                        .init(
                            region: plan.moves[earlier].region,
                            by: "the region \(region.identifier) of the app's later client \(old.path)"))
                    plan.moves[earlier] = .init(from: old.number, appID: old.appID, region: region)
                } else {
                    taken[region.identifier] = plan.moves.count
                    plan.moves.append(.init(from: old.number, appID: old.appID, region: region))
                }
            }
        }
        return plan
    }
}
