import BeaconKit

/// Reads classic libpcap files: a 24-byte global header, then records of a 16-byte header
/// (seconds, fraction, included length, original length) and the packet. The magic number tells
/// the byte order and whether the fraction counts micro- or nanoseconds. Layout: pcap-savefile(5),
/// draft-ietf-opsawg-pcap.
enum PcapReader {
    static let microsecondMagic: UInt32 = 0xA1B2_C3D4
    static let nanosecondMagic: UInt32 = 0xA1B2_3C4D
    static let fileHeaderLength = 24
    static let recordHeaderLength = 16
    /// The link-type field's upper bits carry FCS information (LT_LINKTYPE in libpcap).
    static let linkTypeMask: UInt32 = 0x03FF_FFFF

    /// The byte order and fraction unit the magic announces, or nil when it is not pcap.
    static func recognize(_ bytes: Span<UInt8>) -> (order: ByteOrder, nanoseconds: Bool)? {
        guard bytes.count >= 4 else { return nil }
        for order in [ByteOrder.bigEndian, .littleEndian] {
            switch order.uint32(bytes, at: 0) {
            case microsecondMagic: return (order, false)
            case nanosecondMagic: return (order, true)
            default: continue
            }
        }
        return nil
    }

    /// The file header (the first `fileHeaderLength` bytes): the format and the framer of the records after it.
    static func header(_ bytes: Span<UInt8>, order: ByteOrder, nanoseconds: Bool) throws(CaptureError.Reason)
        -> (CaptureFormat, FixedHeaderRecords)
    {
        guard bytes.count >= fileHeaderLength else {
            throw .truncatedHeader(header: "pcap file", needed: fileHeaderLength, available: bytes.count)
        }
        let major = order.uint16(bytes, at: 4)
        guard major == 2 else {
            throw .unsupportedVersion(format: "pcap", version: "\(major).\(order.uint16(bytes, at: 6))")
        }
        let linkType = order.uint32(bytes, at: 20) & linkTypeMask
        guard let encoding = PacketEncoding(linkType: linkType) else {
            throw .unsupportedLinkType(kind: "pcap link type", found: [linkType], supported: PacketEncoding.supportedLinkTypes)
        }
        let records = FixedHeaderRecords(headerLength: recordHeaderLength, encoding: encoding) { bytes, offset in
            let seconds = Int64(order.uint32(bytes, at: offset))
            let fraction = Int64(order.uint32(bytes, at: offset + 4))
            return RecordHeader(
                includedLength: Int(order.uint32(bytes, at: offset + 8)),
                originalLength: Int(order.uint32(bytes, at: offset + 12)),
                flags: 0,
                timestamp: Timestamp(
                    microsecondsSinceEpoch:
                        seconds * 1_000_000 + (nanoseconds ? fraction / 1000 : fraction)))
        }
        return (.pcap(linkType: linkType), records)
    }
}
