import BeaconKit
import BeacondService
import BeacondCore
import Foundation
import Testing

@Suite("beacond.toml [rooms] and adaptive exits; calibration.toml")
struct RoomSettingsTests {
    @Test("rooms, adaptive exits and calibration are read")
    func everyKey() throws {
        let directory = try ConfigurationDirectory()
        try directory.write(
            """
            [monitoring]
            exit_timeout = 180
            exit_timeout_min = 2.5
            exit_chance = 0.0001

            [rooms]
            margin = 0.4
            dwell = 10
            smoothing = 1.5
            """, to: "beacond.toml")
        try directory.write(
            """
            # written by beaconctl calibrate
            [receivers.kitchen]
            rssi_offset = 6.5
            path_loss_exponent = 3.1

            [receivers.hall]
            rssi_offset = -4

            [beacons]
            "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2" = -62
            """, to: "calibration.toml")
        let configuration = try directory.load()
        #expect(configuration.rooms == (try RoomConfiguration(margin: 0.4, dwell: .seconds(10), smoothing: .milliseconds(1500))))
        #expect(configuration.exitTimeoutMinimum == .milliseconds(2500))
        #expect(configuration.exitChance == 0.0001)
        #expect(try configuration.monitoringConfiguration().adaptiveExit == (try AdaptiveExit(minimum: .milliseconds(2500), chance: 0.0001)))
        #expect(configuration.calibrations["kitchen"] == (try ReceiverCalibration(rssiOffset: 6.5, pathLossExponent: 3.1)))
        #expect(configuration.calibrations["hall"] == (try ReceiverCalibration(rssiOffset: -4, pathLossExponent: 2.7)))
        let beacon = BeaconIdentity(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: 1, minor: 2)
        #expect(configuration.measuredPowerOverrides == [beacon: -62])
        #expect(configuration.warnings.isEmpty)
    }

    @Test("[beacons] names one beacon of any kind; a phone by its devices.d name, resolved to its key")
    func measuredPowerOfEveryKind() throws {
        let directory = try ConfigurationDirectory()
        let key = "0c1d2e3f405162738495a6b7c8d9eafb"
        try directory.write("[devices]\nhall-phone = \"irk:\(key)\"\n", to: "devices.d/phones.toml")
        try directory.write(
            """
            [beacons]
            "altbeacon:E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2" = -60
            "eddystone:edd1ebeac04e5defa017:0123456789ab" = -61
            "device:hall-phone" = -50
            """, to: "calibration.toml")
        let overrides = try directory.load().measuredPowerOverrides
        let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
        let eddystone = BeaconIdentity.eddystone(
            namespace: EddystoneNamespace(hex: "edd1ebeac04e5defa017")!, instance: EddystoneInstance(hex: "0123456789ab")!)
        let phone = BeaconIdentity.privateDevice(fingerprint: try IdentityResolvingKey(parsing: key).fingerprint)
        #expect(overrides == [BeaconIdentity(kind: .altBeacon, uuid: uuid, major: 1, minor: 2): -60, eddystone: -61, phone: -50])
        #expect(overrides[BeaconIdentity(uuid: uuid, major: 1, minor: 2)] == nil, "the AltBeacon's power is not the iBeacon's")
    }

    @Test("exit_timeout_min 0 (the default) keeps fixed exits; an exit_chance then is a warning at its line")
    func adaptiveOff() throws {
        let directory = try ConfigurationDirectory()
        try directory.write("[monitoring]\nexit_timeout_min = 0\n", to: "beacond.toml")
        #expect(try directory.load().monitoringConfiguration().adaptiveExit == nil)
        try directory.write("[monitoring]\nexit_chance = 0.01\n", to: "beacond.toml")
        let warnings = try directory.load().warnings
        #expect(warnings.count == 1 && warnings.first?.line == 2 && "\(warnings[0])".contains("set exit_timeout_min"))
    }

    @Test(
        "a value that cannot work names the file, the line and the fix",
        arguments: [
            ("beacond.toml", "[rooms]\nmargin = 1.5\n", 2, "margin = 0.3"),
            ("beacond.toml", "[rooms]\n\ndwell = -1\n", 3, "dwell = 6"),
            ("beacond.toml", "[rooms]\nsmoothing = 900\n", 2, "smoothing = 4"),
            ("beacond.toml", "[rooms]\nsmoothing = -0.5\n", 2, "0 to 600 seconds"),
            ("beacond.toml", "[monitoring]\nexit_timeout_min = 60\n", 2, "exit_timeout = 180"),
            ("beacond.toml", "[monitoring]\nexit_chance = 2\n", 2, "exit_chance = 0.001"),
            ("calibration.toml", "[receivers.kitchen]\npath_loss_exponent = 9\n", 2, "path_loss_exponent = 2.7"),
            ("calibration.toml", "[receivers.kitchen]\nrssi_offset = 80\n", 2, "rssi_offset = 6.0"),
            ("calibration.toml", "[receivers.\"Living Room\"]\nrssi_offset = 1\n", 1, "[receivers.kitchen]"),
            ("calibration.toml", "[beacons]\n\"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1\" = -60\n", 2, "UUID:MAJOR:MINOR"),
            ("calibration.toml", "[beacons]\n\"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2\" = -300\n", 2, "-127"),
            ("calibration.toml", "[beacons]\n\"eddystone:edd1ebeac04e5defa017\" = -60\n", 2, "eddystone:NAMESPACE:INSTANCE"),
            ("calibration.toml", "[beacons]\n\"device:nobodys-phone\" = -60\n", 2, "beaconctl devices import"),
        ])
    func refused(file: String, text: String, line: Int, fix: String) throws {
        let directory = try ConfigurationDirectory()
        try directory.write(text, to: file)
        let error = try #require(directory.loadError())
        #expect(error.file.hasSuffix("/" + file))
        #expect(error.line == line)
        #expect("\(error)".contains(fix), "\(error)")
    }
}
