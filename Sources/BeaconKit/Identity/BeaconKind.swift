/// The kinds of beacon beacond hears, each with its own identity fields and region keys (docs/devices.md).
///
/// Every kind fits one identity shape, 16 bytes plus two 16-bit numbers, so the region index, ranging and monitoring
/// treat them alike:
/// - iBeacon: proximity UUID, major, minor (Apple's Proximity Beacon Specification).
/// - AltBeacon: id1 (16 bytes, written as a UUID), id2, id3 (AltBeacon specification, beacon code 0xBEAC).
/// - Eddystone-UID: the 10-byte namespace and 6-byte instance as the 16 bytes; both numbers are 0.
/// - A private device (a phone rotating resolvable private addresses): a 16-byte fingerprint of its Identity
///   Resolving Key (`IdentityResolvingKey.fingerprint`), never the key itself; both numbers are 0.
public enum BeaconKind: UInt8, Sendable, Hashable, CaseIterable, Comparable, CustomStringConvertible {
    case iBeacon = 0
    case altBeacon = 1
    case eddystone = 2
    case privateDevice = 3

    public static func < (lhs: BeaconKind, rhs: BeaconKind) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The name the D-Bus API's `Kind` key and the docs use.
    public var name: String {
        switch self {
        case .iBeacon: "iBeacon"
        case .altBeacon: "AltBeacon"
        case .eddystone: "Eddystone"
        case .privateDevice: "PrivateDevice"
        }
    }

    /// The prefix of the text form (`altbeacon:UUID:1:2`); iBeacon's text form has none (`ibeacon:` is accepted).
    public var textPrefix: String {
        switch self {
        case .iBeacon: "ibeacon"
        case .altBeacon: "altbeacon"
        case .eddystone: "eddystone"
        case .privateDevice: "device"
        }
    }

    /// A kind by its `name`, in any case.
    public init?(name: String) {
        let lowered = name.lowercased()
        guard let kind = BeaconKind.allCases.first(where: { $0.name.lowercased() == lowered }) else { return nil }
        self = kind
    }

    public var description: String { name }
}
