/// Decodes HCI LE Meta events carrying advertising reports, from raw bytes, without allocating.
///
/// Layouts follow the Bluetooth Core Specification, Vol 4 Part E, 7.7.65.2 (LE Advertising Report)
/// and 7.7.65.13 (LE Extended Advertising Report). Reports inside one event are laid out one after
/// another, as the Linux kernel (`hci_le_adv_report_evt`) and every controller do.
/// Nothing here traps on input: every length is checked before it is used.
public enum HCIEventDecoder {
    public static let h4EventPacketType: UInt8 = 0x04
    public static let leMetaEventCode: UInt8 = 0x3E
    public static let leAdvertisingReportSubevent: UInt8 = 0x02
    public static let leExtendedAdvertisingReportSubevent: UInt8 = 0x0D

    /// Decodes an H4 packet (first byte = packet type). Non-event packet types are not advertising.
    @inlinable
    public static func decode(h4Packet packet: Span<UInt8>, _ body: (AdvertisingReport) -> Void) -> DecodeOutcome {
        guard !packet.isEmpty else { return .malformed(.emptyPacket) }
        switch packet[0] {
        case h4EventPacketType:
            // A lone type byte is a packet whose event header is missing, not an empty packet.
            guard packet.count > 1 else { return .malformed(.truncatedHeader) }
            return decode(event: packet.extracting(1..<packet.count), offset: 1, body)
        case 0x01, 0x02, 0x03, 0x05:
            return .notAdvertising // command, ACL, SCO, ISO
        default:
            return .malformed(.unknownPacketType)
        }
    }

    /// Decodes an HCI event (event code, parameter length, parameters), as btsnoop datalink 1001/2001
    /// and HCI sockets deliver it. `offset` is added to every `dataRange`, so ranges can point into
    /// a larger buffer the event was cut from.
    @inlinable
    public static func decode(event: Span<UInt8>, offset: Int = 0, _ body: (AdvertisingReport) -> Void) -> DecodeOutcome {
        guard event.count >= 2 else { return .malformed(event.isEmpty ? .emptyPacket : .truncatedHeader) }
        guard event[0] == leMetaEventCode else { return .notAdvertising }
        let parameterLength = Int(event[1])
        // Bytes beyond the declared length (a read buffer's tail) are ignored; fewer is truncation.
        guard event.count >= 2 + parameterLength else { return .malformed(.parameterLengthOverrun) }
        guard parameterLength >= 1 else { return .malformed(.truncatedHeader) }
        let parameters = event.extracting(2..<(2 + parameterLength))
        switch parameters[0] {
        case leAdvertisingReportSubevent:
            return decodeLegacyReports(parameters, base: offset + 2, body)
        case leExtendedAdvertisingReportSubevent:
            return decodeExtendedReports(parameters, base: offset + 2, body)
        default:
            return .notAdvertising
        }
    }

    /// Legacy report: event_type(1) address_type(1) address(6) data_length(1) data(N) rssi(1).
    @usableFromInline
    static func decodeLegacyReports(_ p: Span<UInt8>, base: Int, _ body: (AdvertisingReport) -> Void) -> DecodeOutcome {
        guard p.count >= 2 else { return .malformed(.truncatedHeader) }
        let reportCount = Int(p[1])
        guard reportCount > 0 else { return .malformed(.noReports) }
        var offset = 2
        var decoded = 0
        while decoded < reportCount {
            guard offset + 9 <= p.count else { break }
            let dataLength = Int(p[offset + 8])
            let dataStart = offset + 9
            let rssiIndex = dataStart + dataLength
            guard rssiIndex < p.count else { break }
            let data = p.extracting(dataStart..<rssiIndex)
            body(
                AdvertisingReport(
                    source: .legacy,
                    eventType: UInt16(p[offset]),
                    addressType: p[offset + 1],
                    address: BluetoothAddress(littleEndianBytes: p, at: offset + 2),
                    rssi: AdvertisingReport.rssi(fromHCI: p[rssiIndex]),
                    dataRange: (base + dataStart)..<(base + rssiIndex),
                    dataComplete: true,
                    beacon: BeaconFrameParser.beacon(advertisingData: data)))
            decoded += 1
            offset = rssiIndex + 1
        }
        return .advertising(reports: decoded, malformedReports: reportCount - decoded)
    }

    /// Extended report: event_type(2) address_type(1) address(6) primary_phy(1) secondary_phy(1)
    /// sid(1) tx_power(1) rssi(1) periodic_interval(2) direct_address_type(1) direct_address(6)
    /// data_length(1) data(N).
    @usableFromInline
    static func decodeExtendedReports(_ p: Span<UInt8>, base: Int, _ body: (AdvertisingReport) -> Void) -> DecodeOutcome {
        guard p.count >= 2 else { return .malformed(.truncatedHeader) }
        let reportCount = Int(p[1])
        guard reportCount > 0 else { return .malformed(.noReports) }
        var offset = 2
        var decoded = 0
        while decoded < reportCount {
            guard offset + 24 <= p.count else { break }
            let dataLength = Int(p[offset + 23])
            let dataStart = offset + 24
            let dataEnd = dataStart + dataLength
            guard dataEnd <= p.count else { break }
            // Bits 7–15 are reserved; real controllers (macOS capture in the corpus) set some.
            let eventType = (UInt16(p[offset]) | UInt16(p[offset + 1]) << 8) & 0x007F
            // Data status, bits 5–6: 0 complete, 1 incomplete (more to come), 2 truncated.
            let complete = (eventType >> 5) & 0x3 == 0
            body(
                AdvertisingReport(
                    source: .extended,
                    eventType: eventType,
                    addressType: p[offset + 2],
                    address: BluetoothAddress(littleEndianBytes: p, at: offset + 3),
                    rssi: AdvertisingReport.rssi(fromHCI: p[offset + 13]),
                    dataRange: (base + dataStart)..<(base + dataEnd),
                    dataComplete: complete,
                    beacon: complete ? BeaconFrameParser.beacon(advertisingData: p.extracting(dataStart..<dataEnd)) : nil))
            decoded += 1
            offset = dataEnd
        }
        return .advertising(reports: decoded, malformedReports: reportCount - decoded)
    }
}
