public import BeaconKit

/// A region event that happened while its app had no client, kept for the app's next client.
public struct QueuedRegionEvent: Hashable, Sendable {
    public enum Kind: String, Sendable, CaseIterable {
        case didEnterRegion, didExitRegion
    }

    /// Assigned by the database (0 before it is queued); delivery order is id order.
    public var id: Int64
    public var appID: String
    public var kind: Kind
    public var region: BeaconRegion
    /// When it happened (not when it is delivered).
    public var timestamp: Timestamp

    public init(id: Int64 = 0, appID: String, kind: Kind, region: BeaconRegion, timestamp: Timestamp) {
        self.id = id
        self.appID = appID
        self.kind = kind
        self.region = region
        self.timestamp = timestamp
    }
}

/// An app's queue as its next client gets it: the events still within their time to live, oldest first, and
/// how many were dropped since the last delivery (queue full, or too old).
public struct QueuedEvents: Hashable, Sendable {
    public var events: [QueuedRegionEvent]
    public var dropped: Int

    public init(events: [QueuedRegionEvent], dropped: Int) {
        self.events = events
        self.dropped = dropped
    }
}
