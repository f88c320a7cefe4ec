/// Everything the monitor knows about one region: what `regions` reports and what `restore` takes back
/// after a restart.
public struct MonitoredRegion: Sendable, Hashable {
    public var region: BeaconRegion
    public var state: RegionState
    /// The last sighting that counted for this region; `nil` if none has.
    public var lastSeen: Timestamp?
    /// The last inside or outside determination, kept while detection is suspended (state `unknown`);
    /// `unknown` when the region was never determined. It decides whether a later change is an entry or
    /// an exit the client has not heard yet.
    public var lastDeterminedState: RegionState

    public init(region: BeaconRegion, state: RegionState, lastSeen: Timestamp?, lastDeterminedState: RegionState) {
        self.region = region
        self.state = state
        self.lastSeen = lastSeen
        self.lastDeterminedState = lastDeterminedState
    }
}
