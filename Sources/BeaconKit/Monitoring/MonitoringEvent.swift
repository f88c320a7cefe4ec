/// Which region-monitoring callback an event is, named after `CLLocationManagerDelegate`'s.
public enum MonitoringEventKind: Sendable, Hashable, CustomStringConvertible {
    /// `locationManager(_:didStartMonitoringFor:)`.
    case didStartMonitoring
    /// `locationManager(_:didDetermineState:for:)`: sent on every state change and on request.
    case didDetermineState(RegionState)
    /// `locationManager(_:didEnterRegion:)`: only for regions with `notifyOnEntry`.
    case didEnterRegion
    /// `locationManager(_:didExitRegion:)`: only for regions with `notifyOnExit`.
    case didExitRegion

    public var description: String {
        switch self {
        case .didStartMonitoring: return "didStartMonitoring"
        case .didDetermineState(let state): return "didDetermineState(\(state.rawValue))"
        case .didEnterRegion: return "didEnterRegion"
        case .didExitRegion: return "didExitRegion"
        }
    }
}

/// One region-monitoring callback for the region under `key`, stamped with the time it happened.
public struct MonitoringEvent<Key: Hashable & Sendable>: Sendable, Hashable, CustomStringConvertible {
    public typealias Kind = MonitoringEventKind

    public var kind: Kind
    public var key: Key
    public var region: BeaconRegion
    /// When the change happened, not when it was computed: an exit is stamped last sighting + exit timeout
    /// however late `advance` ran, so replay at any speed yields the same events.
    public var timestamp: Timestamp

    public init(kind: Kind, key: Key, region: BeaconRegion, timestamp: Timestamp) {
        self.kind = kind
        self.key = key
        self.region = region
        self.timestamp = timestamp
    }

    public var description: String { "\(timestamp) \(kind) \(key) \(region)" }
}
