import BeaconKit
import Foundation

/// An advertising report with its data copied out of the decoded buffer, so reports decoded from
/// different buffers (an event and its re-encoding) can be compared.
struct ReportFields: Hashable, CustomStringConvertible {
    var source: AdvertisingReport.Source
    var eventType: UInt16
    var addressType: UInt8
    var address: BluetoothAddress
    var rssi: Int8?
    var data: [UInt8]
    var dataComplete: Bool
    var iBeacon: BeaconFrame?

    init(_ report: AdvertisingReport, in buffer: Span<UInt8>) {
        source = report.source
        eventType = report.eventType
        addressType = report.addressType
        address = report.address
        rssi = report.rssi
        data = buffer.extracting(report.dataRange).array
        dataComplete = report.dataComplete
        iBeacon = report.beacon
    }

    var description: String {
        "\(source) type \(eventType) addr \(addressType)/\(address) rssi \(rssi.map(String.init) ?? "nil") "
            + "data [\(hex(data))] complete \(dataComplete) iBeacon \(iBeacon.map { "\($0.identity)" } ?? "nil")"
    }
}

/// Checks every report's data range lies inside `buffer` after `minimumStart`, ranges in order
/// and not overlapping, and that the iBeacon a report carries is exactly what the AD parser finds
/// in its data (none when the data is incomplete).
func checkReports(_ reports: [AdvertisingReport], in buffer: Span<UInt8>, minimumStart: Int) {
    var previousEnd = minimumStart
    for report in reports {
        let range = report.dataRange
        require(
            range.lowerBound >= previousEnd && range.upperBound <= buffer.count,
            "data range \(range) outside \(previousEnd)..<\(buffer.count)")
        previousEnd = range.upperBound
        require(report.address.rawValue <= 0xFFFF_FFFF_FFFF, "address wider than 48 bits: \(report.address.rawValue)")
        require(report.rssi != AdvertisingReport.rssiNotAvailable, "RSSI 127 (not available) kept as a value")
        let scanResponse = report.source == .extended ? report.eventType & 0x0008 != 0 : report.eventType == 4
        require(report.isScanResponse == scanResponse, "\(report.source) event type \(report.eventType) scan response?")
        // The decoder's fast walk finds exactly the frame the full parse finds.
        let expected = report.dataComplete ? BeaconFrameParser.parse(advertisingData: buffer.extracting(range)).beacon : nil
        require(
            report.beacon == expected,
            "report beacon \(String(describing: report.beacon)) but its data holds \(String(describing: expected))")
    }
}

/// The 16 bytes of a UUID, in order.
func bytes(of uuid: UUID) -> [UInt8] {
    withUnsafeBytes(of: uuid.uuid) { Array($0) }
}

/// An iBeacon frame as a beacon advertises it: one manufacturer-specific AD structure.
func advertisingStructure(of frame: BeaconFrame) -> [UInt8] {
    let identity = frame.identity
    return [0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + bytes(of: identity.uuid)
        + [
            UInt8(identity.major >> 8), UInt8(truncatingIfNeeded: identity.major),
            UInt8(identity.minor >> 8), UInt8(truncatingIfNeeded: identity.minor),
            UInt8(bitPattern: frame.measuredPower),
        ]
}

/// HCI's byte for an RSSI (127 = not available).
func hciRSSI(_ rssi: Int8?) -> UInt8 {
    UInt8(bitPattern: rssi ?? AdvertisingReport.rssiNotAvailable)
}

/// The 6 address bytes as HCI and the link layer carry them, least significant first.
func littleEndianBytes(of address: BluetoothAddress) -> [UInt8] {
    (0..<6).map { UInt8(truncatingIfNeeded: address.rawValue >> (8 * UInt64($0))) }
}
