import CBlueZ

/// Constants shared with the kernel's HCI socket interface, read from libbluetooth's headers so
/// they cannot drift. The HCI socket scanner (the scanning issue) builds on these.
public enum HCISocketConstants {
    /// `HCI_EVENT_PKT`: the H4 packet type of events on an HCI socket.
    public static let eventPacketType = UInt8(HCI_EVENT_PKT)
    /// `EVT_LE_META_EVENT`.
    public static let leMetaEvent = UInt8(EVT_LE_META_EVENT)
}
