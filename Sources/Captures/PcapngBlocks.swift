import BeaconKit

/// An Interface Description Block: link type, snapshot length, and the options that turn
/// timestamps into time (`if_tsresol`, `if_tsoffset`).
struct PcapngInterface {
    static let resolutionOption: UInt16 = 9
    static let offsetOption: UInt16 = 14
    static let endOfOptions: UInt16 = 0
    /// Without `if_tsresol`, timestamps count microseconds (pcapng draft, section 4.2).
    static let defaultResolution: UInt8 = 6

    var linkType: UInt32
    var encoding: PacketEncoding?
    var snapLength: Int
    /// `if_tsresol`: bit 7 clear, 10^-n seconds per tick; set, 2^-n.
    var resolution: UInt8 = defaultResolution
    /// `if_tsoffset`: seconds to add to every timestamp.
    var offsetSeconds: Int64 = 0
    /// False for `undescribed`.
    var readable = true

    /// Stands in for a description block too short to read: interface IDs count description
    /// blocks, so later interfaces keep their numbers, and this one's packets are not read with
    /// another interface's link type (found from the fuzz runs' coverage, docs/reliability.md).
    static let undescribed = PcapngInterface()

    private init() {
        linkType = 0
        encoding = nil
        snapLength = 0
        readable = false
    }

    /// Body: link type (2), reserved (2), snapshot length (4), options.
    init?(_ bytes: Span<UInt8>, body: Range<Int>, order: ByteOrder) {
        guard body.count >= 8 else { return nil }
        linkType = UInt32(order.uint16(bytes, at: body.lowerBound))
        encoding = PacketEncoding(linkType: linkType)
        snapLength = Int(order.uint32(bytes, at: body.lowerBound + 4))
        var option = body.lowerBound + 8
        // Options: code (2), length (2), value padded to 4 bytes; a malformed tail is ignored.
        while body.upperBound - option >= 4 {
            let code = order.uint16(bytes, at: option)
            let length = Int(order.uint16(bytes, at: option + 2))
            let value = option + 4
            guard code != Self.endOfOptions, length <= body.upperBound - value else { break }
            if code == Self.resolutionOption, length >= 1 { resolution = bytes[value] }
            if code == Self.offsetOption, length >= 8 { offsetSeconds = Int64(bitPattern: order.uint64(bytes, at: value)) }
            option = value + (length + 3) / 4 * 4
        }
    }

    /// Ticks since the Unix epoch in this interface's resolution, as microseconds; nil when the
    /// result does not fit a `Timestamp`.
    func timestamp(ticks: UInt64) -> Timestamp? {
        let exponent = Int(resolution & 0x7F)
        var micros = UInt128(ticks)
        if resolution & 0x80 != 0 {
            // 64-bit ticks times 10^6 needs at most 84 bits; the exponent is at most 127.
            micros = (micros * 1_000_000) >> exponent
        } else if exponent > 6 {
            // 10^20 exceeds any 64-bit tick count: more divisions would only repeat 0.
            for _ in 0..<min(exponent - 6, 20) { micros /= 10 }
        } else {
            for _ in 0..<(6 - exponent) { micros *= 10 }
        }
        guard micros <= UInt128(Int64.max) else { return nil }
        let (offset, overflow) = offsetSeconds.multipliedReportingOverflow(by: 1_000_000)
        guard !overflow else { return nil }
        let (total, overflowTotal) = Int64(micros).addingReportingOverflow(offset)
        return overflowTotal ? nil : Timestamp(microsecondsSinceEpoch: total)
    }
}

/// A packet block's fields, or why the block cannot hold the packet it declares.
enum PcapngPacket {
    /// `ticks` is nil for Simple Packet Blocks, which carry no timestamp.
    case packet(interfaceID: Int, ticks: UInt64?, data: Range<Int>, originalLength: Int)
    case malformed(String)

    /// Enhanced (6): interface (4), timestamp high/low (4+4), captured (4), original (4), data.
    /// Obsolete Packet Block (2): interface (2), drops (2), then as Enhanced.
    /// Simple (3): original length (4), data; interface 0, captured = min(original, snaplen, room).
    init(_ bytes: Span<UInt8>, type: UInt32, body: Range<Int>, section: PcapngReader.Section) {
        let order = section.order
        let start = body.lowerBound
        if type == PcapngReader.simplePacketType {
            guard body.count >= 4 else { self = .malformed("simple packet block too short"); return }
            let originalLength = Int(order.uint32(bytes, at: start))
            var captured = min(originalLength, body.count - 4)
            if let snapLength = section.interfaces.first?.snapLength, snapLength > 0 {
                captured = min(captured, snapLength)
            }
            self = .packet(
                interfaceID: 0, ticks: nil, data: (start + 4)..<(start + 4 + captured),
                originalLength: originalLength)
            return
        }
        guard body.count >= 20 else { self = .malformed("packet block shorter than its 20-byte header"); return }
        let interfaceID =
            type == PcapngReader.obsoletePacketType
            ? Int(order.uint16(bytes, at: start)) : Int(order.uint32(bytes, at: start))
        let ticks = UInt64(order.uint32(bytes, at: start + 4)) << 32 | UInt64(order.uint32(bytes, at: start + 8))
        let captured = Int(order.uint32(bytes, at: start + 12))
        let originalLength = Int(order.uint32(bytes, at: start + 16))
        guard captured <= body.count - 20 else {
            self = .malformed("captured length \(captured) runs past the end of its block (\(body.count - 20) bytes)")
            return
        }
        self = .packet(
            interfaceID: interfaceID, ticks: ticks, data: (start + 20)..<(start + 20 + captured),
            originalLength: originalLength)
    }
}
