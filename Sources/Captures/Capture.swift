public import BeaconKit
import Foundation

/// A capture file loaded for decoding: one byte buffer and records that point into it, so
/// iterating allocates nothing and the same bytes serve every pass (the benchmark's loops).
public struct Capture: Sendable {
    /// The file as the caller named it.
    public let path: String
    public let format: CaptureFormat
    /// The file's bytes; for hex lines, the decoded bytes of each event line (04 byte included),
    /// one line after another.
    public let bytes: [UInt8]
    public let records: [CaptureRecord]
    /// Records that could not be framed or classified (truncated tail, contradictory lengths,
    /// unknown H4 type, lines that are not H4 events); they are not in `records`.
    public let malformedRecords: Int
    /// The first few of those problems, as "record 12: …", "packet 3: …" or "line 7: …".
    public let malformedDetails: [String]

    /// Reads and parses the file at `path`.
    public static func load(path: String) throws(CaptureError) -> Capture {
        let bytes: [UInt8]
        do {
            bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw CaptureError(path: path, reason: .unreadable(systemMessage(error)))
        }
        return try parse(bytes, path: path)
    }

    /// strerror's text ("No such file or directory") for the POSIX error Foundation wraps, else
    /// Foundation's own description.
    static func systemMessage(_ error: any Error) -> String {
        let posix = error as? POSIXError ?? (error as? CocoaError)?.underlying as? POSIXError
        if let posix { return String(cString: strerror(posix.code.rawValue)) }
        return error.localizedDescription
    }

    /// Parses bytes already in memory, telling the format by its magic number (btsnoop, pcap,
    /// pcapng) or, failing that, by the first data line being hex. `path` only names the source
    /// in errors and diagnostics.
    public static func parse(_ bytes: [UInt8], path: String) throws(CaptureError) -> Capture {
        var framer = CaptureFramer(totalSize: bytes.count)
        do throws(CaptureError.Reason) {
            _ = try framer.frame(bytes.span, atEnd: true)
        } catch {
            throw CaptureError(path: path, reason: error)
        }
        // `frame` throws or tells the format: it has all the bytes.
        return Capture(
            path: path, format: framer.format ?? .hexLines, bytes: framer.recordsIndexDecoded ? framer.decoded : bytes,
            records: framer.records, malformedRecords: framer.malformedRecords,
            malformedDetails: framer.malformedDetails)
    }

    /// Decodes every record with BeaconKit's decoders, calling `body` with each advertising report
    /// and the record it came from. Report `dataRange`s index `bytes`. Every decoded record (HCI
    /// event or advertising PDU) is added to `counters`; `.other` records are skipped uncounted.
    public func forEachAdvertisingReport(
        counters: inout DecodeCounters,
        _ body: (AdvertisingReport, CaptureRecord) -> Void
    ) {
        let span = bytes.span
        for record in records {
            switch record.packet {
            case .hciEvent:
                counters.add(
                    HCIEventDecoder.decode(
                        event: span.extracting(record.payload),
                        offset: record.payload.lowerBound
                    ) { body($0, record) })
            case .linkLayerAdvertisement(let rssi):
                counters.add(
                    LinkLayerDecoder.decode(
                        advertisingPDU: span.extracting(record.payload),
                        offset: record.payload.lowerBound, rssi: rssi
                    ) { body($0, record) })
            case .other:
                continue
            }
        }
    }
}
