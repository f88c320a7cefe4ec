/// Mosquitto's bridge notifications (`notifications true`, its default): the bridge publishes `1` on
/// `$SYS/broker/connection/<remote_clientid>/state` on both brokers when it connects, and `0` when it drops (on the
/// remote broker as the bridge's will), retained. A beacond node reads them because a dropped bridge carries no
/// receiver's will: without them, beacons heard only beyond the bridge would exit, falsely.
public enum BrokerBridge {
    public static let stateSubscription = "$SYS/broker/connection/+/state"
    public static let connected = "1"
    public static let disconnected = "0"

    /// The bridge's name in a state topic, or nil for any other topic.
    public static func name(fromStateTopic topic: String) -> String? {
        let prefix = "$SYS/broker/connection/", suffix = "/state"
        guard topic.utf8.count > prefix.utf8.count + suffix.utf8.count, topic.hasPrefix(prefix), topic.hasSuffix(suffix) else {
            return nil
        }
        let name = topic.dropFirst(prefix.count).dropLast(suffix.count)
        guard !name.isEmpty, !name.contains("/"), name.utf8.count <= 256 else { return nil }
        return String(name)
    }
}
