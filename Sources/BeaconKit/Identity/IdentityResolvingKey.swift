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
    /// Whether the identity address is a static random one (`@random:ADDRESS`, BlueZ's `AddressType=static`) rather
    /// than public: it counts only for reports of its own address type, so another device cannot take it by sending
    /// from the same 48 bits of the other type.
    public var identityAddressIsRandom = false

    public init?(bytes: [UInt8], identityAddress: BluetoothAddress? = nil, identityAddressIsRandom: Bool = false) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
        self.identityAddress = identityAddress
        self.identityAddressIsRandom = identityAddressIsRandom
    }

    /// The formats keys come in, and the byte order each means:
    /// - `irk:` then 32 hex digits, or 32 hex digits alone: most significant byte first, as ESPresense's `irk:` ids and
    ///   Home Assistant's Private BLE Device integration take hex.
    /// - `bluez:` then 32 hex digits: as BlueZ stores it in `/var/lib/bluetooth/ADAPTER/DEVICE/info`
    ///   (`[IdentityResolvingKey] Key=`), least significant byte first, so the bytes are reversed.
    /// - base64 (24 characters ending `==`, optionally after `irk:`): as iOS/macOS keychains export it
    ///   ("Remote IRK") and Home Assistant takes it, least significant byte first, so reversed.
    /// Hex may have `:`, `-` or spaces between byte pairs and a `0x` prefix. Any of them may end in `@ADDRESS`, the
    /// device's public identity address (`5C:F3:70:12:34:56`), or `@random:ADDRESS`, a static random one.
    ///
    /// A refusal says what is wrong and where (counting characters of `text`), never the key (`Invalid`).
    public init(parsing text: String) throws(Invalid) {
        let characters = Array(text)
        var start = 0
        var end = characters.count
        func blank(_ character: Character) -> Bool { character.unicodeScalars.allSatisfy(CharacterSet.whitespaces.contains) }
        while start < end, blank(characters[start]) { start += 1 }
        while end > start, blank(characters[end - 1]) { end -= 1 }
        if let at = characters[start..<end].lastIndex(of: "@") {
            var written = String(characters[(at + 1)..<end])
            if written.lowercased().hasPrefix("random:") {
                identityAddressIsRandom = true
                written.removeFirst(7)
            }
            guard let address = BluetoothAddress(written) else {
                throw .malformed(
                    "what follows '@' is not a Bluetooth address: it is the device's identity address, like "
                        + "5C:F3:70:12:34:56 (public) or random:D5:F3:70:12:34:56 (static random)")
            }
            identityAddress = address
            end = at
        }
        let lowered = String(characters[start..<end]).lowercased()
        let bluez = lowered.hasPrefix("bluez:")
        if bluez {
            start += 6
        } else if lowered.hasPrefix("irk:") {
            start += 4
        }
        let body = characters[start..<end]
        if Self.looksLikeBase64(body) {
            guard !bluez else {
                throw .malformed("bluez: takes hex as BlueZ stores it (32 digits), not base64: write base64 without bluez:")
            }
            self.bytes = try Self.base64(body).reversed()
        } else {
            let bytes = try Self.hex(body)
            self.bytes = bluez ? bytes.reversed() : bytes
        }
    }

    /// BlueZ's `[IdentityResolvingKey] Key=` value as it stands in the info file (32 hex digits, least significant
    /// byte first); a refusal counts characters of `stored`.
    public init(bluezStoredKey stored: String, identityAddress: BluetoothAddress?, identityAddressIsRandom: Bool = false) throws(Invalid) {
        self.bytes = try Self.hex(ArraySlice(Array(stored))).reversed()
        self.identityAddress = identityAddress
        self.identityAddressIsRandom = identityAddressIsRandom
    }

    /// Base64 ends with `=` (a key's 16 bytes are 24 characters ending `==`); without it, text that is mostly not hex
    /// (a key one byte short is 20 characters, no `=`). One or two stray characters in hex are typos in hex.
    static func looksLikeBase64(_ body: ArraySlice<Character>) -> Bool {
        if body.last == "=" { return true }
        var digits = body[...]
        if digits.starts(with: ["0", "x"]) || digits.starts(with: ["0", "X"]) { digits = digits.dropFirst(2) }
        return digits.count(where: { !isHex($0) && !Self.separators.contains($0) }) > 4
    }

    static let separators: Set<Character> = [":", "-", " "]

    /// An ASCII hex digit (`Character.isHexDigit` takes fullwidth forms too, which `HexBytes` never did).
    static func isHex(_ character: Character) -> Bool { character.isASCII && character.isHexDigit }

    /// A character of base64's alphabet, or its padding.
    static func isBase64(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || "+/=".contains(character))
    }

    /// Hex digit pairs with an optional `0x` and separators between pairs, as `HexBytes.parse`; 16 bytes.
    static func hex(_ body: ArraySlice<Character>) throws(Invalid) -> [UInt8] {
        var digits = body[...]
        if digits.starts(with: ["0", "x"]) || digits.starts(with: ["0", "X"]) { digits = digits.dropFirst(2) }
        var bytes: [UInt8] = []
        var high: Int?
        var count = 0
        for index in digits.indices {
            let character = digits[index]
            if Self.separators.contains(character) {
                guard high == nil else {
                    throw .malformed(
                        "character \(index + 1) of the value splits a byte: ':', '-' or a space go between pairs of "
                            + "hex digits")
                }
                continue
            }
            guard isHex(character), let value = character.hexDigitValue else {
                throw .malformed("the key is hex, but character \(index + 1) of the value is not a hex digit (0-9, a-f)")
            }
            count += 1
            if let first = high {
                bytes.append(UInt8(first << 4 | value))
                high = nil
            } else {
                high = value
            }
        }
        guard count > 0 else { throw .malformed("the key is empty") }
        guard count % 2 == 0 else {
            throw .malformed("the key is \(count) hex digit\(count == 1 ? "" : "s"), an odd number: a byte is two digits, a key 32")
        }
        guard bytes.count == 16 else { throw .wrongLength("\(count) hex digits", bytes.count) }
        return bytes
    }

    /// Base64 as keychains export it; 16 bytes.
    static func base64(_ body: ArraySlice<Character>) throws(Invalid) -> [UInt8] {
        for index in body.indices {
            let character = body[index]
            guard isBase64(character) else {
                throw .malformed(
                    "the key is base64, but character \(index + 1) of the value is not a base64 character (A-Z, a-z, "
                        + "0-9, + and /, then = at the end)")
            }
        }
        guard let decoded = Data(base64Encoded: String(body)) else {
            throw .malformed(
                "the key is \(body.count) base64 characters, which do not decode: base64 comes in groups of 4 "
                    + "characters, '=' only at the end")
        }
        guard decoded.count == 16 else { throw .wrongLength("\(body.count) base64 characters", decoded.count) }
        return Array(decoded)
    }

    /// Whether `text` may hold key material (8 hex digits in a row, or 16 characters of base64 in a row): what a
    /// message must not repeat, say a device name that is really a key, or a parser's quote of a value.
    public static func mayHoldKey(_ text: some StringProtocol) -> Bool {
        var hexRun = 0
        var base64Run = 0
        for character in text {
            hexRun = isHex(character) ? hexRun + 1 : Self.separators.contains(character) ? hexRun : 0
            base64Run = isBase64(character) ? base64Run + 1 : 0
            if hexRun >= 8 || base64Run >= 16 { return true }
        }
        return false
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

    /// Why text is not a key, never the key: one quoted back a byte short, or with one wrong digit, falls to at most
    /// 256 guesses, and logs and admin events reach more people than the 0640 files holding keys.
    public enum Invalid: Error, Equatable, CustomStringConvertible {
        /// What is wrong and where (the position of a bad character in the value).
        case malformed(String)
        /// Hex or base64 of the wrong length: how it is written ("30 hex digits") and the bytes it makes.
        case wrongLength(String, Int)

        /// What is wrong, without the formats (BlueZ's bond store has other advice: pair again).
        public var problem: String {
            switch self {
            case .malformed(let why): why
            case .wrongLength(let written, let count):
                "the key is \(written) (\(count) bytes), but an Identity Resolving Key is 16 bytes"
            }
        }

        public var description: String {
            "\(problem): give 32 hex digits (most significant byte first, as ESPresense's irk: ids and Home Assistant "
                + "take them), bluez:HEX as BlueZ's bond store holds it, or the 24-character base64 a keychain exports"
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
    /// Declared identity addresses, each with the type it was declared with.
    var identityAddresses = IdentityAddresses()
    /// Resolved address → index into `entries`; and each device's current address, to forget the old one at a rotation.
    var resolved: [UInt64: Int] = [:]
    var currentAddress: [Int: UInt64] = [:]
    /// Random addresses no key made, remembered for a while so each costs its AES blocks once.
    var unresolved: UnresolvedAddresses
    public var forgetUnresolvedAfter: Duration { unresolved.forgetAfter }
    /// The most unresolved addresses kept per generation (a flood of random addresses cannot grow memory past it).
    public static var unresolvedCapacity: Int { UnresolvedAddresses.capacity }

    /// Declared identity addresses → index into `entries`, and which of them are static random (the rest are public).
    struct IdentityAddresses: Sendable {
        var indices: [UInt64: Int] = [:]
        var random: Set<UInt64> = []

        /// The entry whose identity address `raw` is, seen with `addressType` (HCI's: the low bit says random).
        func index(of raw: UInt64, addressType: UInt8) -> Int? {
            guard !indices.isEmpty, let index = indices[raw], (addressType & 1 == 1) == random.contains(raw) else { return nil }
            return index
        }
    }

    /// Unresolvable addresses in two generations of `forgetAfter` each: an address is remembered between one and
    /// two generations, so one that a new key could resolve is tried again, and memory stays bounded.
    struct UnresolvedAddresses: Sendable {
        static let capacity = 65_536
        let forgetAfter: Duration
        private var current: Set<UInt64> = []
        private var before: Set<UInt64> = []
        private var generationStart: Int64?

        init(forgetAfter: Duration) {
            self.forgetAfter = forgetAfter
        }

        var count: Int { current.count + before.count }

        func contains(_ raw: UInt64) -> Bool { current.contains(raw) || before.contains(raw) }

        mutating func insert(_ raw: UInt64) {
            if current.count >= Self.capacity { current.removeAll(keepingCapacity: true) }
            current.insert(raw)
        }

        mutating func removeAll() {
            current = []
            before = []
        }

        mutating func rotate(at now: Int64) {
            let period = forgetAfter.wholeMicroseconds
            guard let start = generationStart, now >= start else {
                generationStart = now
                return
            }
            if now - start >= 2 * period {
                before = []
                current = []
                generationStart = now
            } else if now - start >= period {
                before = current
                current = []
                generationStart = now
            }
        }
    }

    /// AES blocks computed so far (for tests and the benchmark).
    public private(set) var aesBlocks = 0

    public init(keys: [IdentityResolvingKey] = [], forgetUnresolvedAfter: Duration = .seconds(60)) {
        unresolved = UnresolvedAddresses(forgetAfter: forgetUnresolvedAfter)
        setKeys(keys)
    }

    public var isEmpty: Bool { entries.isEmpty }
    /// The keys in use, as given.
    public private(set) var keys: [IdentityResolvingKey] = []
    /// Unresolvable addresses remembered now (both generations).
    public var unresolvedCount: Int { unresolved.count }
    public var keyCount: Int { entries.count }

    /// Replaces the keys (a reload, an app's declaration); what was remembered is forgotten, since a new key may
    /// resolve an address no key did before.
    public mutating func setKeys(_ keys: [IdentityResolvingKey]) {
        self.keys = keys
        var seen: Set<[UInt8]> = []
        let unique = keys.filter { seen.insert($0.bytes).inserted }
        entries = unique.map { Entry(key: $0.bytes, fingerprint: $0.fingerprint) }
        identityAddresses = IdentityAddresses()
        for key in keys where key.identityAddressIsRandom {
            if let address = key.identityAddress { identityAddresses.random.insert(address.rawValue) }
        }
        for (index, key) in unique.enumerated() {
            if let address = key.identityAddress { identityAddresses.indices[address.rawValue] = index }
        }
        for key in keys {
            if let address = key.identityAddress, identityAddresses.indices[address.rawValue] == nil,
                let index = unique.firstIndex(where: { $0.bytes == key.bytes })
            {
                identityAddresses.indices[address.rawValue] = index
            }
        }
        resolved = [:]
        currentAddress = [:]
        unresolved.removeAll()
    }

    /// The fingerprint of the device whose key made `address` (a random address: `addressType` 1), or whose identity
    /// address it is (of the type it was declared with: public unless `@random:`), or nil.
    public mutating func resolve(_ address: BluetoothAddress, addressType: UInt8 = 1, at time: Timestamp) -> UUID? {
        guard !entries.isEmpty else { return nil }
        let raw = address.rawValue
        // HCI's address types: 0 public, 1 random, 2 public identity, 3 random (static) identity: the low bit says random.
        if let index = identityAddresses.index(of: raw, addressType: addressType) { return entries[index].fingerprint }
        guard addressType == 1, address.isResolvablePrivate else { return nil }
        if let index = resolved[raw] { return entries[index].fingerprint }
        unresolved.rotate(at: time.microsecondsSinceEpoch)
        if unresolved.contains(raw) { return nil }
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
        unresolved.insert(raw)
        return nil
    }
}
