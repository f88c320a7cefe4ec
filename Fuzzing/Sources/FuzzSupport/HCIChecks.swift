import BeaconKit

/// What `HCIEventDecoder` must do with any H4 packet, beyond not trapping.
public enum HCIChecks {
    /// Where the second decoding (through `decode(event:offset:)`) pretends the event sits.
    static let eventOffset = 1000

    public static func check(h4Packet packet: Span<UInt8>) {
        var reports: [AdvertisingReport] = []
        let outcome = HCIEventDecoder.decode(h4Packet: packet) { reports.append($0) }
        checkOutcome(outcome, reports, packet)

        // The same event without its type byte, through the other entry point, at an offset:
        // the same outcome and reports, ranges shifted by exactly the offset difference.
        guard packet.count >= 1, packet[0] == HCIEventDecoder.h4EventPacketType else { return }
        var shifted: [AdvertisingReport] = []
        let eventOutcome = HCIEventDecoder.decode(event: packet.extracting(1...), offset: eventOffset) { shifted.append($0) }
        if packet.count > 1 {
            require(eventOutcome == outcome, "decode(event:) says \(eventOutcome), decode(h4Packet:) \(outcome)")
        }
        require(shifted.count == reports.count, "decode(event:) gave \(shifted.count) reports, decode(h4Packet:) \(reports.count)")
        for (fromEvent, fromPacket) in zip(shifted, reports) {
            var moved = fromEvent
            moved.dataRange = (fromEvent.dataRange.lowerBound - eventOffset + 1)..<(fromEvent.dataRange.upperBound - eventOffset + 1)
            require(moved == fromPacket, "offset \(eventOffset) moved a report to \(fromEvent.dataRange), not by the offset")
        }
    }

    static func checkOutcome(_ outcome: DecodeOutcome, _ reports: [AdvertisingReport], _ packet: Span<UInt8>) {
        switch outcome {
        case .advertising(let decoded, let malformed):
            // Only an LE Meta event with one of the two advertising subevents gets here.
            require(
                packet.count >= 5 && packet[0] == 0x04 && packet[1] == HCIEventDecoder.leMetaEventCode,
                "advertising outcome for a packet that is not an LE Meta event")
            let subevent = packet[3]
            let legacy = subevent == HCIEventDecoder.leAdvertisingReportSubevent
            require(
                legacy || subevent == HCIEventDecoder.leExtendedAdvertisingReportSubevent,
                "advertising outcome for subevent \(subevent)")
            require(decoded == reports.count, "outcome counts \(decoded) reports, body saw \(reports.count)")
            require(
                malformed >= 0 && decoded + malformed == Int(packet[4]),
                "\(decoded) decoded + \(malformed) malformed ≠ \(packet[4]) reports in the event")
            // Reports lie inside the declared parameters (2 + parameter length), after the header.
            let parameterEnd = 3 + Int(packet[2])
            require(parameterEnd <= packet.count, "reports decoded from an event longer than its packet")
            checkReports(reports, in: packet.extracting(0..<parameterEnd), minimumStart: 5)
            for report in reports {
                require(report.source == (legacy ? .legacy : .extended), "\(report.source) report from subevent \(subevent)")
                if !legacy { require(report.eventType & ~0x007F == 0, "reserved event-type bits kept: \(report.eventType)") }
                require(report.dataComplete || !legacy, "a legacy report marked incomplete")
            }
            checkRoundTrip(reports, packet, legacy: legacy)
        case .notAdvertising:
            require(reports.isEmpty, "reports from a packet that is not advertising")
            guard packet.count >= 1, packet[0] == 0x04 else { return }
            require(packet.count >= 3, "a \(packet.count)-byte event classified instead of malformed")
            if packet[1] == HCIEventDecoder.leMetaEventCode {
                require(
                    packet.count >= 4 && packet[3] != HCIEventDecoder.leAdvertisingReportSubevent
                        && packet[3] != HCIEventDecoder.leExtendedAdvertisingReportSubevent,
                    "an advertising subevent called not advertising")
            }
        case .malformed:
            require(reports.isEmpty, "reports from a malformed packet")
        }
    }

    /// Encodes the reports again, the way a controller would, and decodes that: the same reports
    /// come back, and none is malformed.
    static func checkRoundTrip(_ reports: [AdvertisingReport], _ packet: Span<UInt8>, legacy: Bool) {
        guard !reports.isEmpty else { return }
        let fields = reports.map { ReportFields($0, in: packet) }
        var parameters: [UInt8] = [
            legacy
                ? HCIEventDecoder.leAdvertisingReportSubevent
                : HCIEventDecoder.leExtendedAdvertisingReportSubevent,
            UInt8(reports.count),
        ]
        for report in fields {
            if legacy {
                parameters += [UInt8(report.eventType), report.addressType] + littleEndianBytes(of: report.address)
                parameters += [UInt8(report.data.count)] + report.data + [hciRSSI(report.rssi)]
            } else {
                parameters += [UInt8(report.eventType), 0x00, report.addressType] + littleEndianBytes(of: report.address)
                // primary PHY 1M, no secondary PHY, SID 0, TX power n/a, RSSI, no periodic interval, no direct address.
                parameters += [0x01, 0x00, 0x00, 0x7F, hciRSSI(report.rssi), 0x00, 0x00, 0x00] + [UInt8](repeating: 0, count: 6)
                parameters += [UInt8(report.data.count)] + report.data
            }
        }
        require(parameters.count <= 255, "re-encoded parameters (\(parameters.count) bytes) exceed the original event")
        let event: [UInt8] = [0x04, HCIEventDecoder.leMetaEventCode, UInt8(parameters.count)] + parameters
        var again: [ReportFields] = []
        let span = event.span
        let outcome = HCIEventDecoder.decode(h4Packet: span) { again.append(ReportFields($0, in: span)) }
        require(
            outcome == .advertising(reports: reports.count, malformedReports: 0),
            "re-encoded event decodes as \(outcome): [\(hex(event))]")
        require(again == fields, "round trip changed the reports:\n  \(fields)\n  \(again)")
    }
}
