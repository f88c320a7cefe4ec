import BeaconKit

/// How a capture wraps each packet, from its btsnoop datalink or pcap link type; decides once, at
/// load time, what each record is and where its payload starts.
enum PacketEncoding: Sendable {
    /// btsnoop 1001: the bare HCI packet; flags bit 0 = received, bit 1 = command/event.
    case hciUnencapsulated
    /// btsnoop 1002: H4 (UART) packet, first byte the packet type.
    case h4
    /// btsnoop 2001 (BlueZ monitor, `btmon -w`): flags = adapter index << 16 | opcode; no type byte.
    case linuxMonitor
    /// LINKTYPE_BLUETOOTH_HCI_H4_WITH_PHDR (201): 4-byte big-endian direction, then an H4 packet.
    case h4WithPseudoHeader
    /// LINKTYPE_BLUETOOTH_LE_LL_WITH_PHDR (256): 10-byte RF pseudo-header, then the air packet.
    case leLinkLayerWithPseudoHeader

    enum Classified {
        case packet(CapturePacket, Range<Int>)
        case malformed(String)
    }

    init?(btsnoopDatalink datalink: UInt32) {
        switch datalink {
        case 1001: self = .hciUnencapsulated
        case 1002: self = .h4
        case 2001: self = .linuxMonitor
        default: return nil
        }
    }

    init?(linkType: UInt32) {
        switch linkType {
        case 201: self = .h4WithPseudoHeader
        case 256: self = .leLinkLayerWithPseudoHeader
        default: return nil
        }
    }

    static let supportedBTSnoopDatalinks =
        "1001 (HCI unencapsulated), 1002 (HCI UART, H4), 2001 (Linux monitor, btmon -w)"
    static let supportedLinkTypes =
        "201 (BLUETOOTH_HCI_H4_WITH_PHDR), 256 (BLUETOOTH_LE_LL_WITH_PHDR)"

    static func name(btsnoopDatalink datalink: UInt32) -> String {
        switch datalink {
        case 1001: return ", HCI unencapsulated"
        case 1002: return ", HCI UART H4"
        case 2001: return ", Linux monitor"
        default: return ""
        }
    }

    static func name(linkType: UInt32) -> String {
        switch linkType {
        case 201: return ", BLUETOOTH_HCI_H4_WITH_PHDR"
        case 256: return ", BLUETOOTH_LE_LL_WITH_PHDR"
        default: return ""
        }
    }

    // Numbers below: BlueZ monitor/bt.h (BTSNOOP_OPCODE_EVENT_PKT), the btsnoop format note
    // (RFC 1761 style, flags bits), tcpdump.org's LINKTYPE_BLUETOOTH_LE_LL_WITH_PHDR page.
    static let monitorEventOpcode: UInt32 = 3
    static let receivedCommandOrEventFlags: UInt32 = 0b11
    static let h4EventType: UInt8 = 0x04
    static let h4PseudoHeaderLength = 4
    static let rfPseudoHeaderLength = 10
    static let accessAddressLength = 4
    static let crcLength = 3
    static let signalPowerValid: UInt16 = 0x0002
    static let crcChecked: UInt16 = 0x0400
    static let crcValid: UInt16 = 0x0800
    /// Bits 14–15: 0 LE 1M, 1 LE 2M, 2 LE Coded (whose packets carry a coding indicator).
    static let phyMask: UInt16 = 0xC000
    static let phyLECoded: UInt16 = 0x8000

    /// Classifies the packet at `range`. `flags` is btsnoop's record flags (0 elsewhere);
    /// `complete` is false when the capture cut the packet short (included < original length).
    func classify(_ bytes: Span<UInt8>, _ range: Range<Int>, flags: UInt32, complete: Bool) -> Classified {
        switch self {
        case .hciUnencapsulated:
            let isEvent = flags & Self.receivedCommandOrEventFlags == Self.receivedCommandOrEventFlags
            return .packet(isEvent ? .hciEvent : .other, range)
        case .linuxMonitor:
            return .packet(flags & 0xFFFF == Self.monitorEventOpcode ? .hciEvent : .other, range)
        case .h4:
            return Self.classifyH4(bytes, range)
        case .h4WithPseudoHeader:
            guard range.count >= Self.h4PseudoHeaderLength else {
                return .malformed("\(range.count) bytes, shorter than the 4-byte direction header")
            }
            return Self.classifyH4(bytes, (range.lowerBound + Self.h4PseudoHeaderLength)..<range.upperBound)
        case .leLinkLayerWithPseudoHeader:
            return Self.classifyLinkLayer(bytes, range, complete: complete)
        }
    }

    /// H4 type 0x04 is an event (the controller's side); commands, ACL, SCO and ISO are `.other`.
    static func classifyH4(_ bytes: Span<UInt8>, _ range: Range<Int>) -> Classified {
        guard let type = range.first.map({ bytes[$0] }) else { return .malformed("empty H4 packet") }
        switch type {
        case h4EventType: return .packet(.hciEvent, (range.lowerBound + 1)..<range.upperBound)
        case 0x01, 0x02, 0x03, 0x05: return .packet(.other, range)
        default: return .malformed("unknown H4 packet type \(CaptureError.Reason.hex([type]))")
        }
    }

    /// Advertising-channel packets (access address 0x8E89BED6) become advertisements; data-channel
    /// packets and LE Coded packets (legacy advertising never uses that PHY) are `.other`.
    static func classifyLinkLayer(_ bytes: Span<UInt8>, _ range: Range<Int>, complete: Bool) -> Classified {
        let pduStart = range.lowerBound + rfPseudoHeaderLength + accessAddressLength
        guard pduStart <= range.upperBound else {
            return .malformed("\(range.count) bytes, shorter than the RF pseudo-header and access address")
        }
        let start = range.lowerBound
        let flags = ByteOrder.littleEndian.uint16(bytes, at: start + 8)
        if flags & crcChecked != 0, flags & crcValid == 0 {
            return .malformed("CRC check failed at capture")
        }
        let accessAddress = ByteOrder.littleEndian.uint32(bytes, at: start + rfPseudoHeaderLength)
        guard accessAddress == LinkLayerDecoder.advertisingAccessAddress, flags & phyMask != phyLECoded else {
            return .packet(.other, range)
        }
        // A packet cut short by the snapshot length has lost its CRC (and perhaps more).
        var pduEnd = range.upperBound
        if complete {
            pduEnd -= crcLength
            guard pduEnd >= pduStart else { return .malformed("advertising packet shorter than its CRC") }
        }
        let rssi = flags & signalPowerValid != 0 ? Int8(bitPattern: bytes[start + 1]) : nil
        return .packet(.linkLayerAdvertisement(rssi: rssi), pduStart..<pduEnd)
    }
}
