/// Which receiver heard a sighting: this node's own scanner (`local`), or a remote receiver (another beacond node
/// or an ESPresense node on the MQTT broker), numbered by the caller. The monitor keeps, per region, who heard it
/// lately, so a receiver that goes offline makes the beacons only it heard unknown, never absent.
public struct ReceiverID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let local = ReceiverID(rawValue: 0)

    public var description: String { self == .local ? "local" : "receiver \(rawValue)" }
}

/// Who heard a monitored region lately, and the receivers it waits for while blind: what a rebuilt monitor needs to
/// keep a region blind for a receiver that is still offline (`RegionMonitor.receiverRecord(for:)`). Times in µs.
public struct ReceiverRecord: Hashable, Sendable {
    public var local: Int64?
    public var remote: [ReceiverID: Int64]
    /// Non-nil while the region is blind.
    public var waitingFor: Set<ReceiverID>?

    public init(local: Int64?, remote: [ReceiverID: Int64], waitingFor: Set<ReceiverID>?) {
        self.local = local
        self.remote = remote
        self.waitingFor = waitingFor
    }
}
