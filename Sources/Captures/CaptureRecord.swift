public import BeaconKit

/// Which container a capture came in, with the one number that says how its packets are wrapped.
public enum CaptureFormat: Sendable, Hashable, CustomStringConvertible {
    /// btsnoop v1 (Android's HCI snoop log, `btmon -w`): 1001 HCI unencapsulated, 1002 HCI UART (H4),
    /// 2001 Linux monitor.
    case btsnoop(datalink: UInt32)
    /// Classic libpcap file: 201 BLUETOOTH_HCI_H4_WITH_PHDR, 256 BLUETOOTH_LE_LL_WITH_PHDR.
    case pcap(linkType: UInt32)
    /// pcapng: every interface carries its own link type (201 or 256 are read).
    case pcapng
    /// Text, one H4 HCI event in hex per line (the corpus vector files).
    case hexLines

    public var description: String {
        switch self {
        case .btsnoop(let datalink): return "btsnoop (datalink \(datalink)\(PacketEncoding.name(btsnoopDatalink: datalink)))"
        case .pcap(let linkType): return "pcap (link type \(linkType)\(PacketEncoding.name(linkType: linkType)))"
        case .pcapng: return "pcapng"
        case .hexLines: return "hex lines"
        }
    }
}

/// One packet of a capture. It does not own bytes: `payload` locates the packet in `Capture.bytes`.
public struct CaptureRecord: Sendable, Hashable {
    /// 1-based position in the file, counting every record (malformed ones too), as `btmon -r` and
    /// Wireshark number them. For hex lines it is the line number, so diagnostics point at the line.
    public var number: Int
    /// When the capture tool saw the packet; `nil` where the format has none (hex lines, pcapng
    /// simple packet blocks) or the value does not fit.
    public var timestamp: Timestamp?
    public var packet: CapturePacket
    /// Where the packet sits in `Capture.bytes`, stripped as `packet` describes.
    public var payload: Range<Int>

    public init(number: Int, timestamp: Timestamp?, packet: CapturePacket, payload: Range<Int>) {
        self.number = number
        self.timestamp = timestamp
        self.packet = packet
        self.payload = payload
    }
}
