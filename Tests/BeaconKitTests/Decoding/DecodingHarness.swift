import BeaconKit

/// Runs the decoders over byte arrays and keeps what their callbacks deliver, so tests can
/// compare outcomes and reports in one expression.
enum DecodingHarness {
    struct Result {
        var outcome: DecodeOutcome
        var reports: [AdvertisingReport]
    }

    static func h4(_ bytes: [UInt8]) -> Result {
        var reports: [AdvertisingReport] = []
        let outcome = HCIEventDecoder.decode(h4Packet: bytes.span) { reports.append($0) }
        return Result(outcome: outcome, reports: reports)
    }

    static func event(_ bytes: [UInt8], offset: Int = 0) -> Result {
        var reports: [AdvertisingReport] = []
        let outcome = HCIEventDecoder.decode(event: bytes.span, offset: offset) { reports.append($0) }
        return Result(outcome: outcome, reports: reports)
    }

    static func linkLayer(_ bytes: [UInt8], rssi: Int8? = nil) -> Result {
        var reports: [AdvertisingReport] = []
        let outcome = LinkLayerDecoder.decode(advertisingPDU: bytes.span, rssi: rssi) { reports.append($0) }
        return Result(outcome: outcome, reports: reports)
    }

    static func iBeacon(advertisingData bytes: [UInt8]) -> BeaconFrame? {
        IBeaconParser.parse(advertisingData: bytes.span)
    }

    static func beacon(advertisingData bytes: [UInt8]) -> BeaconFrame? {
        BeaconFrameParser.beacon(advertisingData: bytes.span)
    }

    static func content(advertisingData bytes: [UInt8]) -> AdvertisementContent {
        BeaconFrameParser.parse(advertisingData: bytes.span)
    }

    static func iBeacon(manufacturerData bytes: [UInt8]) -> BeaconFrame? {
        IBeaconParser.parse(manufacturerData: bytes.span)
    }

    static func iBeacon(appleManufacturerPayload bytes: [UInt8]) -> BeaconFrame? {
        IBeaconParser.parse(appleManufacturerPayload: bytes.span)
    }

    /// The AD structures as `(type, payload)` plus how the walk ended.
    static func adStructures(_ bytes: [UInt8]) -> (structures: [(UInt8, [UInt8])], end: ADStructures.End) {
        var structures: [(UInt8, [UInt8])] = []
        let end = ADStructures.forEach(in: bytes.span) { type, range in structures.append((type, Array(bytes[range]))) }
        return (structures, end)
    }

    /// Wraps manufacturer data (company id first) as one AD structure of type 0xFF.
    static func manufacturerADStructure(_ manufacturerData: [UInt8]) -> [UInt8] {
        [UInt8(truncatingIfNeeded: manufacturerData.count + 1), 0xFF] + manufacturerData
    }
}
