import BeaconKit
import Captures
import Testing

/// Hand-built files in every container and datalink, each carrying the known iBeacon event.
struct RoundTripTests {
    /// Checks the one iBeacon report decoded from `capture` against the known event.
    func expectKnownIBeacon(
        _ capture: Capture, rssi: Int8?, source: AdvertisingReport.Source,
        recordNumber: Int, timestamp: Int64?
    ) throws {
        let decoded = DecodedCapture(capture)
        #expect(decoded.counters.malformed == 0)
        let (report, record) = try #require(decoded.iBeacons.first)
        #expect(decoded.iBeacons.count == 1)
        #expect(report.beacon == BeaconFrame(identity: KnownPackets.identity, measuredPower: KnownPackets.measuredPower))
        #expect(report.address == KnownPackets.address)
        #expect(report.addressType == 1)
        #expect(report.rssi == rssi)
        #expect(report.source == source)
        #expect(Array(capture.bytes[report.dataRange]) == KnownPackets.advertisingData)
        #expect(record.number == recordNumber)
        #expect(record.timestamp?.microsecondsSinceEpoch == timestamp)
    }

    static let btsnoopCases: [(datalink: UInt32, packets: [TestPacket], kinds: [CapturePacket])] = [
        (
            1001,
            [
                TestPacket(microseconds: KnownPackets.firstTime, data: KnownPackets.resetCommand, flags: 0b10),
                TestPacket(microseconds: KnownPackets.secondTime, data: KnownPackets.event, flags: 0b11),
                TestPacket(microseconds: KnownPackets.secondTime, data: [0x01, 0x20, 0x00, 0x00], flags: 0b01),
            ],
            [.other, .hciEvent, .other]
        ),
        (
            1002,
            [
                TestPacket(microseconds: KnownPackets.firstTime, data: KnownPackets.h4ResetCommand, flags: 0b10),
                TestPacket(microseconds: KnownPackets.secondTime, data: KnownPackets.h4Event, flags: 0b11),
            ],
            [.other, .hciEvent]
        ),
        (
            2001,
            [
                TestPacket(microseconds: KnownPackets.firstTime, data: KnownPackets.resetCommand, flags: 2),
                TestPacket(microseconds: KnownPackets.secondTime, data: KnownPackets.event, flags: 1 << 16 | 3),
                TestPacket(microseconds: KnownPackets.secondTime, data: Array("Bluetooth daemon".utf8), flags: 12),
            ],
            [.other, .hciEvent, .other]
        ),
    ]

    @Test(arguments: btsnoopCases.indices)
    func btsnoopDatalinks(_ index: Int) throws {
        let (datalink, packets, kinds) = Self.btsnoopCases[index]
        let capture = try Capture.parse(CaptureWriter.btsnoop(datalink: datalink, packets), path: "hand-built.btsnoop")
        #expect(capture.format == .btsnoop(datalink: datalink))
        #expect(capture.records.map(\.packet) == kinds)
        #expect(capture.records.map(\.number) == Array(1...packets.count))
        #expect(capture.records.map { $0.timestamp?.microsecondsSinceEpoch } == packets.map(\.microseconds))
        #expect(capture.malformedRecords == 0)
        try expectKnownIBeacon(
            capture, rssi: KnownPackets.eventRSSI, source: .legacy, recordNumber: 2,
            timestamp: KnownPackets.secondTime)
    }

    /// Link type 201: a command sent, the event received (direction 0 / 1, big-endian).
    static let h4WithPseudoHeader = [
        TestPacket(microseconds: KnownPackets.firstTime, data: [0, 0, 0, 0] + KnownPackets.h4ResetCommand),
        TestPacket(microseconds: KnownPackets.secondTime, data: [0, 0, 0, 1] + KnownPackets.h4Event),
    ]
    /// Link type 256: a data-channel packet (other access address), then the advertisement.
    static let linkLayer = [
        TestPacket(
            microseconds: KnownPackets.firstTime,
            data: KnownPackets.linkLayerPacket(accessAddress: [0x11, 0x22, 0x33, 0x44])),
        TestPacket(microseconds: KnownPackets.secondTime, data: KnownPackets.linkLayerPacket()),
    ]

    @Test(arguments: [false, true], [false, true])
    func pcapBothByteOrdersAndResolutions(nanoseconds: Bool, bigEndian: Bool) throws {
        let h4 = try Capture.parse(
            CaptureWriter.pcap(
                linkType: 201, nanoseconds: nanoseconds, bigEndian: bigEndian,
                Self.h4WithPseudoHeader), path: "h4.pcap")
        #expect(h4.format == .pcap(linkType: 201))
        #expect(h4.records.map(\.packet) == [.other, .hciEvent])
        try expectKnownIBeacon(
            h4, rssi: KnownPackets.eventRSSI, source: .legacy, recordNumber: 2,
            timestamp: KnownPackets.secondTime)

        let air = try Capture.parse(
            CaptureWriter.pcap(
                linkType: 256, nanoseconds: nanoseconds, bigEndian: bigEndian,
                Self.linkLayer), path: "ll.pcap")
        #expect(air.format == .pcap(linkType: 256))
        #expect(air.records.map(\.packet) == [.other, .linkLayerAdvertisement(rssi: KnownPackets.airRSSI)])
        #expect(air.records.last.map { Array(air.bytes[$0.payload]) } == KnownPackets.advertisingPDU)
        try expectKnownIBeacon(
            air, rssi: KnownPackets.airRSSI, source: .linkLayer, recordNumber: 2,
            timestamp: KnownPackets.secondTime)
    }

    /// `if_tsresol` values and a timestamp each represents exactly: default (µs), ns, ms, 2^-10 s.
    static let resolutions: [(UInt8?, Int64)] = [
        (nil, KnownPackets.firstTime), (9, KnownPackets.firstTime),
        (3, 1_612_150_079_789_000), (0x8A, 1_612_150_079_500_000),
    ]

    @Test(arguments: [false, true], resolutions.indices)
    func pcapngBothByteOrdersAndResolutions(bigEndian: Bool, resolutionIndex: Int) throws {
        let (resolution, time) = Self.resolutions[resolutionIndex]
        // Event first (as an Enhanced or obsolete Packet Block), then a command, then the event
        // again as a Simple Packet Block, which has no timestamp.
        let packets = [
            TestPacket(microseconds: time, data: Self.h4WithPseudoHeader[1].data),
            TestPacket(microseconds: time, data: Self.h4WithPseudoHeader[0].data),
            TestPacket(microseconds: time, data: Self.h4WithPseudoHeader[1].data),
        ]
        let file = CaptureWriter.pcapngSection(
            linkType: 201, bigEndian: bigEndian, resolution: resolution,
            obsoleteFirst: resolutionIndex.isMultiple(of: 2), packets)
        let capture = try Capture.parse(file, path: "h4.pcapng")
        #expect(capture.format == .pcapng)
        #expect(capture.malformedRecords == 0)
        #expect(capture.records.map(\.packet) == [.hciEvent, .other, .hciEvent])
        #expect(capture.records.map { $0.timestamp?.microsecondsSinceEpoch } == [time, time, nil])
        let decoded = DecodedCapture(capture)
        #expect(decoded.iBeacons.count == 2)
        #expect(decoded.iBeacons.map(\.record.number) == [1, 3])
        #expect(decoded.iBeacons.allSatisfy { $0.report.beacon?.identity == KnownPackets.identity })
    }

    @Test func pcapngSectionsSwitchByteOrderAndInterfaces() throws {
        let first = CaptureWriter.pcapngSection(linkType: 256, bigEndian: false, resolution: 9, Array(Self.linkLayer.prefix(2)))
        let second = CaptureWriter.pcapngSection(linkType: 201, bigEndian: true, resolution: nil, [Self.h4WithPseudoHeader[1]])
        let ignored = CaptureWriter.pcapngSection(linkType: 1, bigEndian: true, resolution: nil, [Self.h4WithPseudoHeader[1]])
        let capture = try Capture.parse(first + second + ignored, path: "sections.pcapng")
        #expect(capture.records.map(\.number) == [1, 2, 3, 4])
        #expect(capture.records.map(\.packet) == [.other, .linkLayerAdvertisement(rssi: KnownPackets.airRSSI), .hciEvent, .other])
        #expect(
            capture.records.map { $0.timestamp?.microsecondsSinceEpoch }
                == [KnownPackets.firstTime, nil, KnownPackets.secondTime, KnownPackets.secondTime])
        #expect(DecodedCapture(capture).iBeacons.map(\.report.source) == [.linkLayer, .legacy])
    }

    @Test func linkLayerPseudoHeaderFlags() throws {
        func packet(flags: UInt16, accessAddress: [UInt8] = [0xD6, 0xBE, 0x89, 0x8E]) throws -> Capture {
            let packets = [TestPacket(microseconds: 0, data: KnownPackets.linkLayerPacket(accessAddress: accessAddress, flags: flags))]
            return try Capture.parse(CaptureWriter.pcap(linkType: 256, nanoseconds: false, bigEndian: false, packets), path: "flags.pcap")
        }
        #expect(try packet(flags: 0x0001).records.map(\.packet) == [.linkLayerAdvertisement(rssi: nil)])
        // CRC checked and valid: still an advertisement.
        #expect(try packet(flags: 0x0C03).records.map(\.packet) == [.linkLayerAdvertisement(rssi: KnownPackets.airRSSI)])
        // CRC checked and failed: not trusted.
        let corrupt = try packet(flags: 0x0403)
        #expect(corrupt.records.isEmpty)
        #expect(corrupt.malformedDetails == ["record 1: CRC check failed at capture"])
        // LE Coded PHY carries no legacy advertising.
        #expect(try packet(flags: 0x8003).records.map(\.packet) == [.other])
    }

    @Test func contradictoryLengthsAreCountedAndSkipped() throws {
        var file = CaptureWriter.btsnoop(
            datalink: 1002,
            [
                TestPacket(microseconds: KnownPackets.firstTime, data: KnownPackets.h4Event, flags: 3),
                TestPacket(microseconds: KnownPackets.secondTime, data: KnownPackets.h4Event, flags: 3),
                TestPacket(microseconds: KnownPackets.secondTime, data: [0x07, 0x00], flags: 3),
                TestPacket(microseconds: KnownPackets.secondTime, data: [], flags: 3),
            ])
        file[16 + 3] = 10 // record 1: original length 10 < included 45
        let capture = try Capture.parse(file, path: "lengths.btsnoop")
        #expect(capture.records.map(\.number) == [2])
        #expect(capture.malformedRecords == 3)
        #expect(
            capture.malformedDetails == [
                "record 1: included length 45 exceeds original length 10",
                "record 3: unknown H4 packet type 07",
                "record 4: empty H4 packet",
            ])
    }
}
