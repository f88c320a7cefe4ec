import BeaconKit
import BeaconctlKit
import BeacondAPI
import DBus
import Foundation
import Testing

@Suite("beaconctl calibrate: references, readings and the file it writes")
struct CalibrationSessionTests {
    static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"

    func entry(_ minor: UInt16, _ receiver: String, rssi: Double, at time: UInt64) -> VarDict {
        [
            BeacondReadingKey.uuid: .string(Self.uuid), BeacondReadingKey.major: .uint16(9), BeacondReadingKey.minor: .uint16(minor),
            BeacondReadingKey.receiver: .string(receiver), BeacondReadingKey.rssi: .double(rssi),
            BeacondReadingKey.measuredPower: .int16(-59), BeacondReadingKey.timestamp: .uint64(time),
        ]
    }

    @Test("without [mqtt] there are no receivers to fit: refused at once, naming the daemon's beacond.toml")
    func withoutMQTTThereIsNothingToFit() throws {
        let off: VarDict = [BeacondStatusKey.mqttBroker: .string(""), BeacondStatusKey.configDirectory: .string("/srv/conf")]
        let message = try #require(CalibrationSession.missingFleet(status: off))
        #expect(message.contains("[mqtt]") && message.contains("/srv/conf/beacond.toml"), "\(message)")
        #expect(CalibrationSession.missingFleet(status: [:]) != nil, "a daemon that says nothing of MQTT has no receivers")
        let on: VarDict = [
            BeacondStatusKey.mqttBroker: .string("mqtt://127.0.0.1:1883"),
            BeacondStatusKey.mqttState: .string("connecting"),
        ]
        #expect(CalibrationSession.missingFleet(status: on) == nil)
    }

    @Test("a reference is one beacon, a receiver and metres; anything else says what is missing")
    func references() throws {
        let reference = try CalibrationReference(parsing: "\(Self.uuid):9:1@kitchen=1.5")
        #expect(reference.receiver == "kitchen" && reference.distance == 1.5 && reference.beacon.minor == 1)
        for (text, problem) in [
            ("\(Self.uuid):9:1@kitchen", "=METRES"), ("\(Self.uuid):9@kitchen=1", "UUID:MAJOR:MINOR"),
            ("eddystone:edd1ebeac04e5defa017@kitchen=1", "eddystone:NAMESPACE:INSTANCE"),
            ("altbeacon:\(Self.uuid):9@kitchen=1", "altbeacon:ID1:ID2:ID3"),
            ("\(Self.uuid):9:1=1", "@ROOM"), ("\(Self.uuid):9:1@kitchen=0", "0.1 to 100"),
            ("\(Self.uuid):9:1@Kitchen=1", "not a room"),
        ] {
            #expect(throws: CalibrationReferenceError.self) { try CalibrationReference(parsing: text) }
            do { _ = try CalibrationReference(parsing: text) } catch { #expect(error.description.contains(problem), "\(error)") }
        }
    }

    @Test("references of every kind take only their own kind's readings, a phone's by its device name")
    func referencesOfEveryKind() throws {
        let eddystone = try CalibrationReference(parsing: "eddystone:EDD1EBEAC04E5DEFA017:0123456789ab@kitchen=2")
        let phone = try CalibrationReference(parsing: "device:alice-phone@kitchen=3")
        let iBeacon = try CalibrationReference(parsing: "\(Self.uuid):9:1@kitchen=1")
        let altBeacon = try CalibrationReference(parsing: "altbeacon:\(Self.uuid):9:2@kitchen=4")
        #expect(eddystone.beacon.kind == .eddystone && phone.beacon.deviceName == "alice-phone")
        var session = CalibrationSession(references: [eddystone, phone, iBeacon, altBeacon])
        func reading(_ keys: VarDict, at time: UInt64) -> VarDict {
            keys.merging([
                BeacondReadingKey.receiver: .string("kitchen"), BeacondReadingKey.rssi: .double(-70),
                BeacondReadingKey.measuredPower: .int16(-59), BeacondReadingKey.timestamp: .uint64(time),
            ]) { $1 }
        }
        for time: UInt64 in [1, 2] {
            session.add([
                reading(
                    [
                        BeacondKey.kind: .string("Eddystone"), BeacondKey.namespace: .string("edd1ebeac04e5defa017"),
                        BeacondKey.instance: .string("0123456789ab"),
                    ], at: time),
                reading([BeacondKey.kind: .string("PrivateDevice"), BeacondKey.device: .string("alice-phone")], at: time),
                // An AltBeacon with the iBeacon reference's numbers, and an iBeacon with the AltBeacon's.
                reading(
                    [
                        BeacondKey.kind: .string("AltBeacon"), BeacondKey.uuid: .string(Self.uuid), BeacondKey.major: .uint16(9),
                        BeacondKey.minor: .uint16(1),
                    ], at: time),
                entry(2, "kitchen", rssi: -80, at: time),
            ])
        }
        #expect(session.count(of: eddystone) == 2 && session.count(of: phone) == 2)
        #expect(session.count(of: iBeacon) == 0, "an AltBeacon's reading is not the iBeacon's")
        #expect(session.count(of: altBeacon) == 0, "an iBeacon's reading is not the AltBeacon's")
    }

    @Test("each reading counts once, only by the reference's own receiver, and the fit comes from the means")
    func fits() throws {
        var session = CalibrationSession(references: [
            try CalibrationReference(parsing: "\(Self.uuid):9:1@kitchen=1"),
            try CalibrationReference(parsing: "\(Self.uuid):9:2@kitchen=4"),
        ])
        let far = -65 - 27 * log10(4.0)
        for second in 0..<3 {
            let time = UInt64(1_000_000 * second)
            // The same reading listed twice (polled twice before the next came) and the office's reading: not counted.
            session.add([
                entry(1, "kitchen", rssi: -64 - Double(second % 2) * 2, at: time), entry(2, "kitchen", rssi: far, at: time),
                entry(1, "office", rssi: -90, at: time),
            ])
            session.add([entry(1, "kitchen", rssi: -64 - Double(second % 2) * 2, at: time)])
        }
        #expect(session.count(of: session.references[0]) == 3)
        let fit = try #require(try? session.fits().first?.result.get())
        // Means: −64.667 dBm at 1 m (−64, −66, −64), `far` at 4 m.
        let near = (-64.0 - 66 - 64) / 3
        #expect(abs(fit.calibration.rssiOffset - (-59 - near)) < 1e-9)
        #expect(abs(fit.calibration.pathLossExponent - (near - far) / (10 * log10(4.0))) < 1e-9)
    }

    @Test("the written file replaces only the fitted receivers' sections and keeps the rest")
    func fileMerge() throws {
        let existing = """
            # mine
            [receivers.kitchen]
            rssi_offset = 1
            path_loss_exponent = 2

            [receivers.office]
            rssi_offset = -3

            [beacons]
            "\(Self.uuid):9:1" = -62
            """
        let fit = try CalibrationFit.fit([
            CalibrationSample(distance: 1, rssi: -65, measuredPower: -59),
            CalibrationSample(distance: 4, rssi: -65 - 27 * log10(4.0), measuredPower: -59),
        ])
        let text = CalibrationSession.calibrationFile(existing: existing, fits: [("kitchen", fit)], at: "2026-11-25T12:00:00Z")
        #expect(text.contains("# mine") && text.contains("[receivers.office]\nrssi_offset = -3"))
        #expect(text.contains("\"\(Self.uuid):9:1\" = -62"))
        #expect(!text.contains("rssi_offset = 1\n") && text.contains("rssi_offset = 6.00\npath_loss_exponent = 2.700"))
        #expect(text.components(separatedBy: "[receivers.kitchen]").count == 2)
    }
}
