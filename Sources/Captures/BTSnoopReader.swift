import BeaconKit

/// Reads btsnoop v1 (the format of Android's `btsnoop_hci.log` and `btmon -w`): a 16-byte file
/// header (magic, version, datalink), then records of a 24-byte header and the packet.
/// Every field is big-endian. Layout: the btsnoop format note (Symbian/Frontline), BlueZ
/// `src/shared/btsnoop.c`.
enum BTSnoopReader {
    static let magic: [UInt8] = Array("btsnoop\0".utf8)
    static let fileHeaderLength = 16
    /// original length, included length, flags, cumulative drops (4 bytes each), timestamp (8).
    static let recordHeaderLength = 24
    /// Microseconds from 0000-01-01 (btsnoop's epoch, proleptic Gregorian) to 1970-01-01.
    static let unixEpochOffset: Int64 = 0x00DC_DDB3_0F2F_8000

    /// The file header (the first `fileHeaderLength` bytes): the format and the framer of the records after it.
    static func header(_ bytes: Span<UInt8>) throws(CaptureError.Reason) -> (CaptureFormat, FixedHeaderRecords) {
        let order = ByteOrder.bigEndian
        guard bytes.count >= fileHeaderLength else {
            throw .truncatedHeader(header: "btsnoop file", needed: fileHeaderLength, available: bytes.count)
        }
        let version = order.uint32(bytes, at: 8)
        guard version == 1 else { throw .unsupportedVersion(format: "btsnoop", version: String(version)) }
        let datalink = order.uint32(bytes, at: 12)
        guard let encoding = PacketEncoding(btsnoopDatalink: datalink) else {
            throw .unsupportedLinkType(
                kind: "btsnoop datalink", found: [datalink],
                supported: PacketEncoding.supportedBTSnoopDatalinks)
        }
        let records = FixedHeaderRecords(headerLength: recordHeaderLength, encoding: encoding) { bytes, offset in
            let ticks = Int64(bitPattern: order.uint64(bytes, at: offset + 16))
            return RecordHeader(
                includedLength: Int(order.uint32(bytes, at: offset + 4)),
                originalLength: Int(order.uint32(bytes, at: offset)),
                flags: order.uint32(bytes, at: offset + 8),
                timestamp: Timestamp(microsecondsSinceEpoch: ticks &- unixEpochOffset))
        }
        return (.btsnoop(datalink: datalink), records)
    }
}
