import Foundation

/// The real advertising traffic the bench decodes: every LE Meta event from the corpus's hex
/// vectors and btsnoop captures (Tests/Fixtures/corpus, sources in its README).
struct FrameCorpus {
    struct Source {
        var file: String
        var events: Int
    }

    /// HCI events (event code, parameter length, parameters), without the H4 byte.
    var events: [[UInt8]] = []
    var sources: [Source] = []

    /// Tests/Fixtures/corpus of the package this file was compiled from.
    static var defaultDirectory: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Tests/Fixtures/corpus")
    }

    static func load(from directory: URL) throws -> FrameCorpus {
        var corpus = FrameCorpus()
        for file in try files(in: directory.appendingPathComponent("vectors"), suffix: ".txt") {
            let text = try String(contentsOf: file, encoding: .utf8)
            corpus.add(HexVectors.leMetaEvents(inFile: text), from: file)
        }
        for file in try files(in: directory.appendingPathComponent("btsnoop"), suffix: ".log") {
            let bytes = try [UInt8](Data(contentsOf: file))
            corpus.add(try BTSnoopRecords.leMetaEvents(in: bytes), from: file)
        }
        guard !corpus.events.isEmpty else {
            throw BTSnoopRecords.FormatError(description: "no LE Meta events under \(directory.path)")
        }
        return corpus
    }

    private mutating func add(_ found: [[UInt8]], from file: URL) {
        events.append(contentsOf: found)
        sources.append(Source(file: file.lastPathComponent, events: found.count))
    }

    /// Sorted, so the mix (and with it every figure) does not depend on directory order.
    private static func files(in directory: URL, suffix: String) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.lastPathComponent.hasSuffix(suffix) }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }
}
