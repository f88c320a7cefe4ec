public import Foundation

/// Finds iBeacon frames in advertising data.
///
/// Layout (Apple's "Proximity Beacon Specification"): manufacturer-specific data (AD type 0xFF)
/// with company identifier 0x004C (little-endian `4C 00`), then type `02`, length `15` (21), then
/// the 16-byte proximity UUID, major and minor (big-endian) and the measured power (int8).
/// Extra bytes after those 21 are ignored: real beacons (Jaalee) append one.
public enum IBeaconParser {
    public static let appleCompanyIdentifier: UInt16 = 0x004C
    static let adTypeManufacturerSpecificData: UInt8 = 0xFF

    /// The first iBeacon frame in a run of AD structures, if any. The walk ends at a zero length
    /// byte (padding follows) or at a length that would run past the data: nothing from such a
    /// structure is trusted, so an iBeacon that overruns the declared data is not found.
    @inlinable
    public static func parse(advertisingData data: Span<UInt8>) -> BeaconFrame? {
        var offset = 0
        let count = data.count
        while offset < count {
            let length = Int(data[offset])
            if length == 0 { return nil }
            let end = offset + 1 + length
            if end > count { return nil }
            // AD type at offset+1; the payload starts after it.
            if data[offset + 1] == 0xFF, length >= 26 {
                if let frame = parse(manufacturerData: data.extracting((offset + 2)..<end)) {
                    return frame
                }
            }
            offset = end
        }
        return nil
    }

    /// Manufacturer-specific data starting with the little-endian company identifier.
    @inlinable
    public static func parse(manufacturerData data: Span<UInt8>) -> BeaconFrame? {
        guard data.count >= 25, data[0] == 0x4C, data[1] == 0x00 else { return nil }
        return parse(appleManufacturerPayload: data.extracting(2..<data.count))
    }

    /// Apple manufacturer data after the company identifier: `02 15` + 21 bytes.
    @inlinable
    public static func parse(appleManufacturerPayload p: Span<UInt8>) -> BeaconFrame? {
        guard p.count >= 23, p[0] == 0x02, p[1] == 0x15 else { return nil }
        let uuid = UUID(
            uuid: (
                p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9],
                p[10], p[11], p[12], p[13], p[14], p[15], p[16], p[17]
            ))
        let major = UInt16(p[18]) << 8 | UInt16(p[19])
        let minor = UInt16(p[20]) << 8 | UInt16(p[21])
        return BeaconFrame(
            identity: BeaconIdentity(uuid: uuid, major: major, minor: minor),
            measuredPower: Int8(bitPattern: p[22]))
    }
}

/// Walks AD structures (Core Specification Supplement, Part A): `length, type, payload…`.
public enum ADStructures {
    public enum End: Hashable, Sendable {
        /// All bytes consumed, or a zero length byte (significant part over, padding follows).
        case complete
        /// A length byte that runs past the end: the rest is ignored.
        case overrun(at: Int)
    }

    /// Calls `body(type, payloadRange)` for each structure, ranges relative to `data`.
    @discardableResult
    public static func forEach(in data: Span<UInt8>, _ body: (UInt8, Range<Int>) -> Void) -> End {
        var offset = 0
        while offset < data.count {
            let length = Int(data[offset])
            if length == 0 { return .complete }
            let end = offset + 1 + length
            if end > data.count { return .overrun(at: offset) }
            body(data[offset + 1], (offset + 2)..<end)
            offset = end
        }
        return .complete
    }
}
