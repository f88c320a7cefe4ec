import BeaconKit

/// What `LinkLayerDecoder` must do with any advertising-channel PDU.
public enum LinkLayerChecks {
    static let rssi: Int8 = -61
    static let offset = 77

    /// PDU type (header bits 0–3) → the legacy HCI event type it maps to.
    static let eventTypes: [UInt8: UInt16] = [0x0: 0, 0x2: 3, 0x4: 4, 0x6: 2]

    public static func check(pdu: Span<UInt8>) {
        var reports: [AdvertisingReport] = []
        let outcome = LinkLayerDecoder.decode(advertisingPDU: pdu, rssi: nil) { reports.append($0) }
        switch outcome {
        case .advertising(let decoded, let malformed):
            require(decoded == 1 && malformed == 0 && reports.count == 1, "\(outcome) with \(reports.count) reports")
            let report = reports[0]
            let length = Int(pdu[1])
            require(length >= 6 && pdu.count >= 2 + length, "report from a PDU shorter than its AdvA")
            require(report.dataRange == 8..<(2 + length), "data range \(report.dataRange) for length \(length)")
            require(eventTypes[pdu[0] & 0x0F] == report.eventType, "PDU type \(pdu[0] & 0x0F) → event type \(report.eventType)")
            require(report.addressType == (pdu[0] >> 6) & 1, "TxAdd not the address type")
            require(littleEndianBytes(of: report.address) == pdu.extracting(2..<8).array, "AdvA read from the wrong bytes")
            require(report.rssi == nil && report.dataComplete && report.source == .linkLayer, "report fields not as given")
            checkReports(reports, in: pdu, minimumStart: 8)
            checkRoundTrip(report, pdu)
        case .notAdvertising:
            require(
                reports.isEmpty && pdu.count >= 2 + Int(pdu[1]) && eventTypes[pdu[0] & 0x0F] == nil,
                "an advertising PDU called not advertising")
        case .malformed(let failure):
            require(reports.isEmpty && failure == .truncatedPDU, "\(failure) with \(reports.count) reports")
        }

        // RSSI and offset are passed through untouched.
        var moved: [AdvertisingReport] = []
        let again = LinkLayerDecoder.decode(advertisingPDU: pdu, offset: offset, rssi: rssi) { moved.append($0) }
        require(again == outcome && moved.count == reports.count, "offset or RSSI changed the outcome: \(again)")
        for (report, shifted) in zip(reports, moved) {
            var expected = report
            expected.rssi = rssi
            expected.dataRange = (report.dataRange.lowerBound + offset)..<(report.dataRange.upperBound + offset)
            require(shifted == expected, "offset \(offset) or RSSI \(rssi) not applied as given")
        }
        // 127 is HCI's "not available", for link-layer reports too.
        _ = LinkLayerDecoder.decode(advertisingPDU: pdu, rssi: AdvertisingReport.rssiNotAvailable) { report in
            require(report.rssi == nil, "RSSI 127 passed on as a reading")
        }
    }

    /// The report sent again as a PDU (header, AdvA, AdvData, no trailing bytes) decodes to itself.
    static func checkRoundTrip(_ report: AdvertisingReport, _ pdu: Span<UInt8>) {
        let fields = ReportFields(report, in: pdu)
        guard let type = eventTypes.first(where: { $0.value == report.eventType })?.key else {
            require(false, "event type \(report.eventType) has no PDU type")
            return
        }
        let encoded: [UInt8] =
            [type | report.addressType << 6, UInt8(6 + fields.data.count)]
            + littleEndianBytes(of: report.address) + fields.data
        var again: [ReportFields] = []
        let span = encoded.span
        let outcome = LinkLayerDecoder.decode(advertisingPDU: span, rssi: nil) { again.append(ReportFields($0, in: span)) }
        require(
            outcome == .advertising(reports: 1, malformedReports: 0) && again == [fields],
            "re-encoded PDU decodes as \(outcome) \(again), not \(fields): [\(hex(encoded))]")
    }
}
