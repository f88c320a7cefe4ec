public import BeaconKit

/// A monitored region as stored: whose it is and its monitor state. Rows load in the order they were first
/// saved (rowid order: an update keeps the row), which is the client's order of addition.
public struct StoredRegion: Hashable, Sendable {
    /// The client number (`/org/beacond/client/N`) that monitors it.
    public var client: Int
    public var appID: String
    public var monitored: MonitoredRegion
    /// Who heard it lately (with `[mqtt]`); nil when only this node's scanner did, or nobody.
    public var heardBy: StoredHearing?

    public init(client: Int, appID: String, monitored: MonitoredRegion, heardBy: StoredHearing? = nil) {
        self.client = client
        self.appID = appID
        self.monitored = monitored
        self.heardBy = heardBy
    }
}
