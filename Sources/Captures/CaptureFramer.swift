import BeaconKit

/// Frames a capture's records as its bytes arrive, in pieces of any size: the one reader behind `Capture.parse`
/// (all bytes at once) and `CaptureStream` (a file, FIFO or standard input read in blocks, in constant memory).
/// It tells the format from the first bytes (btsnoop, pcap and pcapng by their magic numbers, else hex text by
/// its first data line), then frames records with that format's state carried from piece to piece.
public struct CaptureFramer {
    /// The longest record, block or line read: the most a stream buffers for one record. A length field claiming
    /// more is corruption (an HCI packet is at most 64 KiB); reading stops there, counted malformed.
    public static let largestRecord = 16 << 20

    private enum State {
        case detecting
        case fixed(FixedHeaderRecords)
        case pcapng(PcapngReader.Framer)
        case hexLines(HexLinesReader.Framer)
        /// Framing stopped (a truncated or unframeable record): the rest of the input is not read. A pcapng framer
        /// is kept for its check at the end.
        case stopped(PcapngReader.Framer?)
    }

    public private(set) var format: CaptureFormat?
    private var state = State.detecting
    /// The input's first bytes, kept for a "not a capture" error that is only known after them.
    private var firstBytes: [UInt8] = []
    private var builder = RecordBuilder()
    /// The input's size when known before its end (a regular file): a record claiming more is known to be cut off.
    private let totalSize: Int?
    /// The input offset of the bytes the next `frame` gets.
    public private(set) var offset = 0
    /// For hex lines, the bytes of the events framed by the last `frame`, which their records index.
    public private(set) var decoded: [UInt8] = []

    /// `totalSize`: the input's size when known (a regular file), so a record that runs past its end is reported
    /// as such before the end is read.
    public init(totalSize: Int? = nil) {
        self.totalSize = totalSize
    }

    /// The records the last `frame` framed, in order. Their payloads index the bytes given to it (binary formats)
    /// or `decoded` (hex lines): see `recordsIndexDecoded`.
    public var records: [CaptureRecord] { builder.records }
    public var recordsIndexDecoded: Bool { format == .hexLines }
    /// Framing stopped at a record that cannot be framed: nothing after it will be (the reader may stop reading).
    public var isStopped: Bool {
        if case .stopped = state { return true }
        return false
    }

    /// Records that could not be framed or classified so far.
    public var malformedRecords: Int { builder.malformed }
    /// The first few of those problems.
    public var malformedDetails: [String] { builder.details }

    /// Frames the complete records at the start of `bytes`, the input from `offset` on (with `atEnd`, all that is
    /// left of it). Returns how many bytes were framed: the caller drops those and calls again with what is left
    /// and more. The records framed replace the previous call's (`records`). Throws when the input is no capture
    /// this module reads, as `Capture.parse` does.
    public mutating func frame(_ bytes: Span<UInt8>, atEnd: Bool) throws(CaptureError.Reason) -> Int {
        builder.records.removeAll(keepingCapacity: true)
        decoded.removeAll(keepingCapacity: true)
        // The first bytes, however small the pieces they come in (every byte before `offset` was in a piece).
        if firstBytes.count < CaptureError.Reason.shownByteCount, firstBytes.count >= offset {
            let from = firstBytes.count - offset
            for index in from..<min(bytes.count, CaptureError.Reason.shownByteCount - offset) { firstBytes.append(bytes[index]) }
        }
        let used = try frameRecords(bytes, atEnd: atEnd)
        offset += used
        return used
    }

    private mutating func frameRecords(_ bytes: Span<UInt8>, atEnd: Bool) throws(CaptureError.Reason) -> Int {
        let base = offset
        let available = bytes.count
        // What the input still has from `start`, when its size is known; unknown again once more than that size
        // was read (a file that grows while it is read).
        let bytesLeft: (Int) -> Int? = { [totalSize] start in
            guard let total = totalSize else { return nil }
            let left = total - base - start
            return left >= available - start ? left : nil
        }
        switch state {
        case .detecting:
            guard let header = try detect(bytes, atEnd: atEnd) else { return 0 }
            return try header + frameRecords(bytes.extracting(header...), atEnd: atEnd, shiftedBy: header)
        case .fixed(var records):
            let (next, finished) = records.frame(bytes, from: 0, atEnd: atEnd, bytesLeft: bytesLeft, into: &builder)
            state = finished ? .stopped(nil) : .fixed(records)
            return next
        case .pcapng(var framer):
            let (next, finished) = framer.frame(bytes, from: 0, base: base, atEnd: atEnd, bytesLeft: bytesLeft, into: &builder)
            state = finished ? .stopped(framer) : .pcapng(framer)
            if atEnd { try framer.finish() }
            return next
        case .hexLines(var framer):
            guard let next = framer.frame(bytes, atEnd: atEnd, decoded: &decoded, into: &builder) else {
                // The error shows the input's first bytes: wait for them (nothing of this call was kept).
                guard firstBytes.count >= CaptureError.Reason.shownByteCount || atEnd else { return 0 }
                throw .notACapture(firstBytes: firstBytes)
            }
            state = framer.stopped ? .stopped(nil) : .hexLines(framer)
            if atEnd, try !framer.finish() { throw .notACapture(firstBytes: firstBytes) }
            return next
        case .stopped(let pcapng):
            if atEnd { try pcapng?.finish() }
            return bytes.count
        }
    }

    /// After a file header: frames what follows it in the same bytes, with record payloads still indexing them.
    private mutating func frameRecords(_ rest: Span<UInt8>, atEnd: Bool, shiftedBy header: Int) throws(CaptureError.Reason) -> Int {
        let mark = builder.records.count
        offset += header
        defer { offset -= header }
        let used = try frameRecords(rest, atEnd: atEnd)
        // Payloads index `rest`; the caller's bytes start `header` earlier.
        for index in mark..<builder.records.count {
            let payload = builder.records[index].payload
            builder.records[index].payload = (payload.lowerBound + header)..<(payload.upperBound + header)
        }
        return used
    }

    /// Tells the format from the first bytes. Returns nil to wait for more, else how many header bytes were read
    /// (0 for pcapng, whose section header is its first block, and for hex lines).
    private mutating func detect(_ bytes: Span<UInt8>, atEnd: Bool) throws(CaptureError.Reason) -> Int? {
        guard bytes.count >= BTSnoopReader.magic.count || atEnd else { return nil }
        guard !bytes.isEmpty else { throw .empty }
        if bytes.hasBytes(BTSnoopReader.magic) {
            guard bytes.count >= BTSnoopReader.fileHeaderLength || atEnd else { return nil }
            let (format, records) = try BTSnoopReader.header(bytes)
            self.format = format
            state = .fixed(records)
            return BTSnoopReader.fileHeaderLength
        }
        if let (order, nanoseconds) = PcapReader.recognize(bytes) {
            guard bytes.count >= PcapReader.fileHeaderLength || atEnd else { return nil }
            let (format, records) = try PcapReader.header(bytes, order: order, nanoseconds: nanoseconds)
            self.format = format
            state = .fixed(records)
            return PcapReader.fileHeaderLength
        }
        if bytes.hasBytes(PcapngReader.sectionHeaderMagic) {
            guard bytes.count >= PcapngReader.minimumSectionHeaderLength || atEnd else { return nil }
            state = .pcapng(try PcapngReader.Framer(firstSection: bytes))
            format = .pcapng
            return 0
        }
        state = .hexLines(HexLinesReader.Framer())
        format = .hexLines
        return 0
    }
}
