import BeaconKit
import Captures
import Foundation

/// Locates the shared corpus from this file's path, so tests need no bundle resources.
enum Fixtures {
    static let corpus = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent() // CapturesTests
        .deletingLastPathComponent() // Tests
        .appendingPathComponent("Fixtures/corpus")

    static func path(_ relative: String) -> String { corpus.appendingPathComponent(relative).path }

    static let btsnoop = "btsnoop/csacca+horizon-74-at-ble.btsnoop_hci.log"
    static let pcapng = "negative-boston-mesh-ble_all_adv_w_scan.pcapng"
    static let vectorFiles = [
        "vectors/vectors-beacontools-ibeaconble.txt",
        "vectors/vectors-ble_monitor-all-hci.txt",
        "vectors/vectors-ble_monitor-ibeacon.txt",
        "vectors/vectors-gl-ble-sdk-scanlog.txt",
        "vectors/vectors-pureswift-bluetooth.txt",
        "vectors/vectors-reelyactive-advlib.txt",
    ]

    static func bytes(_ relative: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: corpus.appendingPathComponent(relative)))
    }
}

/// Everything one decoding pass over a capture yields, for assertions.
struct DecodedCapture {
    var counters = DecodeCounters()
    var reports: [(report: AdvertisingReport, record: CaptureRecord)] = []

    init(_ capture: Capture) {
        var counters = DecodeCounters()
        var reports: [(AdvertisingReport, CaptureRecord)] = []
        capture.forEachAdvertisingReport(counters: &counters) { reports.append(($0, $1)) }
        self.counters = counters
        self.reports = reports
    }

    var iBeacons: [(report: AdvertisingReport, record: CaptureRecord)] { reports.filter { $0.report.beacon != nil } }
}

extension [UInt8] {
    init(hex: String) {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex), index != hex.endIndex {
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        self = bytes
    }

    var hex: String { map { String(format: "%02x", $0) }.joined() }
}
