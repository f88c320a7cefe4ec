import DBus
import TestKit
import Testing

/// Values through real libdbus messages and the wire format, both ways.
@Suite("D-Bus marshalling")
struct DBusMarshallingTests {
    static func roundTrip(_ values: [DBusValue]) throws -> [DBusValue] {
        let message = try DBusMessage.signal(
            path: "/org/beacond/client/1", interface: "org.beacond.LocationManager1",
            member: "DidRangeBeacons")
        try message.append(values)
        #expect(message.signature == values.map(\.signature).joined())
        // Through the wire format, as the bus carries it.
        return try DBusMessage.demarshal(try message.marshal()).arguments()
    }

    static let region = DBusValue.vardict([
        "Identifier": .string("lobby"),
        "UUID": .string("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"),
        "Major": .uint16(1),
        "Minor": .uint16(65535),
        "NotifyOnEntry": .boolean(true),
        "NotifyOnExit": .boolean(false),
    ])

    @Test func everyBasicTypeRoundTrips() throws {
        let values: [DBusValue] = [
            .byte(0xFF), .boolean(true), .boolean(false), .int16(-32768), .uint16(65535),
            .int32(.min), .uint32(.max), .int64(.min), .uint64(.max), .double(-1.5), .double(0.089),
            .string(""), .string("Grüße, 🛰"), .objectPath("/org/beacond/client/42"), .signature("a{sv}"),
        ]
        #expect(try Self.roundTrip(values) == values)
    }

    /// The API's shapes: a{sv} regions, aa{sv} beacon lists, variants holding containers.
    @Test func apiShapesRoundTrip() throws {
        let beacons = DBusValue.array(elementSignature: "a{sv}", [Self.region, .vardict(["RSSI": .int16(-61), "Accuracy": .double(-1)])])
        let values: [DBusValue] = [
            beacons,
            Self.region,
            .array(elementSignature: "a{sv}", []),
            .dictionary(keySignature: "s", valueSignature: "v", []),
            .variant(.array(elementSignature: "s", [.string("a"), .string("b")])),
            .variant(.variant(.uint64(7))),
            .structure([.string("x"), .array(elementSignature: "y", [.byte(1), .byte(2)])]),
            .dictionary(
                keySignature: "u", valueSignature: "as",
                [DBusDictionaryEntry(key: .uint32(1), value: .array(elementSignature: "s", [.string("z")]))]),
        ]
        let back = try Self.roundTrip(values)
        #expect(back == values)
        #expect(back[1].vardictEntries?["Minor"] == .uint16(65535))
        #expect(back[1].signature == "a{sv}")
        #expect(beacons.signature == "aa{sv}")
    }

    @Test func invalidValuesAreErrorsNotAborts() throws {
        let message = try DBusMessage.signal(path: "/t", interface: "org.example.T", member: "M")
        let bad: [(DBusValue, DBusMarshallingError)] = [
            (.string("a\u{0}b"), .stringContainsNUL),
            (.objectPath("not/a/path"), .invalidObjectPath("not/a/path")),
            (.objectPath("/trailing/"), .invalidObjectPath("/trailing/")),
            (.signature("a{"), .invalidSignature("a{")),
            (.array(elementSignature: "s", [.int32(1)]), .elementTypeMismatch(expected: "s", found: "i")),
            (.array(elementSignature: "zz", []), .invalidSignature("zz")),
            (.dictionary(keySignature: "v", valueSignature: "s", []), .nonBasicDictionaryKey("v")),
            (
                .dictionary(keySignature: "s", valueSignature: "v", [DBusDictionaryEntry(key: .string("k"), value: .string("not a variant"))]),
                .elementTypeMismatch(expected: "v", found: "s")
            ),
            (.structure([]), .invalidSignature("()")),
        ]
        for (value, expected) in bad {
            #expect(throws: expected) { try message.append([value]) }
        }
        var deep = DBusValue.int32(1)
        for _ in 0..<40 { deep = .variant(deep) }
        #expect(throws: DBusMarshallingError.nestingTooDeep(limit: 32)) { try message.append([deep]) }
    }

    @Test func invalidNamesAreRefusedBeforeLibdbusSeesThem() {
        #expect(throws: DBusMarshallingError.self) { try DBusMessage.signal(path: "bad", interface: "org.x.Y", member: "M") }
        #expect(throws: DBusMarshallingError.self) { try DBusMessage.signal(path: "/ok", interface: "nodots", member: "M") }
        #expect(throws: DBusMarshallingError.self) { try DBusMessage.signal(path: "/ok", interface: "org.x.Y", member: "has.dot") }
        #expect(throws: DBusMarshallingError.self) {
            try DBusMessage.methodCall(destination: "-bad", path: "/ok", interface: nil, member: "M")
        }
    }

    /// Arbitrary bytes from the bus are libdbus's to validate; a bad message is an error, never a crash.
    @Test func garbageBytesNeverCrashDemarshal() throws {
        let message = try DBusMessage.signal(path: "/org/beacond", interface: "org.beacond.Admin1", member: "Event")
        try message.append([.string("DidEnterRegion"), Self.region])
        let valid = try message.marshal()
        var generator = SplitMix64(state: 7)
        var accepted = 0
        for round in 0..<3_000 {
            var bytes = valid
            for _ in 0..<(1 + round % 4) {
                let index = Int(generator.next() % UInt64(bytes.count))
                bytes[index] = UInt8(truncatingIfNeeded: generator.next())
            }
            if round % 7 == 0 { bytes.removeLast(Int(generator.next() % UInt64(bytes.count))) }
            if let parsed = try? DBusMessage.demarshal(bytes) {
                accepted += 1
                _ = try? parsed.arguments()
            }
        }
        #expect(throws: DBusMarshallingError.self) { try DBusMessage.demarshal([]) }
        #expect(throws: DBusMarshallingError.self) { try DBusMessage.demarshal(Array("not a message".utf8)) }
        #expect(try DBusMessage.demarshal(valid).arguments() == [.string("DidEnterRegion"), Self.region])
        #expect(accepted > 0 && accepted < 3_000) // some mutations pass validation, some are refused
    }
}
