package import BeaconKit

/// Which saved regions resume after a restart, decided without I/O: each saved client's regions resume under
/// that client (detached until its app registers again) if the app is still declared and may still monitor;
/// otherwise they are dropped, with the reason to log. Clients in number order, regions in saved order.
package enum RegionRestore {
    package struct Resumed: Equatable {
        package var client: Int
        package var appID: String
        package var regions: [MonitoredRegion]
    }

    package struct Dropped: Equatable {
        package var client: Int
        package var appID: String
        package var count: Int
        package var reason: String
    }

    package struct Plan: Equatable {
        package var resumed: [Resumed] = []
        package var dropped: [Dropped] = []
    }

    /// `status`: the app's effective authorization now, or nil if no declaration has the app any more.
    /// `declaredWhere` names the place declarations live, for the reason.
    package static func plan(_ saved: [StoredRegion], status: (String) -> AuthorizationStatus?, declaredWhere: String) -> Plan {
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
