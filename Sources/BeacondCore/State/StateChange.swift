public import BeaconKit

/// One change to the durable state. The daemon gathers the changes one operation makes (a StartMonitoring, a
/// sighting that entered two regions) and commits them in one transaction before any signal about them leaves,
/// so what a client was told is on disk first.
public enum StateChange: Sendable, Hashable {
    /// Inserts or replaces a region with its state.
    case saveRegion(StoredRegion)
    /// A region's state, last determination and last sighting (the region row must exist; a missing one is
    /// left missing: the region was removed in the same batch).
    case updateRegionState(client: Int, identifier: String, MonitoredRegion, heardBy: StoredHearing? = nil)
    case removeRegion(client: Int, identifier: String)
    /// Every region of a client.
    case removeClient(Int)
    /// Queues an event for an app whose client is gone, dropping the app's oldest beyond `limit`.
    case queueEvent(QueuedRegionEvent, limit: Int)
    /// Forgets queued events that were delivered (by id).
    case removeQueuedEvents(appID: String, ids: [Int64])
}

/// How far a commit must get before it returns.
public enum StateDurability: Sendable {
    /// fsynced (`synchronous = FULL`): survives power loss. For what a caller was told in a method reply.
    case powerLoss
    /// Written to the file (`synchronous = NORMAL`, WAL): survives the daemon being killed or crashing at any
    /// moment, not a power cut before the kernel writes it back or the next fsynced commit. For what sightings
    /// change, so a region event does not wait for the disk (an fsync costs milliseconds, more on SD cards).
    case processCrash
}
