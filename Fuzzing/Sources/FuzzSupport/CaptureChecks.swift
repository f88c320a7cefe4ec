import BeaconKit
import Captures

/// What `Capture.parse` must do with any bytes: throw a `CaptureError`, or return a capture whose
/// records point inside its buffer, in order, that decodes without contradictions and that reads
/// back the same after being written out again.
public enum CaptureChecks {
    static let path = "fuzz-input"

    public static func check(file: [UInt8]) {
        let capture: Capture
        do {
            capture = try Capture.parse(file, path: path)
        } catch {
            require(error.path == path && !error.description.isEmpty, "error without path or text: \(error)")
            if file.isEmpty { require(error.reason == .empty, "empty input gave \(error.reason)") }
            checkStreaming(file, whole: .failure(error.reason))
            return
        }
        checkStreaming(file, whole: .success(capture))
        require(!file.isEmpty, "an empty file parsed as a capture")
        require(!capture.format.description.isEmpty, "a format without a name")
        checkFormat(capture, file)
        checkRecords(capture)
        checkDeterministic(capture, file)
        checkDecoding(capture)
        checkRoundTrip(capture)
    }

    /// The same bytes arriving in pieces (as `CaptureStream` reads a file, a pipe or standard input) frame the same
    /// records with the same bytes, the same malformed count and details, or the same error. The piece size comes
    /// from the input, so the fuzzer varies it too.
    static func checkStreaming(_ file: [UInt8], whole: Result<Capture, CaptureError.Reason>) {
        // Not from the first bytes: the format targets put a fixed magic there.
        let size = 1 + (file.count &+ Int(file.last ?? 0)) % 61
        var framer = CaptureFramer(totalSize: file.count)
        var pending: [UInt8] = []
        var records: [[UInt8]] = []
        var next = 0
        var failure: CaptureError.Reason?
        do {
            while true {
                let piece = file[next..<min(file.count, next + size)]
                next += piece.count
                pending += piece
                let atEnd = next >= file.count
                let used = try framer.frame(pending.span, atEnd: atEnd)
                let source = framer.recordsIndexDecoded ? framer.decoded : pending
                records += framer.records.map { Array(source[$0.payload]) }
                require(used <= pending.count, "framed \(used) of \(pending.count) bytes")
                pending.removeFirst(used)
                if atEnd { break }
            }
        } catch {
            failure = error
        }
        switch whole {
        case .failure(let reason):
            require(failure == reason, "in pieces of \(size): \(String(describing: failure)), whole: \(reason)")
        case .success(let capture):
            require(failure == nil, "in pieces of \(size) it failed: \(String(describing: failure))")
            require(
                records == capture.records.map { Array(capture.bytes[$0.payload]) },
                "in pieces of \(size): \(records.count) records, whole: \(capture.records.count)")
            require(
                framer.malformedRecords == capture.malformedRecords && framer.malformedDetails == capture.malformedDetails,
                "in pieces of \(size): malformed \(framer.malformedDetails), whole: \(capture.malformedDetails)")
        }
    }

    /// The format agrees with the magic number the file starts with.
    static func checkFormat(_ capture: Capture, _ file: [UInt8]) {
        let expected: String
        switch file.prefix(8) {
        case let head where head.elementsEqual("btsnoop\0".utf8): expected = "btsnoop"
        case let head
        where [
            [0xA1, 0xB2, 0xC3, 0xD4], [0xD4, 0xC3, 0xB2, 0xA1], [0xA1, 0xB2, 0x3C, 0x4D],
            [0x4D, 0x3C, 0xB2, 0xA1],
        ].contains(Array(head.prefix(4))): expected = "pcap"
        case let head where head.starts(with: [0x0A, 0x0D, 0x0D, 0x0A]): expected = "pcapng"
        default: expected = "hexLines"
        }
        let actual: String
        switch capture.format {
        case .btsnoop: actual = "btsnoop"
        case .pcap: actual = "pcap"
        case .pcapng: actual = "pcapng"
        case .hexLines: actual = "hexLines"
        }
        require(actual == expected, "read as \(capture.format), but the file starts like \(expected)")
        if case .hexLines = capture.format {
            require(capture.bytes.count <= file.count / 2, "hex lines decoded to more bytes than half the text")
        } else {
            require(capture.bytes == file, "a binary capture's buffer is not the file")
        }
    }

    static func checkRecords(_ capture: Capture) {
        var previous = 0
        for record in capture.records {
            require(
                record.payload.lowerBound >= 0 && record.payload.upperBound <= capture.bytes.count,
                "record \(record.number) payload \(record.payload) outside \(capture.bytes.count) bytes")
            require(record.number > previous, "record numbers not increasing at \(record.number)")
            previous = record.number
        }
        require(
            capture.malformedRecords >= 0 && capture.malformedDetails.count == min(capture.malformedRecords, 10),
            "\(capture.malformedDetails.count) details for \(capture.malformedRecords) malformed records")
        if case .hexLines = capture.format {
            require(!capture.records.isEmpty, "hex lines without one event accepted")
            for record in capture.records {
                require(
                    record.packet == .hciEvent && record.timestamp == nil && record.payload.lowerBound >= 1
                        && capture.bytes[record.payload.lowerBound - 1] == 0x04, "hex line record \(record.number) is not an H4 event")
            }
        }
    }

    /// Parsing is a function of the bytes.
    static func checkDeterministic(_ capture: Capture, _ file: [UInt8]) {
        guard let again = try? Capture.parse(file, path: path) else {
            require(false, "second parse of the same bytes threw")
            return
        }
        require(
            again.records == capture.records && again.bytes == capture.bytes && again.format == capture.format
                && again.malformedRecords == capture.malformedRecords && again.malformedDetails == capture.malformedDetails,
            "second parse of the same bytes differs")
    }

    /// Every record decodes; counters agree with what the body saw; reports stay in their record.
    static func checkDecoding(_ capture: Capture) {
        var counters = DecodeCounters()
        var reports = 0
        let span = capture.bytes.span
        capture.forEachAdvertisingReport(counters: &counters) { report, record in
            reports += 1
            require(
                report.dataRange.lowerBound >= record.payload.lowerBound && report.dataRange.upperBound <= record.payload.upperBound,
                "report data \(report.dataRange) outside its record \(record.number) payload \(record.payload)")
            checkReports([report], in: span.extracting(0..<record.payload.upperBound), minimumStart: record.payload.lowerBound)
        }
        let decodable = capture.records.filter { $0.packet != .other }.count
        require(counters.events == decodable, "\(counters.events) events counted for \(decodable) decodable records")
        require(counters.reports == reports, "\(counters.reports) reports counted, body saw \(reports)")
        require(counters.malformedByReason.values.reduce(0, +) == counters.malformed, "malformed by reason does not add up")
    }

    /// Events written to btsnoop and to hex lines, and link-layer PDUs written to pcap, read back
    /// as the same records.
    static func checkRoundTrip(_ capture: Capture) {
        let bytes = capture.bytes
        let events = capture.records.filter { $0.packet == .hciEvent }
        let pdus = capture.records.compactMap { record -> (rssi: Int8?, pdu: [UInt8])? in
            guard case .linkLayerAdvertisement(let rssi) = record.packet else { return nil }
            return (rssi, Array(bytes[record.payload]))
        }
        if !events.isEmpty {
            let written = events.map { (microseconds: $0.timestamp?.microsecondsSinceEpoch, event: Array(bytes[$0.payload])) }
            let snoop = reread(CaptureWriting.btsnoopH4(events: written), "btsnoop")
            require(snoop.malformedRecords == 0 && snoop.records.count == events.count, "btsnoop round trip lost records")
            for (original, again) in zip(events, snoop.records) {
                require(
                    again.packet == .hciEvent && Array(snoop.bytes[again.payload]) == Array(bytes[original.payload])
                        && again.timestamp == (original.timestamp ?? Timestamp(microsecondsSinceEpoch: 0)),
                    "btsnoop round trip changed record \(original.number)")
            }
            let text = reread(CaptureWriting.hexLines(events: written.map(\.event)), "hex lines")
            require(text.malformedRecords == 0 && text.records.count == events.count, "hex lines round trip lost records")
            for (original, again) in zip(events, text.records) {
                require(Array(text.bytes[again.payload]) == Array(bytes[original.payload]), "hex lines round trip changed record \(original.number)")
            }
        }
        if !pdus.isEmpty {
            let air = reread(CaptureWriting.pcapLinkLayer(pdus: pdus), "pcap")
            require(air.malformedRecords == 0 && air.records.count == pdus.count, "pcap round trip lost records")
            for ((rssi, pdu), again) in zip(pdus, air.records) {
                require(
                    again.packet == .linkLayerAdvertisement(rssi: rssi) && Array(air.bytes[again.payload]) == pdu,
                    "pcap round trip changed a link-layer record: \(again)")
            }
        }
    }

    static func reread(_ file: [UInt8], _ format: String) -> Capture {
        do {
            return try Capture.parse(file, path: "round trip")
        } catch {
            failCheck("\(format) round trip does not parse: \(error)")
        }
    }
}
