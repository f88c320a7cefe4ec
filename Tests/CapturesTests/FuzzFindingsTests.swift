import BeaconKit
import Captures
import Testing

/// Inputs the fuzz targets (Fuzzing/, docs/reliability.md) found wrong answers for, byte for byte
/// as the fuzzer left them, so each finding stays fixed.
struct FuzzFindingsTests {
    /// fuzz-pcap: a LINKTYPE_BLUETOOTH_LE_LL_WITH_PHDR pcap (little-endian, nanoseconds) with one
    /// ADV_IND whose RF pseudo-header marks its signal power (0x7F = +127 dBm) valid. The report
    /// used to carry RSSI 127, a reading no receiver makes, which ranging would take for a beacon
    /// at arm's length; 127 means "not available" for reports from every source.
    static let signalPower127 = [UInt8](hex: "4d3cb2a1020004000100000000000000ffff0000000100000000000000000000"
        + "3800000031f83d0c3c7f0000000000000200d6be898e4025a8494f78d200d6be898e40198dc2100640000000000200"
        + "d6be898e4019c2000200d6be898e4019c2")

    @Test func signalPower127IsNoRSSI() throws {
        let capture = try Capture.parse(Self.signalPower127, path: "fuzz-pcap-signal-power-127")
        #expect(capture.format == .pcap(linkType: 256))
        // The record keeps what the file says; the decoded report does not pass it on as dBm.
        #expect(capture.records.map(\.packet) == [.linkLayerAdvertisement(rssi: 127)])
        var counters = DecodeCounters()
        var reports: [AdvertisingReport] = []
        capture.forEachAdvertisingReport(counters: &counters) { report, _ in reports.append(report) }
        #expect(counters.advertisingEvents == 1 && counters.malformed == 0)
        let report = try #require(reports.first)
        #expect(reports.count == 1)
        #expect(report.eventType == 0 && report.address == BluetoothAddress(rawValue: 0x00D2_784F_49A8))
        #expect(report.rssi == nil)
    }
}
