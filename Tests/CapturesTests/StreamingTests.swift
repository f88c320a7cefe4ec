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
            return Framed(records: capture.records.map { record($0, capture.bytes.span) }, malformed: capture.malformedRecords,
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
}
