package import BeaconKit

/// The state database as the core needs it, synchronously (`StateDatabaseFile` in the daemon, a dictionary in tests).
package protocol StateDatabase: AnyObject {
    var file: String { get }
    /// Whether the open database is no longer the file on disk.
    var isLost: Bool { get }
    /// Checks that the open database is still the file on disk (writing it anew if it was deleted).
    func ensure() throws(StateDatabaseError)
    func save(_ record: AuthorizationRecord, for appID: String) throws(StateDatabaseError)
    func saveLocationServicesSwitch(_ enabled: Bool) throws(StateDatabaseError)
    func apply(_ batch: [StateChange], durability: StateDurability) throws(StateDatabaseError)
    func queuedEvents(of appID: String, expiredBefore: Timestamp) throws(StateDatabaseError) -> QueuedEvents
    func dropExpiredQueuedEvents(before: Timestamp) throws(StateDatabaseError) -> [String: Int]
    func oldestQueuedEventTime() throws(StateDatabaseError) -> Timestamp?
    func queuedEventCounts() throws(StateDatabaseError) -> [String: Int]
    func trimRegions(perApp: Int) throws(StateDatabaseError) -> [String: Int]
    func loadRegions(perApp: Int) throws(StateDatabaseError) -> (regions: [StoredRegion], problems: [String])
    func highestStoredClient() throws(StateDatabaseError) -> Int
}
