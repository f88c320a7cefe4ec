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
    static let signalPower127 = [UInt8](
        hex: "4d3cb2a1020004000100000000000000ffff0000000100000000000000000000"
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

    /// Found from the fuzz runs' coverage (the branch no input reached): little-endian pcapng whose
    /// first Interface Description Block is 12 bytes, too short for a link type, then an IDB for
    /// LINKTYPE 201, then the same iBeacon event on interface 0 and on interface 1. Interface IDs
    /// count description blocks, so the 201 interface is 1; the unreadable block used to be
    /// dropped, which renumbered it 0 and read interface 0's packet with its link type.
    static let shortInterfaceDescription = [UInt8](
        hex:
            "0a0d0d0a1c0000004d3c2b1a01000000ffffffffffffffff1c000000010000000c0000000c0000000100000014000000"
            + "c900000000000000140000000600000054000000000000000000000000000000310000003100000000000001043e2a02"
            + "010001433ea2c96b6a1e02011a1aff4c000215e2c56db5dffb48d2b060d0f5a71096e000640000c5b300000054000000"
            + "0600000054000000010000000000000000000000310000003100000000000001043e2a02010001433ea2c96b6a1e0201"
            + "1a1aff4c000215e2c56db5dffb48d2b060d0f5a71096e000640000c5b300000054000000")

    @Test func shortInterfaceDescriptionKeepsInterfaceNumbers() throws {
        let capture = try Capture.parse(Self.shortInterfaceDescription, path: "short-interface-description")
        #expect(capture.format == .pcapng)
        // The packet on interface 1 is read; the one on the unreadable interface 0 is not.
        #expect(capture.records.map(\.number) == [2])
        #expect(capture.records.map(\.packet) == [.hciEvent])
        #expect(capture.malformedRecords == 2)
        #expect(capture.malformedDetails.last == "packet 1: interface 0's description block was too short to read")
    }
}
