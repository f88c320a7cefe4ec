import BeaconKit
import Foundation

/// Writes the bench's distinct frames for scripts/bench/python_peers.py, so the Python parsers
/// see exactly the bytes Swift decodes. Text, one record per line:
///
///     E <HCI event hex, without the H4 byte>
///     A <AD hex, "-" when empty> <1 if Swift found an iBeacon, else 0> <address> <RSSI dBm, 0 if none>
///
/// `A` lines are the complete reports of the `E` events, in order.
enum FrameDump {
    static func write(_ corpus: FrameCorpus, to path: String) throws -> DecodeTally {
        var lines = ["# beacond-bench frame dump v1 (scripts/bench/python_peers.py reads it)"]
        var advertisingLines: [String] = []
        var total = DecodeTally()
        for event in corpus.events {
            lines.append("E " + hex(event[...]))
            let outcome = HCIEventDecoder.decode(event: event.span) { report in
                total.fold(report)
                guard report.dataComplete else { return }
                let data = event[report.dataRange]
                advertisingLines.append(
                    "A \(data.isEmpty ? "-" : hex(data)) \(report.beacon == nil ? 0 : 1) "
                        + "\(report.address) \(report.rssi ?? 0)")
            }
            total.count(outcome)
        }
        lines.append(
            "# totals events=\(total.events) reports=\(total.reports) ad_frames=\(advertisingLines.count) "
                + "ibeacons=\(total.iBeacons)")
        let text = (lines + advertisingLines).joined(separator: "\n") + "\n"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return total
    }

    private static func hex(_ bytes: ArraySlice<UInt8>) -> String {
        let digits = Array("0123456789abcdef")
        var text = ""
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return text
    }
}
