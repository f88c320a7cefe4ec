import BeaconKit

/// The part of a btsnoop or pcap record header that framing and classification need.
struct RecordHeader {
    var includedLength: Int
    var originalLength: Int
    /// btsnoop's flags (direction, command/event, monitor opcode); 0 for pcap.
    var flags: UInt32
    var timestamp: Timestamp?
}

/// Frames the records of a format where each packet follows a fixed-size header that gives its included
/// (stored) and original (on-the-wire) length: btsnoop and classic pcap. Keeps the record count across calls, so
/// the bytes may arrive in pieces.
struct FixedHeaderRecords {
    let headerLength: Int
    let encoding: PacketEncoding
    let readHeader: (Span<UInt8>, Int) -> RecordHeader
    private var number = 0

    init(headerLength: Int, encoding: PacketEncoding, header readHeader: @escaping (Span<UInt8>, Int) -> RecordHeader) {
        self.headerLength = headerLength
        self.encoding = encoding
        self.readHeader = readHeader
    }

    /// Frames the complete records of `bytes` from `offset`; at the end (`atEnd`) the rest too. A record whose
    /// included length runs past the end is the file's truncated tail: counted malformed, and reading stops
    /// (`finished`). A record that stores more than its original length contradicts itself: counted malformed,
    /// and reading goes on, since the included length alone frames the next record. `bytesLeft(start)`: how many
    /// bytes the whole input still has from `start` of `bytes`, when that is known before the end (a regular file).
    /// Returns where framing stopped: the start of the first record not complete yet.
    mutating func frame(
        _ bytes: Span<UInt8>, from offset: Int, atEnd: Bool, bytesLeft: (Int) -> Int?,
        into builder: inout RecordBuilder
    ) -> (next: Int, finished: Bool) {
        var offset = offset
        while offset < bytes.count {
            guard bytes.count - offset >= headerLength else {
                guard atEnd else { return (offset, false) }
                number += 1
                builder.reject("record \(number)", "file ends inside the record header (\(bytes.count - offset) of \(headerLength) bytes)")
                return (bytes.count, true)
            }
            let header = readHeader(bytes, offset)
            let start = offset + headerLength
            let complete = header.includedLength <= bytes.count - start
            if !complete, let left = atEnd ? bytes.count - start : bytesLeft(start), header.includedLength > left {
                number += 1
                builder.reject(
                    "record \(number)",
                    "included length \(header.includedLength) runs past the end of the file "
                        + "(\(left) bytes left)")
                return (bytes.count, true)
            }
            // The same limit whether the record came whole or in pieces, so a file reads alike either way.
            guard header.includedLength <= CaptureFramer.largestRecord else {
                number += 1
                builder.reject(
                    "record \(number)",
                    "included length \(header.includedLength) is more than the largest "
                        + "record beacond reads (\(CaptureFramer.largestRecord) bytes)")
                return (bytes.count, true)
            }
            guard complete else { return (offset, false) }
            number += 1
            offset = start + header.includedLength
            guard header.includedLength <= header.originalLength else {
                builder.reject("record \(number)", "included length \(header.includedLength) exceeds original length \(header.originalLength)")
                continue
            }
            let classified = encoding.classify(
                bytes, start..<offset, flags: header.flags,
                complete: header.includedLength == header.originalLength)
            builder.append(number: number, timestamp: header.timestamp, classified, label: "record \(number)")
        }
        return (offset, false)
    }
}
