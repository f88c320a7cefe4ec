public import BeaconKit

/// What one engine entry belongs to: a client's monitored region (by identifier) or a client's ranged
/// constraint. One key type lets one `BeaconPipeline` serve every client.
public enum EngineKey: Hashable, Sendable {
    case region(client: Int, identifier: String)
    case ranging(client: Int, constraint: BeaconIdentityConstraint)

    public var client: Int {
        switch self {
        case .region(let client, _), .ranging(let client, _): return client
        }
    }
}
