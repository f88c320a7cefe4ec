public import Foundation
import _CryptoExtras
import Crypto

/// A device's Identity Resolving Key (Bluetooth Core, Vol 3 Part H, 2.4.2.1): with it, the device's resolvable
/// private addresses (which change every ~15 minutes) can be recognised as the device's.
///
/// Held most significant byte first, as the specification writes keys and its `ah` function uses them as the AES key.
/// Formats users have differ in byte order (`init(parsing:)`), so the order each means is part of the format.
public struct IdentityResolvingKey: Hashable, Sendable {
    /// The 16 bytes, most significant first (the AES-128 key).
    public let bytes: [UInt8]
    /// The device's identity address, when known (`KEY@ADDRESS`; `beaconctl devices import` writes it): a host the
    /// phone is paired with resolves its private addresses itself, and bluetoothd then reports this address instead.
    public var identityAddress: BluetoothAddress?

    public init?(bytes: [UInt8], identityAddress: BluetoothAddress? = nil) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
        self.identityAddress = identityAddress
    }

    /// The formats keys come in, and the byte order each means:
    /// - `irk:` then 32 hex digits, or 32 hex digits alone: most significant byte first, as ESPresense's `irk:` ids and
    ///   Home Assistant's Private BLE Device integration take hex.
    /// - `bluez:` then 32 hex digits: as BlueZ stores it in `/var/lib/bluetooth/ADAPTER/DEVICE/info`
    ///   (`[IdentityResolvingKey] Key=`), least significant byte first, so the bytes are reversed.
    /// - base64 (24 characters ending `==`, optionally after `irk:`): as iOS/macOS keychains export it
    ///   ("Remote IRK") and Home Assistant takes it, least significant byte first, so reversed.
    /// Hex may have `:`, `-` or spaces between byte pairs and a `0x` prefix. Any of them may end in `@ADDRESS`, the
    /// device's identity address (`5C:F3:70:12:34:56`).
    public init(parsing text: String) throws(Invalid) {
        var body = Substring(text.trimmingCharacters(in: .whitespaces))
        if let at = body.lastIndex(of: "@") {
            guard let address = BluetoothAddress(String(body[body.index(after: at)...])) else {
                throw .malformed(text, "after '@' comes the device's identity address, like 5C:F3:70:12:34:56")
            }
            identityAddress = address
            body = body[..<at]
        }
        var reversed = false
        let lowered = body.lowercased()
        if lowered.hasPrefix("bluez:") {
            body = body.dropFirst(6)
            reversed = true
        } else if lowered.hasPrefix("irk:") {
            body = body.dropFirst(4)
        }
        var bytes: [UInt8]
        if body.hasSuffix("=") {
            guard !lowered.hasPrefix("bluez:") else { throw .malformed(text, "BlueZ stores keys as hex, not base64") }
            guard let decoded = Data(base64Encoded: String(body)) else { throw .malformed(text, "not valid base64") }
            bytes = Array(decoded)
            reversed = true
        } else {
            guard let decoded = HexBytes.parse(String(body)) else {
                throw .malformed(text, "neither hex digits nor base64")
            }
            bytes = decoded
        }
        guard bytes.count == 16 else { throw .wrongLength(text, bytes.count) }
        self.bytes = reversed ? bytes.reversed() : bytes
    }

    /// The same key, whatever identity address it was declared with (one device, one key).
    public static func sameKey(_ a: IdentityResolvingKey, _ b: IdentityResolvingKey) -> Bool { a.bytes == b.bytes }

    /// `irk:` and 32 lowercase hex digits, most significant byte first: ESPresense's id for a device known by this key.
    public var espresenseID: String { "irk:" + HexBytes.lowercase(bytes) }

    /// A 16-byte name for the device that does not reveal the key (AES-128 of a fixed block under the key): its
    /// identity in ranging and monitoring, and what the state database stores for its regions.
    public var fingerprint: UUID {
        var block = Array("beacond:device:1".utf8)
        IdentityResolvingKey.encrypt(&block, key: SymmetricKey(data: bytes))
        return UUID(byteArray: block)
    }

    /// The specification's random address hash `ah(k, r)`: the low 24 bits of AES-128(k, 0¹⁰⁴ ‖ r).
    public func addressHash(prand: UInt32) -> UInt32 {
        IdentityResolvingKey.addressHash(prand: prand, key: SymmetricKey(data: bytes))
    }

    static func addressHash(prand: UInt32, key: SymmetricKey) -> UInt32 {
        var block = [UInt8](repeating: 0, count: 16)
        block[13] = UInt8(truncatingIfNeeded: prand >> 16)
        block[14] = UInt8(truncatingIfNeeded: prand >> 8)
        block[15] = UInt8(truncatingIfNeeded: prand)
        encrypt(&block, key: key)
        return UInt32(block[13]) << 16 | UInt32(block[14]) << 8 | UInt32(block[15])
    }

    /// One AES-128 block in place. The sizes are fixed here (16-byte block, 16-byte key), the only conditions under
    /// which the primitive throws.
    static func encrypt(_ block: inout [UInt8], key: SymmetricKey) {
        do {
            try AES.permute(&block, key: key)
        } catch {
            preconditionFailure("AES-128 of one 16-byte block cannot fail: \(error)")
        }
    }

    /// Whether `address` is a resolvable private address (its two most significant bits are 01) that this key made.
    public func resolves(_ address: BluetoothAddress) -> Bool {
        guard address.isResolvablePrivate else { return false }
        return addressHash(prand: address.prand) == address.hash
    }

    public enum Invalid: Error, Equatable, CustomStringConvertible {
        case malformed(String, String)
        case wrongLength(String, Int)

        static func shown(_ text: String) -> String {
            text.count > 60 ? String(text.prefix(60)) + "…" : text
        }

        public var description: String {
            let formats =
                "give 32 hex digits (most significant byte first, as ESPresense's irk: ids and Home Assistant take them), "
                + "bluez:HEX as BlueZ's bond store holds it, or the 24-character base64 a keychain exports"
            switch self {
            case .malformed(let text, let why):
                return "'\(Self.shown(text))' is not an Identity Resolving Key (\(why)): \(formats)"
            case .wrongLength(let text, let count):
                return "'\(Self.shown(text))' is \(count) bytes, but an Identity Resolving Key is 16 bytes: \(formats)"
            }
        }
    }
}

extension IdentityResolvingKey: CustomStringConvertible {
    /// Never the key itself (logs and errors must not leak it): its fingerprint.
    public var description: String { "IRK with fingerprint \(fingerprint.uuidString)" }
}

extension BluetoothAddress {
    /// A resolvable private address: a random address whose two most significant bits are 01.
    @inlinable
    public var isResolvablePrivate: Bool { rawValue >> 46 == 0b01 }
    /// The upper 24 bits: `prand`.
    @inlinable
    public var prand: UInt32 { UInt32(truncatingIfNeeded: rawValue >> 24) }
    /// The lower 24 bits: `hash`.
    @inlinable
    public var hash: UInt32 { UInt32(truncatingIfNeeded: rawValue & 0xFF_FFFF) }
}

/// Recognises private devices from their resolvable private addresses, cheaply per advertisement:
/// - a resolved address is remembered until its device is heard at another (a rotation), so each advertisement after
///   the first costs one hash lookup;
/// - an address no key resolves is remembered for `forgetUnresolvedAfter` (two generations of a set, swapped at each
///   period, so memory stays bounded by the addresses heard in two periods), so it costs one or two lookups too;
/// - only a new address costs one AES block per key.
public struct PrivateAddressResolver: Sendable {
    struct Entry: Sendable {
        /// The key's bytes (swift-crypto's `SymmetricKey` is not `Sendable` in the version used).
        var key: [UInt8]
        var fingerprint: UUID
    }

    var entries: [Entry] = []
    /// Declared identity addresses → index into `entries`.
    var identityAddresses: [UInt64: Int] = [:]
    /// Resolved address → index into `entries`; and each device's current address, to forget the old one at a rotation.
    var resolved: [UInt64: Int] = [:]
    var currentAddress: [Int: UInt64] = [:]
    var unresolved: Set<UInt64> = []
    var unresolvedBefore: Set<UInt64> = []
    var generationStart: Int64?
    public let forgetUnresolvedAfter: Duration
    /// The most unresolved addresses kept per generation (a flood of random addresses cannot grow memory past it).
    public static let unresolvedCapacity = 65_536

    /// AES blocks computed so far (for tests and the benchmark).
    public private(set) var aesBlocks = 0

    public init(keys: [IdentityResolvingKey] = [], forgetUnresolvedAfter: Duration = .seconds(60)) {
        self.forgetUnresolvedAfter = forgetUnresolvedAfter
        setKeys(keys)
    }

    public var isEmpty: Bool { entries.isEmpty }
    /// The keys in use, as given.
    public private(set) var keys: [IdentityResolvingKey] = []
    /// Unresolvable addresses remembered now (both generations).
    public var unresolvedCount: Int { unresolved.count + unresolvedBefore.count }
    public var keyCount: Int { entries.count }

    /// Replaces the keys (a reload, an app's declaration); what was remembered is forgotten, since a new key may
    /// resolve an address no key did before.
    public mutating func setKeys(_ keys: [IdentityResolvingKey]) {
        self.keys = keys
        var seen: Set<[UInt8]> = []
        let unique = keys.filter { seen.insert($0.bytes).inserted }
        entries = unique.map { Entry(key: $0.bytes, fingerprint: $0.fingerprint) }
        identityAddresses = [:]
        for (index, key) in unique.enumerated() {
            if let address = key.identityAddress { identityAddresses[address.rawValue] = index }
        }
        for key in keys {
            if let address = key.identityAddress, identityAddresses[address.rawValue] == nil,
                let index = unique.firstIndex(where: { $0.bytes == key.bytes })
            {
                identityAddresses[address.rawValue] = index
            }
        }
        resolved = [:]
        currentAddress = [:]
        unresolved = []
        unresolvedBefore = []
    }

    /// The fingerprint of the device whose key made `address` (a random address: `addressType` 1), or whose identity
    /// address it is (any type), or nil.
    public mutating func resolve(_ address: BluetoothAddress, addressType: UInt8 = 1, at time: Timestamp) -> UUID? {
        guard !entries.isEmpty else { return nil }
        let raw = address.rawValue
        if !identityAddresses.isEmpty, let index = identityAddresses[raw] { return entries[index].fingerprint }
        guard addressType == 1, address.isResolvablePrivate else { return nil }
        if let index = resolved[raw] { return entries[index].fingerprint }
        rotateGenerations(at: time.microsecondsSinceEpoch)
        if unresolved.contains(raw) || unresolvedBefore.contains(raw) { return nil }
        let prand = address.prand
        let hash = address.hash
        for (index, entry) in entries.enumerated() {
            aesBlocks += 1
            if IdentityResolvingKey.addressHash(prand: prand, key: SymmetricKey(data: entry.key)) == hash {
                if let old = currentAddress[index] { resolved[old] = nil }
                currentAddress[index] = raw
                resolved[raw] = index
                return entry.fingerprint
            }
        }
        if unresolved.count >= Self.unresolvedCapacity { unresolved.removeAll(keepingCapacity: true) }
        unresolved.insert(raw)
        return nil
    }

    private mutating func rotateGenerations(at now: Int64) {
        let period = forgetUnresolvedAfter.wholeMicroseconds
        guard let start = generationStart, now >= start else {
            generationStart = now
            return
        }
        if now - start >= 2 * period {
            unresolvedBefore = []
            unresolved = []
            generationStart = now
        } else if now - start >= period {
            unresolvedBefore = unresolved
            unresolved = []
            generationStart = now
        }
    }
}
