import BeaconKit
@testable import Captures
import Foundation
import TestKit
import Testing

/// `CaptureFramer` fed in pieces (as `CaptureStream` feeds it) frames exactly what `Capture.parse` frames from
/// the whole file: the same records with the same bytes, the same malformed count and details, the same error.
struct StreamingTests {
    /// What a framing produced, with each record's bytes copied out (payload ranges differ by piece).
    struct Framed: Equatable, CustomStringConvertible {
        var records: [String] = []
        var malformed = 0
        var details: [String] = []
        var error: String?
        var description: String { "\(records.count) records, \(malformed) malformed \(details.prefix(3)), error \(error ?? "none")" }
    }

    static func record(_ record: CaptureRecord, _ bytes: Span<UInt8>) -> String {
        let payload = (record.payload.lowerBound..<record.payload.upperBound).map { String(bytes[$0], radix: 16) }
        return "\(record.number) \(record.timestamp.map { "\($0.microsecondsSinceEpoch)" } ?? "-") \(record.packet) \(payload.joined(separator: " "))"
    }

    static func whole(_ bytes: [UInt8]) -> Framed {
        do {
            let capture = try Capture.parse(bytes, path: "x")
            return Framed(
                records: capture.records.map { record($0, capture.bytes.span) }, malformed: capture.malformedRecords,
                details: capture.malformedDetails)
        } catch {
            return Framed(error: "\(error.reason)")
        }
    }

    /// As `CaptureStream` does for a regular file (its size known): the unframed bytes plus the next piece of
    /// `size` bytes, the end flagged on the last.
    static func pieces(_ bytes: [UInt8], size: Int) -> Framed {
        var framer = CaptureFramer(totalSize: bytes.count)
        var framed = Framed()
        var pending: [UInt8] = []
        var next = 0
        do {
            while true {
                let piece = bytes[next..<min(bytes.count, next + size)]
                next += piece.count
                pending += piece
                let atEnd = next >= bytes.count
                let used = try framer.frame(pending.span, atEnd: atEnd)
                let source = framer.recordsIndexDecoded ? framer.decoded : pending
                framed.records += framer.records.map { record($0, source.span) }
                pending.removeFirst(used)
                if atEnd { break }
            }
        } catch {
            framed.error = "\(error)"
        }
        framed.malformed = framer.malformedRecords
        framed.details = framer.malformedDetails
        return framed
    }

    /// The btsnoop fixture with its second record's lengths set to 0x7F7F7F7F (about 2 GB).
    static func withAbsurdSecondRecord(_ snoop: [UInt8]) -> [UInt8] {
        var bytes = snoop
        let first = bytes[20..<24].reduce(0) { $0 << 8 | Int($1) }
        let second = 16 + 24 + first
        for index in second..<(second + 8) { bytes[index] = 0x7F }
        return bytes
    }

    static func inputs() throws -> [(String, [UInt8])] {
        var inputs = try RobustnessTests.subjects().map { ($0.name, $0.bytes) }
        let snoop = try Fixtures.bytes(Fixtures.btsnoop)
        // Damaged: a truncated tail, an absurd length in the middle, a hex file with bad lines, empty and tiny.
        inputs.append(("btsnoop cut mid-record", Array(snoop.prefix(snoop.count - 5))))
        let absurd = Self.withAbsurdSecondRecord(snoop)
        inputs.append(("btsnoop with a 2 GB record length", absurd))
        inputs.append(("hex lines with junk", Array("# c\n04 3e 0c 02 01 00 00 aa bb cc dd ee ff 00 c5\nzz\n02 01\n\n043e03020100\n".utf8)))
        inputs.append(("hex without a final newline", Array("04 3e 0c 02 01 00 00 aa bb cc dd ee ff 00 c5".utf8)))
        inputs.append(("comments only", Array("# nothing\n\n".utf8)))
        inputs.append(("not a capture", Array("hello world, this is text\n".utf8)))
        // Found by the fuzzer: a first line shorter than the bytes the error shows.
        inputs.append(("not a capture, short first line", Array("zz\nmore text after it\n".utf8)))
        inputs.append(("empty", []))
        inputs.append(("btsnoop header only, short", Array("btsnoop\0\0\0".utf8)))
        return inputs
    }

    @Test("every piece size frames what the whole file frames", arguments: [1, 3, 7, 24, 100, 4096])
    func piecesFrameAsTheWhole(_ size: Int) throws {
        var failures: [String] = []
        for (name, bytes) in try Self.inputs() {
            let expected = Self.whole(bytes)
            let streamed = Self.pieces(bytes, size: size)
            if streamed != expected { failures.append("\(name) in pieces of \(size): \(streamed), whole: \(expected)") }
        }
        #expect(failures.isEmpty, "\(failures.prefix(3))")
    }

    @Test("a record longer than the largest read stops framing there, counted, when the input's end is not known")
    func absurdLengthInAStream() throws {
        let snoop = Self.withAbsurdSecondRecord(try Fixtures.bytes(Fixtures.btsnoop))
        var framer = CaptureFramer(totalSize: nil)
        let used = try framer.frame(Array(snoop.prefix(100_000)).span, atEnd: false)
        #expect(used == 100_000)
        #expect(framer.malformedRecords == 1)
        #expect(framer.malformedDetails.first?.hasPrefix("record 2: included length 2139062143 is more than the largest record") == true)
        // With the size known (a regular file), it is the cut-off record it is.
        var sized = CaptureFramer(totalSize: snoop.count)
        _ = try sized.frame(Array(snoop.prefix(100_000)).span, atEnd: false)
        #expect(sized.malformedDetails.first?.hasPrefix("record 2: included length 2139062143 runs past the end of the file") == true)
    }

    /// Issue 21: `beacond replay /dev/zero` read for ever. Before its first event line, a control character or a
    /// mebibyte of comments is no capture; after it, a line longer than the largest read stops framing there.
    @Test("endless input: no event line in the first MiB is no capture, an endless line stops framing")
    func endlessInputEnds() throws {
        for start in [[UInt8](repeating: 0, count: 64), [UInt8](repeating: UInt8(ascii: "#"), count: (1 << 20) + 1)] {
            var framer = CaptureFramer(totalSize: nil)
            #expect(throws: CaptureError.Reason.self, "\(start.prefix(4))") { try framer.frame(start.span, atEnd: false) }
        }
        let event = Array("04 3e 0c 02 01 00 00 aa bb cc dd ee ff 00 c5\n".utf8)
        var framer = CaptureFramer(totalSize: nil)
        let endless = event + [UInt8](repeating: UInt8(ascii: "a"), count: CaptureFramer.largestRecord + 1)
        #expect(try framer.frame(endless.span, atEnd: false) == endless.count)
        #expect(framer.records.count == 1 && framer.malformedRecords == 1 && framer.isStopped)
        _ = try framer.frame(([UInt8(ascii: "\n")] + event).span, atEnd: true)
        #expect(framer.records.isEmpty, "a line after the endless one was read")
    }

    @Test("CaptureStream reads a file and standard input alike, in blocks, and says which input failed")
    func streamReadsFilesAndPipes() throws {
        let path = Fixtures.path(Fixtures.btsnoop)
        let stream = try CaptureStream(path: path)
        #expect(!stream.isLive)
        var count = 0
        var iBeaconPayloads = 0
        try stream.forEachBatch { bytes, records in
            count += records.count
            for record in records where record.packet == .hciEvent {
                let payload = bytes.extracting(record.payload)
                if payload.count > 0, payload[0] == 0x3E { iBeaconPayloads += 1 }
            }
        }
        let whole = try Capture.load(path: path)
        #expect(count == whole.records.count && stream.recordCount == count)
        #expect(iBeaconPayloads == whole.records.filter { whole.bytes[$0.payload.lowerBound] == 0x3E && $0.packet == .hciEvent }.count)
        #expect(throws: CaptureError(path: "/nonexistent/capture", reason: .unreadable("No such file or directory"))) {
            _ = try CaptureStream(path: "/nonexistent/capture")
        }
        #expect(throws: CaptureError(path: "/tmp", reason: .unreadable("Is a directory"))) {
            _ = try CaptureStream(path: "/tmp")
        }
    }

    // MARK: A stream of unknown size (a FIFO)

    /// A btsnoop capture (datalink 1002) of `count` LE advertising report events: 69 bytes a record.
    static func generated(records count: Int) -> [UInt8] {
        let packets = (0..<count).map { index in
            TestPacket(
                microseconds: 1_700_000_000_000_000 + Int64(index),
                data: [
                    0x01, 0x04, 0x3E, 0x2B, 0x02, 0x01, 0x00, 0x00,
                    UInt8(index & 0xFF), UInt8(index >> 8 & 0xFF), 0x33, 0x44, 0x55, 0x66, 0x1F, 0x02, 0x01, 0x06, 0x1A, 0xFF,
                    0x4C, 0x00, 0x02, 0x15,
                ] + [UInt8](repeating: 0xE2, count: 16) + [0, 1, 0, 2, 0xC5, 0xC0])
        }
        return CaptureWriter.btsnoop(datalink: 1002, packets)
    }

    /// Writes `bytes` into a new FIFO from another thread, in pieces of varying size, then keeps it open until
    /// `keepOpen` is signalled (at most 20 s), if given; returns the FIFO's path (removed by the caller).
    static func fifo(writing bytes: [UInt8], keepOpen: DispatchSemaphore? = nil) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("beacond-stream-\(UUID())").path
        guard mkfifo(path, 0o600) == 0 else { throw CocoaError(.fileWriteUnknown) }
        let data = bytes
        Thread.detachNewThread {
            let fd = open(path, O_WRONLY)
            var offset = 0
            var piece = 1
            while offset < data.count {
                let count = min(piece, data.count - offset)
                let written = data.withUnsafeBytes { write(fd, $0.baseAddress! + offset, count) }
                if written <= 0 { break }
                offset += written
                piece = piece * 7 % 300_007 + 1 // 1 byte up to ~300 KB, no pattern aligned with records
            }
            _ = keepOpen?.wait(timeout: .now() + 20)
            close(fd)
        }
        return path
    }

    static func streamed(_ path: String) throws -> (records: [[UInt8]], malformed: [String], stream: CaptureStream) {
        let stream = try CaptureStream(path: path)
        var records: [[UInt8]] = []
        try stream.forEachBatch { bytes, batch in
            records += batch.map { (($0.payload.lowerBound)..<($0.payload.upperBound)).map { bytes[$0] } }
        }
        return (records, stream.malformedDetails, stream)
    }

    @Test("a FIFO of 3 MB written in uneven pieces (size unknown, several blocks) reads as the whole file does")
    func fifoOfSeveralBlocks() throws {
        let bytes = Self.generated(records: 45_000)
        #expect(bytes.count > 3 * CaptureStream.blockSize - 200_000)
        let path = try Self.fifo(writing: bytes)
        defer { unlink(path) }
        let read = try Self.streamed(path)
        let whole = try Capture.parse(bytes, path: "x")
        #expect(read.stream.isLive)
        #expect(read.records.count == 45_000)
        #expect(read.records == whole.records.map { Array(whole.bytes[$0.payload]) })
        #expect(read.malformed.isEmpty)
    }

    @Test("a pcapng block of 1.5 MiB (more than the buffer holds) grows the buffer, from a file and from a FIFO")
    func blockLargerThanTheBuffer() throws {
        let big = TestPacket(microseconds: 5, data: [UInt8](repeating: 0x5A, count: 1_572_864))
        let small = RoundTripTests.h4WithPseudoHeader
        let bytes = CaptureWriter.pcapngSection(linkType: 201, bigEndian: false, resolution: 6, small + [big] + small)
        let whole = try Capture.parse(bytes, path: "x")
        let expected = whole.records.map { Array(whole.bytes[$0.payload]) }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("beacond-stream-\(UUID()).pcapng")
        try Data(bytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let fromFile = try Self.streamed(file.path)
        #expect(fromFile.records == expected && fromFile.malformed == whole.malformedDetails)
        let path = try Self.fifo(writing: bytes)
        defer { unlink(path) }
        let fromFIFO = try Self.streamed(path)
        #expect(fromFIFO.records == expected && fromFIFO.malformed == whole.malformedDetails)
    }

    @Test("once framing stops at a damaged record, the rest is not read: a live pipe ends there, not at its end")
    func damagedRecordEndsALiveStream() throws {
        let good = Self.generated(records: 10)
        let damaged = Self.withAbsurdSecondRecord(good) // record 2 claims ~2 GB
        let writerDone = DispatchSemaphore(value: 0)
        let path = try Self.fifo(writing: damaged, keepOpen: writerDone)
        defer {
            writerDone.signal()
            unlink(path)
        }
        let started = Date()
        let read = try Self.streamed(path)
        // The writer holds the pipe open for up to 20 s: a reader that read on would wait for that.
        #expect(Date().timeIntervalSince(started) < 10, "the stream waited for the writer to close")
        #expect(read.records.count == 1)
        #expect(read.malformed.first?.hasPrefix("record 2: included length 2139062143 is more than the largest") == true)
    }

    @Test("a file that grows while it is read is not cut off at the size it had when opened")
    func growingFileIsNotCutOff() throws {
        let bytes = Self.generated(records: 100)
        // The size seen at open (30 records), then the rest arriving in pieces that split records.
        var framer = CaptureFramer(totalSize: 16 + 30 * 69)
        var pending: [UInt8] = []
        var records = 0
        for start in stride(from: 0, to: bytes.count, by: 50) {
            pending += bytes[start..<min(bytes.count, start + 50)]
            let used = try framer.frame(pending.span, atEnd: start + 50 >= bytes.count)
            records += framer.records.count
            pending.removeFirst(used)
        }
        #expect(framer.malformedDetails.isEmpty)
        #expect(records == 100)
    }
}
