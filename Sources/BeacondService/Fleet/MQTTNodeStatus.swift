import Fleet
import BeacondCore

/// What `[mqtt]` is doing, as `GetStatus` reports it: the node's connection, its counters and the other receivers,
/// as plain values (the bus face writes them as the `MQTT*` keys).
struct MQTTNodeStatus: Hashable, Sendable {
    /// Where the connection is; the detail belongs to the state it explains.
    enum Connection: Hashable, Sendable {
        /// `[mqtt]` names no broker.
        case off
        /// A broker is named but no node runs: why (libmosquitto refused a setting; "" when not known).
        case failed(String)
        /// Shutting down.
        case stopped
        case connecting
        case connected
        /// Not connected and retrying: why, in the broker's or the system's words.
        case waiting(String)
    }

    var broker: MQTTSettings.Broker?
    var connection: Connection
    /// This receiver's room as topics carry it ("" without a node).
    var room: String
    var readingsPublished: UInt64
    var readingsNotSent: UInt64
    /// The last publication the broker refused (`topic: reason`).
    var lastRefusal: String?
    /// The other receivers heard of.
    var receivers: [ReceiverDirectory.Receiver]
    var readingsDropped: UInt64
    /// Why the last unusable message of another receiver was dropped (`topic: reason`).
    var lastDropped: String?
    /// Receivers evicted from the full table for new rooms.
    var receiversEvicted: UInt64 = 0

    /// No node runs: `off` without a broker, `failed` (with `problem`) with one.
    static func withoutNode(broker: MQTTSettings.Broker?, problem: String?) -> MQTTNodeStatus {
        MQTTNodeStatus(
            broker: broker, connection: broker == nil ? .off : .failed(problem ?? ""), room: "",
            readingsPublished: 0, readingsNotSent: 0, lastRefusal: nil, receivers: [],
            readingsDropped: 0, lastDropped: nil)
    }
}
