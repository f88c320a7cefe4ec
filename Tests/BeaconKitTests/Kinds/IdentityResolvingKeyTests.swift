import BeaconKit
import Foundation
import TestKit
import Testing

@Suite("Identity Resolving Keys and private addresses")
struct IdentityResolvingKeyTests {
    /// Bluetooth Core Specification, Vol 3 Part H, Appendix D.7 (the `ah` function's sample data).
    static let specificationKey = "ec0234a357c8ad05341010a60a397d9b"
    static let specificationPrand: UInt32 = 0x708194
    static let specificationHash: UInt32 = 0x0dfbaa

    @Test func addressHashIsTheSpecificationsSample() throws {
        let key = try IdentityResolvingKey(parsing: Self.specificationKey)
        #expect(key.addressHash(prand: Self.specificationPrand) == Self.specificationHash)
        // prand ‖ hash, most significant first: the address the sample makes.
        let address = try #require(BluetoothAddress("70:81:94:0D:FB:AA"))
        #expect(address.isResolvablePrivate)
        #expect(key.resolves(address))
        #expect(!key.resolves(try #require(BluetoothAddress("70:81:94:0D:FB:AB"))))
        // The same bits with 11 on top: a static random address, never resolved.
        #expect(!key.resolves(try #require(BluetoothAddress("F0:81:94:0D:FB:AA"))))
    }

    @Test func everyFormatMeansItsByteOrder() throws {
        let expected = try IdentityResolvingKey(parsing: Self.specificationKey)
        let forms = [
            "irk:ec0234a357c8ad05341010a60a397d9b", // ESPresense's id, most significant first
            "EC0234A357C8AD05341010A60A397D9B", // Home Assistant's hex
            "0xec0234a357c8ad05341010a60a397d9b",
            "ec:02:34:a3:57:c8:ad:05:34:10:10:a6:0a:39:7d:9b",
            "bluez:9B7D390AA610103405ADC857A33402EC", // BlueZ's info file: least significant first
            "m305CqYQEDQFrchXozQC7A==", // a keychain's base64: least significant first
            "irk:m305CqYQEDQFrchXozQC7A==",
        ]
        for form in forms {
            #expect(try IdentityResolvingKey(parsing: form) == expected, "\(form)")
        }
        #expect(expected.espresenseID == "irk:ec0234a357c8ad05341010a60a397d9b")
    }

    @Test func aKeyThatIsNot16BytesIsRefusedWithTheFix() {
        for (text, written, count) in [
            ("ec0234a357c8ad05341010a60a397d", "30 hex digits", 15), ("AAAAAAAAAAAAAAAAAAAAAAAAAAAA", "28 hex digits", 14),
            ("AAAAAAAAAAAAAAAAAAAAAAAAAAA=", "28 base64 characters", 20),
        ] {
            do {
                _ = try IdentityResolvingKey(parsing: text)
                Issue.record("\(text) was accepted")
            } catch {
                #expect(error == .wrongLength(written, count))
                #expect(error.description.contains("is \(written) (\(count) bytes), but an Identity Resolving Key is 16 bytes"))
                #expect(error.description.contains("bluez:HEX"))
            }
        }
        #expect(throws: IdentityResolvingKey.Invalid.self) { try IdentityResolvingKey(parsing: "not a key") }
        #expect(throws: IdentityResolvingKey.Invalid.self) { try IdentityResolvingKey(parsing: "bluez:m305CqYQEDQFrchXozQC7A==") }
        #expect(throws: IdentityResolvingKey.Invalid.self) { try IdentityResolvingKey(parsing: "") }
    }

    /// A key one byte short or with one wrong digit quoted back gives away 30 of its 32 digits: the rest falls to 256
    /// guesses. Every refusal says what is wrong (length, the position of a bad character, the format expected) and
    /// never the key: no 8 characters in a row of it, in either byte order, hex or base64.
    @Test(arguments: [
        ("irk:ec0234a357c8ad05341010a60a397d", "30 hex digits (15 bytes)"),
        ("irk:ec0234a357c8ad05341010a60a397d9b42", "34 hex digits (17 bytes)"),
        ("irk:ec0234a3g7c8ad05341010a60a397d9b", "character 13 of the value is not a hex digit"),
        ("irk:ec0234a357c8ad05341010a60a397d9", "31 hex digits"),
        ("ec0234a357c8ad05341010a60a397d", "30 hex digits (15 bytes)"),
        ("EC0234A357C8AD05341010A60A397D9B9B", "34 hex digits (17 bytes)"),
        ("EC023OA357C8AD05341010A60A397D9B", "character 6 of the value is not a hex digit"),
        ("ec:02:34:a3:57:c8:ad:05:34:10:10:a6:0a:39:7d", "30 hex digits (15 bytes)"),
        ("ec:02:34:a3:57:c8:a:d05:34:10:10:a6:0a:39:7d:9b", "character 20 of the value splits a byte"),
        ("0xec0234a357c8ad05341010a60a397d", "30 hex digits (15 bytes)"),
        ("bluez:9B7D390AA610103405ADC857A33402", "30 hex digits (15 bytes)"),
        ("bluez:9B7D390AA610103405ADC857A33402EC00", "34 hex digits (17 bytes)"),
        ("bluez:9B7D390AA610103405AGC857A33402EC", "character 26 of the value is not a hex digit"),
        ("bluez:9B7D390AA610103405ADC857A33402@5C:F3:70:12:34:56", "30 hex digits (15 bytes)"),
        ("m305CqYQEDQFrchXozQC", "20 base64 characters (15 bytes)"),
        ("m305CqYQEDQFrchXozQC7EI=", "24 base64 characters (17 bytes)"),
        ("m305CqYQ!DQFrchXozQC7A==", "character 9 of the value is not a base64 character"),
        ("irk:m305CqYQEDQFrchXozQC", "20 base64 characters (15 bytes)"),
        ("m305CqYQEDQFrchXozQC7A=", "23 base64 characters"),
        ("bluez:m305CqYQEDQFrchXozQC7A==", "bluez: takes hex"),
    ])
    func aRejectedKeyIsNeverQuotedBack(_ text: String, _ said: String) {
        let secrets = KeyLeaks.forms(
            ofHex: Self.specificationKey, base64: ["m305CqYQEDQFrchXozQC7A==", "7AI0o1fIrQU0EBCmCjl9mw=="])
        var written = String(text.split(separator: "@")[0])
        for prefix in ["irk:", "bluez:"] where written.hasPrefix(prefix) { written.removeFirst(prefix.count) }
        do {
            _ = try IdentityResolvingKey(parsing: text)
            Issue.record("\(text) was accepted")
        } catch {
            let message = error.description
            #expect(KeyLeaks.repeated(in: message, of: secrets + [written]) == nil, "\(text): \(message)")
            #expect(message.contains(said), "\(text): \(message)")
            #expect(message.contains("bluez:HEX"), "the formats are listed: \(message)")
        }
    }

    @Test func theFingerprintNamesTheKeyWithoutRevealingIt() throws {
        let key = try IdentityResolvingKey(parsing: Self.specificationKey)
        let other = try IdentityResolvingKey(parsing: "00112233445566778899aabbccddeeff")
        #expect(key.fingerprint == (try IdentityResolvingKey(parsing: "bluez:9B7D390AA610103405ADC857A33402EC")).fingerprint)
        #expect(key.fingerprint != other.fingerprint)
        #expect(!key.fingerprint.byteArray.elementsEqual(key.bytes))
        #expect(!"\(key)".lowercased().contains("ec0234a3"))
    }

    /// A resolvable private address `key` makes from `random` (22 random bits).
    static func address(_ key: IdentityResolvingKey, random: UInt32) -> BluetoothAddress {
        let prand = 0x40_0000 | (random & 0x3F_FFFF)
        return BluetoothAddress(rawValue: UInt64(prand) << 24 | UInt64(key.addressHash(prand: prand)))
    }

    @Test func resolverCachesResolvedAndUnresolvedAddresses() throws {
        let keys = try (0..<5).map { try IdentityResolvingKey(parsing: String(repeating: "0\($0)", count: 16)) }
        var resolver = PrivateAddressResolver(keys: keys, forgetUnresolvedAfter: .seconds(60))
        let now = Timestamp(secondsSinceEpoch: 1_000)
        let phone = Self.address(keys[3], random: 0x1234)
        #expect(resolver.resolve(phone, at: now) == keys[3].fingerprint)
        let firstCost = resolver.aesBlocks
        #expect(firstCost == 4)
        for _ in 0..<100 { #expect(resolver.resolve(phone, at: now) == keys[3].fingerprint) }
        #expect(resolver.aesBlocks == firstCost, "a resolved address costs no AES")
        let stranger = Self.address(try IdentityResolvingKey(parsing: String(repeating: "ff", count: 16)), random: 7)
        #expect(resolver.resolve(stranger, at: now) == nil)
        #expect(resolver.aesBlocks == firstCost + 5)
        for second in 0..<100 { #expect(resolver.resolve(stranger, at: now + .seconds(Double(second))) == nil) }
        #expect(resolver.aesBlocks == firstCost + 5, "an unresolvable address is remembered for a while")
        // After two periods it is forgotten and tried again.
        #expect(resolver.resolve(stranger, at: now + .seconds(300)) == nil)
        #expect(resolver.aesBlocks == firstCost + 10)
        // Public and static random addresses cost nothing.
        #expect(resolver.resolve(BluetoothAddress(rawValue: 0xC0FF_EE00_0001), at: now) == nil)
        #expect(resolver.aesBlocks == firstCost + 10)
    }

    @Test func aRotationForgetsTheOldAddress() throws {
        let key = try IdentityResolvingKey(parsing: Self.specificationKey)
        var resolver = PrivateAddressResolver(keys: [key])
        let now = Timestamp(secondsSinceEpoch: 1_000)
        let first = Self.address(key, random: 1), second = Self.address(key, random: 2)
        #expect(resolver.resolve(first, at: now) == key.fingerprint)
        #expect(resolver.resolve(second, at: now) == key.fingerprint)
        let cost = resolver.aesBlocks
        // The old address is resolved afresh (one AES block), not served from a cache that grows with every rotation.
        #expect(resolver.resolve(first, at: now) == key.fingerprint)
        #expect(resolver.aesBlocks == cost + 1)
    }

    @Test func aDeclaredIdentityAddressIsTheDeviceToo() throws {
        // A host the phone is paired with resolves its addresses itself; bluetoothd then reports the identity address.
        let key = try IdentityResolvingKey(parsing: "bluez:9B7D390AA610103405ADC857A33402EC@5C:F3:70:12:34:56")
        #expect(key.bytes == (try IdentityResolvingKey(parsing: Self.specificationKey)).bytes)
        var resolver = PrivateAddressResolver(keys: [key])
        let now = Timestamp(secondsSinceEpoch: 1_000)
        #expect(resolver.resolve(try #require(BluetoothAddress("5C:F3:70:12:34:56")), addressType: 0, at: now) == key.fingerprint)
        #expect(resolver.resolve(try #require(BluetoothAddress("5C:F3:70:12:34:57")), addressType: 0, at: now) == nil)
        #expect(resolver.resolve(Self.address(key, random: 3), at: now) == key.fingerprint)
        #expect(throws: IdentityResolvingKey.Invalid.self) { try IdentityResolvingKey(parsing: "irk:\(Self.specificationKey)@nowhere") }
    }

    @Test func newKeysForgetWhatWasUnresolved() throws {
        let key = try IdentityResolvingKey(parsing: Self.specificationKey)
        var resolver = PrivateAddressResolver(keys: [try IdentityResolvingKey(parsing: String(repeating: "11", count: 16))])
        let now = Timestamp(secondsSinceEpoch: 1_000)
        let phone = Self.address(key, random: 99)
        #expect(resolver.resolve(phone, at: now) == nil)
        resolver.setKeys([key])
        #expect(resolver.resolve(phone, at: now) == key.fingerprint)
    }

    @Test func aFloodOfRandomAddressesStaysBounded() throws {
        let key = try IdentityResolvingKey(parsing: Self.specificationKey)
        var resolver = PrivateAddressResolver(keys: [key])
        var generator = SplitMix64(state: 26)
        let now = Timestamp(secondsSinceEpoch: 1_000)
        for _ in 0..<(PrivateAddressResolver.unresolvedCapacity + 10) {
            let random = BluetoothAddress(rawValue: 0x4000_0000_0000 | (generator.next() & 0x3FFF_FFFF_FFFF))
            _ = resolver.resolve(random, at: now)
        }
        #expect(resolver.unresolvedCount <= PrivateAddressResolver.unresolvedCapacity)
    }
}
