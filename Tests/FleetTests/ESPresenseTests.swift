import BeaconKit
import Fleet
import Foundation
import Testing

@Suite("ESPresense conventions")
struct ESPresenseTests {
    let identity = BeaconIdentity(uuid: UUID(uuidString: "E5CA1ADE-F007-BA11-0000-000000000000")!, major: 100, minor: 1)

    @Test func deviceIDsAreFormedAsESPresenseFormsThem() {
        // The firmware's own example form: lowercase UUID with dashes, decimal major and minor, no padding.
        #expect(ESPresense.deviceID(identity) == "iBeacon:e5ca1ade-f007-ba11-0000-000000000000-100-1")
        let edges = BeaconIdentity(uuid: identity.uuid, major: 0, minor: 65535)
        #expect(ESPresense.deviceID(edges) == "iBeacon:e5ca1ade-f007-ba11-0000-000000000000-0-65535")
    }

    @Test func deviceIDsParseBackInAnyCaseAndOtherIDsAreNotBeacons() {
        #expect(ESPresense.identity(fromDeviceID: "iBeacon:e5ca1ade-f007-ba11-0000-000000000000-100-1") == identity)
        #expect(ESPresense.identity(fromDeviceID: "IBEACON:E5CA1ADE-F007-BA11-0000-000000000000-100-1") == identity)
        for other in [
            "mac:c1d2e3f4a5b6", "iBeacon:",
            "iBeacon:e5ca1ade-f007-ba11-0000-000000000000-100", "iBeacon:e5ca1ade-f007-ba11-0000-000000000000-100-65536",
            "iBeacon:nope-f007-ba11-0000-000000000000-100-1", "iBeacon:e5ca1ade-f007-ba11-0000-000000000000--1-1",
            "iBeacon:e5ca1ade-f007-ba11-0000-000000000000-0100-1",
        ] {
            #expect(ESPresense.identity(fromDeviceID: other) == nil, "\(other)")
        }
        // An AltBeacon id is an AltBeacon, never the iBeacon with the same numbers.
        let alt = ESPresense.identity(fromDeviceID: "altBeacon:e5ca1ade-f007-ba11-0000-000000000000-100-1")
        #expect(alt?.kind == .altBeacon && alt != identity)
    }

    @Test func roomNamesAreSluggedAsTheFirmwareDoes() {
        #expect(ESPresense.roomSlug("Living Room") == "living_room")
        #expect(ESPresense.roomSlug("  Küche / Nord!! ") == "k_che_nord")
        #expect(ESPresense.roomSlug("office_2") == "office_2")
        #expect(ESPresense.roomSlug("__a--b__") == "a_b")
        #expect(ESPresense.roomSlug("+/#") == "")
    }

    @Test func topicsAreReadByTheirShape() {
        #expect(ESPresense.topic("espresense/devices/iBeacon:x-1-2/kitchen") == .device(id: "iBeacon:x-1-2", room: "kitchen"))
        #expect(ESPresense.topic("espresense/rooms/kitchen/status") == .roomStatus(room: "kitchen"))
        #expect(ESPresense.topic("espresense/rooms/kitchen/telemetry") == .other)
        #expect(ESPresense.topic("espresense/devices/iBeacon:x-1-2/kitchen/battery") == .other)
        #expect(ESPresense.topic("espresense/devices//kitchen") == .other)
        #expect(ESPresense.deviceTopic(deviceID: "iBeacon:x-1-2", room: "hall") == "espresense/devices/iBeacon:x-1-2/hall")
        #expect(ESPresense.statusTopic(room: "hall") == "espresense/rooms/hall/status")
    }

    @Test func readingsAreWrittenInESPresensesKeyOrderWithTwoDecimals() {
        let reading = ESPresenseReading(
            id: ESPresense.deviceID(identity), mac: ESPresenseReading.mac(BluetoothAddress(rawValue: 0x0C1D2E3F4A5B)),
            rssiAtOneMetre: -59, rssi: -65.5, receiverAdjustment: 0, distance: 1.4, interval: 1020)
        #expect(
            reading.json
                == #"{"mac":"0c1d2e3f4a5b","id":"iBeacon:e5ca1ade-f007-ba11-0000-000000000000-100-1","#
                + #""rssi@1m":-59,"rssi":-65.50,"rxAdj":0,"distance":1.40,"int":1020}"#
        )
        #expect(ESPresenseReading(id: "a", distance: -0.004).json == #"{"id":"a","distance":0.00}"#)
        #expect(ESPresenseReading(id: "a", rssi: -0.5, distance: 12.345).json == #"{"id":"a","rssi":-0.50,"distance":12.35}"#)
        #expect(ESPresenseReading(id: "a\"\u{1B}", distance: .nan).json == #"{"id":"a\"\u001b"}"#)
    }

    @Test func aWrittenReadingReadsBackAsItself() throws {
        let reading = ESPresenseReading(
            id: ESPresense.deviceID(identity), mac: "0c1d2e3f4a5b", rssiAtOneMetre: -59, rssi: -65.5,
            receiverAdjustment: -3, distance: 1.4, interval: 1020, name: "tag")
        #expect(try ESPresenseReading(json: Array(reading.json.utf8)) == reading)
    }

    @Test func readingsFromRealESPresenseFirmwareAreRead() throws {
        // v4 firmware (fill(): bare numbers with two decimals, var, rssiVar) and v3 (idType, raw, no rxAdj).
        let v4 =
            #"{"mac":"c1d2e3f4a5b6","id":"iBeacon:e5ca1ade-f007-ba11-0000-000000000000-100-1","#
            + #""rssi@1m":-59,"rssi":-65.50,"rxAdj":0,"rssiVar":1.20,"distance":1.41,"var":0.05,"int":1020}"#
        let reading = try ESPresenseReading(json: Array(v4.utf8))
        #expect(reading.distance == 1.41 && reading.rssi == -65.5 && reading.rssiAtOneMetre == -59 && reading.interval == 1020)
        let v3 =
            #"{"id":"iBeacon:e5ca1ade-f007-ba11-0000-000000000000-100-1","idType":180,"#
            + #""rssi@1m":-59,"rssi":-70,"raw":2.51,"distance":2.2,"speed":0.01,"mac":"c1d2e3f4a5b6","interval":1000}"#
        #expect(try ESPresenseReading(json: Array(v3.utf8)).distance == 2.2)
    }

    @Test func badPayloadsSayWhatIsWrong() {
        let cases: [(String, ESPresenseReading.Invalid)] = [
            ("not json", .notJSON),
            ("", .notJSON),
            ("[1,2]", .notAnObject),
            ("42", .notAnObject),
            (#"{"distance":1}"#, .missing("id")),
            (#"{"id":"x"}"#, .missing("distance")),
            (#"{"id":7,"distance":1}"#, .wrongType("id")),
            (#"{"id":"","distance":1}"#, .wrongType("id")),
            (#"{"id":"x","distance":"far"}"#, .wrongType("distance")),
            (#"{"id":"x","distance":true}"#, .wrongType("distance")),
            (#"{"id":"x","distance":1,"rssi@1m":1e300}"#, .wrongType("rssi@1m")),
        ]
        for (payload, expected) in cases {
            #expect(throws: expected, "\(payload)") { try ESPresenseReading(json: Array(payload.utf8)) }
        }
    }
}
