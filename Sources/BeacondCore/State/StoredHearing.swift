/// Who heard a monitored region lately, by room (receiver ids are numbered afresh by each process), saved with the
/// region so a restart keeps a beacon heard only by a receiver that is offline now unknown instead of letting it
/// exit: the `ReceiverRecord` the monitor keeps, in the `monitored_region.heard_by` column as JSON.
public struct StoredHearing: Hashable, Sendable, Codable {
    /// This node's own scanner, µs since the epoch.
    public var local: Int64?
    /// Other receivers by room, µs since the epoch.
    public var remote: [String: Int64]
    /// While the region is blind: the rooms it waits for.
    public var waitingFor: [String]?

    public init(local: Int64?, remote: [String: Int64], waitingFor: [String]?) {
        self.local = local
        self.remote = remote
        self.waitingFor = waitingFor
    }
}
