/// Decodes advertising-channel PDUs captured over the air (Core Specification Vol 6 Part B, 2.3):
/// a 2-byte header (PDU type bits 0–3, TxAdd bit 6, length in the second byte) and the payload.
/// For ADV_IND, ADV_NONCONN_IND, ADV_SCAN_IND and SCAN_RSP the payload is AdvA (6 bytes) + AdvData.
public enum LinkLayerDecoder {
    /// The access address of every advertising-channel packet.
    public static let advertisingAccessAddress: UInt32 = 0x8E89_BED6

    /// `pdu` starts at the PDU header (no access address, no CRC). `rssi` comes from the capture's
    /// pseudo-header when it has one; 127 becomes `nil`, as in HCI reports: no receiver measures
    /// +127 dBm, and ranging must not take it for a beacon at arm's length (found by fuzzing,
    /// docs/reliability.md). PDU types map to the legacy HCI event types so reports from every
    /// source look alike.
    @inlinable
    public static func decode(
        advertisingPDU pdu: Span<UInt8>, offset: Int = 0, rssi: Int8?,
        _ body: (AdvertisingReport) -> Void
    ) -> DecodeOutcome {
        guard pdu.count >= 2 else { return .malformed(.truncatedPDU) }
        let header = pdu[0]
        let length = Int(pdu[1])
        guard pdu.count >= 2 + length else { return .malformed(.truncatedPDU) }
        let eventType: UInt16
        switch header & 0x0F {
        case 0x0: eventType = 0 // ADV_IND
        case 0x2: eventType = 3 // ADV_NONCONN_IND
        case 0x4: eventType = 4 // SCAN_RSP
        case 0x6: eventType = 2 // ADV_SCAN_IND
        default: return .notAdvertising // directed, SCAN_REQ, CONNECT_IND, extended (no AdvData here)
        }
        guard length >= 6 else { return .malformed(.truncatedPDU) }
        let dataStart = 8
        let dataEnd = 2 + length
        body(
            AdvertisingReport(
                source: .linkLayer,
                eventType: eventType,
                addressType: (header >> 6) & 0x1,
                address: BluetoothAddress(littleEndianBytes: pdu, at: 2),
                rssi: rssi == AdvertisingReport.rssiNotAvailable ? nil : rssi,
                dataRange: (offset + dataStart)..<(offset + dataEnd),
                dataComplete: true,
                beacon: BeaconFrameParser.beacon(advertisingData: pdu.extracting(dataStart..<dataEnd))))
        return .advertising(reports: 1, malformedReports: 0)
    }
}
