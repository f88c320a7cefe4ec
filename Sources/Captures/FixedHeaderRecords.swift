import BeaconKit

/// The part of a btsnoop or pcap record header that framing and classification need.
struct RecordHeader {
    var includedLength: Int
    var originalLength: Int
    /// btsnoop's flags (direction, command/event, monitor opcode); 0 for pcap.
    var flags: UInt32
    var timestamp: Timestamp?
}

/// Walks the records of a format where each packet follows a fixed-size header that gives its
/// included (stored) and original (on-the-wire) length: btsnoop and classic pcap.
enum FixedHeaderRecords {
    /// Reads from `offset` to the end. A record whose included length runs past the end is the
    /// file's truncated tail: counted malformed, and reading stops. A record that stores more than
    /// its original length contradicts itself: counted malformed, and reading goes on, since the
    /// included length alone frames the next record.
    static func read(_ bytes: Span<UInt8>, from offset: Int, headerLength: Int, encoding: PacketEncoding,
                     header readHeader: (Span<UInt8>, Int) -> RecordHeader) -> RecordBuilder {
        var builder = RecordBuilder()
        var offset = offset
        var number = 0
        while offset < bytes.count {
            number += 1
            let label = "record \(number)"
            guard bytes.count - offset >= headerLength else {
                builder.reject(label, "file ends inside the record header (\(bytes.count - offset) of \(headerLength) bytes)")
                break
            }
            let header = readHeader(bytes, offset)
            let start = offset + headerLength
            guard header.includedLength <= bytes.count - start else {
                builder.reject(label, "included length \(header.includedLength) runs past the end of the file "
                               + "(\(bytes.count - start) bytes left)")
                break
            }
            offset = start + header.includedLength
            guard header.includedLength <= header.originalLength else {
                builder.reject(label, "included length \(header.includedLength) exceeds original length \(header.originalLength)")
                continue
            }
            let classified = encoding.classify(bytes, start..<offset, flags: header.flags,
                                               complete: header.includedLength == header.originalLength)
            builder.append(number: number, timestamp: header.timestamp, classified, label: label)
        }
        return builder
    }
}
