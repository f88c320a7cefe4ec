import BeaconKit
import BeacondAPI
import BeacondService
import BeacondCore
import DBus
import Foundation
import Testing

/// Region and constraint dictionaries as clients send them: strict about meaning, lenient about integer width.
@Suite("Region and beacon dictionaries")
struct BeaconDictionariesTests {
    let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"

    func region(_ entries: [String: DBusValue]) throws(BeacondError) -> BeaconRegion {
        try BeaconDictionaries.region(from: .vardict(entries))
    }

    @Test func readsAFullRegion() throws {
        let parsed = try region([
            "Identifier": .string("lobby"), "UUID": .string(uuid), "Major": .uint16(1),
            "Minor": .uint16(2), "NotifyOnEntry": .boolean(false),
        ])
        #expect(parsed.identifier == "lobby")
        #expect(parsed.constraint.uuid == UUID(uuidString: uuid))
        #expect(parsed.constraint.major == 1)
        #expect(parsed.constraint.minor == 2)
        #expect(!parsed.notifyOnEntry)
        #expect(parsed.notifyOnExit)
    }

    /// gdbus sends a bare number as int32; Python's dbus sends what it is told. Both mean the same major.
    @Test(arguments: [DBusValue.int32(7), .uint32(7), .int64(7), .byte(7), .int16(7), .uint64(7)])
    func acceptsAnyIntegerWidthInRange(_ major: DBusValue) throws {
        #expect(try region(["Identifier": .string("a"), "UUID": .string(uuid), "Major": major]).constraint.major == 7)
    }

    @Test func refusesWithTheFix() {
        func message(_ entries: [String: DBusValue]) -> (BeacondErrorName, String)? {
            do {
                _ = try region(entries)
                return nil
            } catch {
                return (error.name, error.message)
            }
        }
        let missingIdentifier = message(["UUID": .string(uuid)])
        #expect(missingIdentifier?.0 == .invalidRegion)
        #expect(missingIdentifier?.1.contains("Identifier") == true)
        #expect(message(["Identifier": .string("a"), "UUID": .string("nope")])?.1.contains("8-4-4-4-12") == true)
        #expect(message(["Identifier": .string("a")])?.1.contains("'UUID' is required") == true)
        #expect(message(["Identifier": .string("a"), "UUID": .string(uuid), "Major": .int32(70000)])?.1.contains("0...65535") == true)
        #expect(message(["Identifier": .string("a"), "UUID": .string(uuid), "Major": .int32(-1)])?.0 == .invalidRegion)
        #expect(message(["Identifier": .string("a"), "UUID": .string(uuid), "Major": .string("1")])?.1.contains("the string '1'") == true)
        #expect(
            message(["Identifier": .string("a"), "UUID": .string(uuid), "Colour": .string("red")])?.1.contains("unknown region key 'Colour'") == true)
        #expect(message(["Identifier": .string("  "), "UUID": .string(uuid)])?.0 == .invalidRegion)
        #expect(message(["Identifier": .string("a"), "UUID": .string(uuid), "NotifyOnExit": .int32(1)])?.1.contains("boolean") == true)
        // Minor without major is not a constraint Core Location allows.
        #expect(message(["Identifier": .string("a"), "UUID": .string(uuid), "Minor": .uint16(1)])?.0 == .invalidRegion)
    }

    func refusal(_ entries: [String: DBusValue]) -> BeacondError? {
        do {
            _ = try region(entries)
            return nil
        } catch {
            return error
        }
    }

    /// Control characters (C0, DEL, C1, so ESC too) cannot name a region: they would reach terminals and
    /// journals through every message that names it. The refusal does not echo them raw.
    @Test(arguments: ["lob\u{1B}[31mby", "a\u{7F}b", "a\u{85}b", "tab\there", "new\nline", "nul\u{0}x", "c1\u{9B}x"])
    func refusesControlCharactersInIdentifiers(_ identifier: String) throws {
        let error = try #require(refusal(["Identifier": .string(identifier), "UUID": .string(uuid)]))
        #expect(error.name == .invalidRegion)
        #expect(error.message.contains("'Identifier'"))
        #expect(error.message.contains("control character"))
        #expect(
            !error.message.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) },
            "the message echoes a control character: \(error.message.debugDescription)")
    }

    @Test func refusesAbsurdlyLongIdentifiersSayingTheLimit() throws {
        #expect(refusal(["Identifier": .string(String(repeating: "x", count: 256)), "UUID": .string(uuid)]) == nil)
        let error = try #require(refusal(["Identifier": .string(String(repeating: "x", count: 257)), "UUID": .string(uuid)]))
        #expect(error.message.contains("257 bytes"))
        #expect(error.message.contains("at most 256"))
        #expect(error.message.count < 400, "the message quotes the whole identifier: \(error.message.count)")
    }

    /// Every InvalidRegion message names the key, what was given (type and value) and what is allowed.
    @Test func invalidRegionMessagesSayKeyGivenAndAllowed() throws {
        let cases: [([String: DBusValue], [String])] = [
            (
                ["Identifier": .string("a"), "UUID": .string(uuid), "Major": .uint32(70000)],
                ["'Major'", "70000", "type u", "0...65535"]
            ),
            (
                ["Identifier": .string("a"), "UUID": .string(uuid), "Minor": .int32(-1), "Major": .uint16(1)],
                ["'Minor'", "-1", "type i", "0...65535"]
            ),
            (
                ["Identifier": .string("a"), "UUID": .string(uuid), "Major": .string("1")],
                ["'Major'", "the string '1'", "type s", "0...65535"]
            ),
            (
                ["Identifier": .uint32(7), "UUID": .string(uuid)],
                ["'Identifier'", "7", "type u", "must be a string"]
            ),
            (["UUID": .string(uuid)], ["'Identifier'", "missing", "string"]),
            (["Identifier": .string("  "), "UUID": .string(uuid)], ["'Identifier'", "'  '", "must not be empty"]),
            (["Identifier": .string("a"), "UUID": .int32(3)], ["'UUID'", "type i", "string like"]),
            (["Identifier": .string("a")], ["'UUID'", "missing", "string like"]),
            (["Identifier": .string("a"), "UUID": .string("nope\u{1B}")], ["'UUID'", "'nope\\u{1B}'", "8-4-4-4-12"]),
            (
                ["Identifier": .string("a"), "UUID": .string(uuid), "NotifyOnExit": .int32(1)],
                ["'NotifyOnExit'", "1", "type i", "boolean"]
            ),
            (
                ["Identifier": .string("a"), "UUID": .string(uuid), "Colour": .string("red")],
                ["'Colour'", "the string 'red'", "region keys are"]
            ),
            (["Identifier": .string("a"), "UUID": .string(uuid), "Minor": .uint16(1)], ["'Minor'", "'Major'"]),
        ]
        for (entries, words) in cases {
            guard let error = refusal(entries) else {
                Issue.record("\(entries) was accepted")
                continue
            }
            #expect(error.name == .invalidRegion, "\(entries): \(error)")
            for word in words {
                #expect(error.message.contains(word), "\(entries): \(error.message) lacks \(word)")
            }
        }
    }

    /// EnterRSSI and AbsentRSSI (dBm, both or neither): the region's own hysteresis, returned as given.
    @Test func readsAndWritesTheRegionsHysteresis() throws {
        let parsed = try region([
            "Identifier": .string("door"), "UUID": .string(uuid), "EnterRSSI": .int16(-60),
            "AbsentRSSI": .int32(-75),
        ])
        #expect(parsed.hysteresis == (try RSSIHysteresis(enterAtOrAbove: -60, absentBelow: -75)))
        let entries = try #require(BeaconDictionaries.dictionary(parsed).vardictEntries)
        #expect(entries["EnterRSSI"] == .int16(-60))
        #expect(entries["AbsentRSSI"] == .int16(-75))
        #expect(try BeaconDictionaries.region(from: .vardict(entries)) == parsed)
        let plain = try region(["Identifier": .string("door"), "UUID": .string(uuid)])
        #expect(plain.hysteresis == nil)
        #expect(BeaconDictionaries.dictionary(plain).vardictEntries?["EnterRSSI"] == nil)
        // Equal thresholds are one threshold without a band.
        #expect(
            try region([
                "Identifier": .string("a"), "UUID": .string(uuid), "EnterRSSI": .int16(-70),
                "AbsentRSSI": .int16(-70),
            ]).hysteresis?.absentBelow == -70)
    }

    @Test func refusesAHysteresisThatCannotWorkSayingWhy() throws {
        let cases: [([String: DBusValue], [String])] = [
            (["EnterRSSI": .int16(-60)], ["'EnterRSSI'", "'AbsentRSSI'", "both or neither"]),
            (["AbsentRSSI": .int16(-60)], ["'EnterRSSI'", "'AbsentRSSI'", "both or neither"]),
            (["EnterRSSI": .int16(-80), "AbsentRSSI": .int16(-60)], ["'EnterRSSI'", "-80", "-60", "at least"]),
            (["EnterRSSI": .int16(30), "AbsentRSSI": .int16(-60)], ["'EnterRSSI'", "30", "-127...20"]),
            (["EnterRSSI": .int16(-60), "AbsentRSSI": .int32(-200)], ["'AbsentRSSI'", "-200", "-127...20"]),
            (["EnterRSSI": .string("-60"), "AbsentRSSI": .int16(-70)], ["'EnterRSSI'", "the string '-60'", "dBm"]),
        ]
        for (extra, words) in cases {
            var entries: [String: DBusValue] = ["Identifier": .string("a"), "UUID": .string(uuid)]
            entries.merge(extra) { _, new in new }
            guard let error = refusal(entries) else {
                Issue.record("\(extra) was accepted")
                continue
            }
            #expect(error.name == .invalidRegion)
            for word in words { #expect(error.message.contains(word), "\(extra): \(error.message) lacks \(word)") }
        }
    }

    @Test func aConstraintHasNoIdentifier() throws {
        let constraint = try BeaconDictionaries.constraint(from: .vardict(["UUID": .string(uuid), "Major": .uint16(3)]))
        #expect(constraint.major == 3)
        #expect(throws: BeacondError.self) {
            try BeaconDictionaries.constraint(from: .vardict(["UUID": .string(uuid), "Identifier": .string("x")]))
        }
        #expect(throws: BeacondError.self) { try BeaconDictionaries.constraint(from: .string("not a dictionary")) }
    }

    /// What goes out reads back the same, with the API's exact types (q for major/minor, n for RSSI).
    @Test func writesTheAPITypes() throws {
        let original = BeaconRegion(
            identifier: "lobby",
            constraint: try BeaconIdentityConstraint(
                uuid: try #require(UUID(uuidString: uuid)), major: 1, minor: 2), notifyOnEntry: true, notifyOnExit: false)
        let written = BeaconDictionaries.dictionary(original)
        #expect(try BeaconDictionaries.region(from: written) == original)
        #expect(written.vardictEntries?["Major"] == .uint16(1))
        let beacon = RangedBeacon(
            identity: BeaconIdentity(uuid: try #require(UUID(uuidString: uuid)), major: 1, minor: 2),
            rssi: -60, accuracy: .infinity, proximity: .unknown, measuredPower: -59,
            timestamp: Timestamp(microsecondsSinceEpoch: 1_700_000_000_000_000))
        let entries = try #require(BeaconDictionaries.dictionary(beacon).vardictEntries)
        #expect(entries["RSSI"] == .int16(-60))
        #expect(entries["Accuracy"] == .double(-1))
        #expect(entries["Proximity"] == .string("unknown"))
        #expect(entries["TxPower"] == .int16(-59))
        #expect(entries["Timestamp"] == .uint64(1_700_000_000_000_000))
    }

    /// "an AltBeacon", "an Eddystone" (issue 39: "a AltBeacon", "a Eddystone").
    @Test func strayKeysNameTheKindWithItsArticle() {
        let cases: [([String: DBusValue], String)] = [
            (["Identifier": .string("r"), "Kind": .string("AltBeacon"), "Namespace": .string("x")], "does not name an AltBeacon"),
            (["Identifier": .string("r"), "Kind": .string("Eddystone"), "UUID": .string("x")], "does not name an Eddystone"),
            (["Identifier": .string("r"), "Namespace": .string("x")], "does not name an iBeacon"),
            (["Identifier": .string("r"), "Kind": .string("PrivateDevice"), "UUID": .string("x")], "does not name a PrivateDevice"),
        ]
        for (entries, expected) in cases {
            do {
                _ = try region(entries)
                Issue.record("accepted \(entries)")
            } catch {
                #expect(error.message.contains(expected), "\(error.message)")
            }
        }
    }
}
