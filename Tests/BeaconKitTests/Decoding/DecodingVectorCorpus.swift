import Foundation

/// The hex vector files of `Tests/Fixtures/corpus/vectors` (format in that folder's README:
/// `hex<TAB>expected<TAB>source`, `#` lines are comments), read once per test.
enum DecodingVectorCorpus {
    /// Every vector file in the corpus; the corpus test asserts this list is the folder's content,
    /// so a file added later cannot go unchecked.
    static let fileNames = [
        "vectors-beacontools-ibeaconble.txt",
        "vectors-ble_monitor-all-hci.txt",
        "vectors-ble_monitor-ibeacon.txt",
        "vectors-gl-ble-sdk-scanlog.txt",
        "vectors-pureswift-bluetooth.txt",
        "vectors-reelyactive-advlib.txt",
    ]

    /// `Tests/Fixtures/corpus/vectors`, found from this file's path (tests run from any directory).
    static var directory: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent() // Decoding
            .deletingLastPathComponent() // BeaconKitTests
            .deletingLastPathComponent() // Tests
            .appendingPathComponent("Fixtures/corpus/vectors", isDirectory: true)
    }

    /// One data line of a vector file.
    struct Line: Sendable, CustomStringConvertible {
        var file: String
        var number: Int
        var hex: String
        var expected: String
        var source: String
        var bytes: [UInt8]

        var description: String { "\(file):\(number)" }
    }

    /// Reads a vector file. Lines that are not `hex<TAB>expected<TAB>source` with valid hex are
    /// returned in `problems` so the caller fails on them instead of skipping them.
    static func lines(of fileName: String) throws -> (lines: [Line], problems: [String]) {
        let text = try String(contentsOf: directory.appendingPathComponent(fileName), encoding: .utf8)
        var lines: [Line] = []
        var problems: [String] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if raw.isEmpty || raw.hasPrefix("#") { continue }
            let columns = raw.split(separator: "\t", omittingEmptySubsequences: false)
            guard columns.count == 3, let bytes = bytes(hex: columns[0]) else {
                problems.append("\(fileName):\(index + 1): not hex<TAB>expected<TAB>source")
                continue
            }
            lines.append(
                Line(
                    file: fileName, number: index + 1, hex: String(columns[0]),
                    expected: String(columns[1]), source: String(columns[2]), bytes: bytes))
        }
        return (lines, problems)
    }

    /// `0a1B…` → bytes; nil for odd length or a non-hex digit.
    static func bytes(hex: some StringProtocol) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
