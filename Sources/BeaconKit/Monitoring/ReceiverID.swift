/// Which receiver heard a sighting: this node's own scanner (`local`), or a remote receiver (another beacond node
/// or an ESPresense node on the MQTT broker), numbered by the caller. The monitor keeps, per region, who heard it
/// lately, so a receiver that goes offline makes the beacons only it heard unknown, never absent.
public struct ReceiverID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let local = ReceiverID(rawValue: 0)

    public var description: String { self == .local ? "local" : "receiver \(rawValue)" }
}
