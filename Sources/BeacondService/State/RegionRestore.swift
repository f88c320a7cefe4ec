import BeaconKit

/// Which saved regions resume after a restart, decided without I/O: each saved client's regions resume under
/// that client (detached until its app registers again) if the app is still declared and may still monitor;
/// otherwise they are dropped, with the reason to log. Clients in number order, regions in saved order.
enum RegionRestore {
    struct Resumed: Equatable {
        var client: Int
        var appID: String
        var regions: [MonitoredRegion]
    }

    struct Dropped: Equatable {
        var client: Int
        var appID: String
        var count: Int
        var reason: String
    }

    struct Plan: Equatable {
        var resumed: [Resumed] = []
        var dropped: [Dropped] = []
    }

    /// `status`: the app's effective authorization now, or nil if no declaration has the app any more.
    /// `declaredWhere` names the place declarations live, for the reason.
    static func plan(_ saved: [StoredRegion], status: (String) -> AuthorizationStatus?, declaredWhere: String) -> Plan {
        var byClient: [Int: [StoredRegion]] = [:]
        for stored in saved { byClient[stored.client, default: []].append(stored) }
        var plan = Plan()
        for client in byClient.keys.sorted() {
            guard let rows = byClient[client], let appID = rows.first?.appID else { continue }
            guard let current = status(appID) else {
                plan.dropped.append(
                    Dropped(
                        client: client, appID: appID, count: rows.count,
                        reason: "it is no longer declared in \(declaredWhere)"))
                continue
            }
            guard current.allowsMonitoring else {
                plan.dropped.append(Dropped(client: client, appID: appID, count: rows.count, reason: "it is \(current.rawValue) now"))
                continue
            }
            plan.resumed.append(Resumed(client: client, appID: appID, regions: rows.map(\.monitored)))
        }
        return plan
    }
}
