import BeaconKit
import Fleet
import Foundation
import BeacondCore

/// Reads `calibration.toml` in the configuration directory (written by `beaconctl calibrate --write`, editable by
/// hand): `[receivers.<room>]` with `rssi_offset` (dB) and `path_loss_exponent`, and `[beacons]` with
/// `"UUID:MAJOR:MINOR" = <measured power, dBm at 1 m>` (or one beacon of another kind in its text form, a phone by
/// its devices.d name). An absent file means no calibration.
enum CalibrationParser {
    /// The file's name in the configuration directory.
    static let fileName = "calibration.toml"

    /// What a measured power may be, dBm at one metre (an iBeacon frame carries −128…127; real beacons −40…−100).
    static let measuredPowerRange = -127...20

    /// `brokenDeviceFiles`: the devices.d files that could not be read (their errors are reported too); a phone named
    /// here and not found may be declared in one of them, and the error says so instead of asking for a declaration.
    static func parse(
        _ document: TOMLDocument, into configuration: inout DaemonConfiguration, brokenDeviceFiles: [String] = []
    ) throws(ConfigurationError) {
        var root = document.rootReader
        var receivers = try root.tableOrEmpty("receivers")
        var calibrations: [String: ReceiverCalibration] = [:]
        for room in receivers.table.keys.sorted() {
            guard ReceiverDirectory.isRoom(room) else {
                throw receivers.error(
                    room, "[receivers.\(room)]: \"\(room)\" is not a room as receivers' topics name it",
                    fix: "use the receiver's room slug: a-z, 0-9, '_' and '-', e.g. [receivers.kitchen] "
                        + "(beaconctl status lists the receivers)")
            }
            guard var table = try receivers.table(room) else { continue }
            let offset = try table.number("rssi_offset", example: "6.0") ?? 0
            let exponent = try table.number("path_loss_exponent", example: "2.7") ?? ReceiverCalibration.uncalibrated.pathLossExponent
            do {
                calibrations[room] = try ReceiverCalibration(rssiOffset: offset, pathLossExponent: exponent)
            } catch {
                let key = ReceiverCalibration.offsetRange.contains(offset) ? "path_loss_exponent" : "rssi_offset"
                throw table.error(
                    key, "[receivers.\(room)] \(error)",
                    fix: "run beaconctl calibrate again, or write e.g. rssi_offset = 6.0 and path_loss_exponent = 2.7")
            }
            configuration.warnings += table.unknownKeyWarnings()
        }
        var beacons = try root.tableOrEmpty("beacons")
        var overrides: [BeaconIdentity: Int] = [:]
        for key in beacons.table.keys.sorted() {
            guard let constraint = try? BeaconIdentityConstraint(parsing: key), constraint.namesOneBeacon else {
                throw beacons.error(
                    key, "[beacons] \"\(key)\" is not one beacon",
                    fix: "write \"UUID:MAJOR:MINOR\" = measured power, e.g. "
                        + "\"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2\" = -62 (other kinds: \"altbeacon:ID1:ID2:ID3\", "
                        + "\"eddystone:NAMESPACE:INSTANCE\", \"device:NAME\" of devices.d)")
            }
            let identity: BeaconIdentity
            if constraint.kind == .privateDevice {
                // A phone by the administrator's name for its key (calibration.toml is the administrator's file).
                guard let name = constraint.deviceName, let key = configuration.deviceKey(name) else {
                    if !brokenDeviceFiles.isEmpty {
                        throw beacons.error(
                            key,
                            "[beacons] \"\(key)\": no device of that name could be read: "
                                + "\(brokenDeviceFiles.joined(separator: ", ")), "
                                + (brokenDeviceFiles.count == 1 ? "which has an error" : "which have errors")
                                + " (said with this one), may be where it is declared",
                            fix: "correct \(brokenDeviceFiles.joined(separator: " and ")), then reload")
                    }
                    let known = configuration.devices.keys.sorted()
                    throw beacons.error(
                        key,
                        "[beacons] \"\(key)\": no device of that name in devices.d"
                            + (known.isEmpty ? "" : " (it has: \(known.joined(separator: ", ")))"),
                        fix: "declare the phone's key in devices.d (beaconctl devices import, docs/devices.md), "
                            + "or correct the name")
                }
                identity = .privateDevice(fingerprint: key.fingerprint)
            } else {
                identity = BeaconIdentity(kind: constraint.kind, uuid: constraint.uuid, major: constraint.major ?? 0, minor: constraint.minor ?? 0)
            }
            guard let power = try beacons.integer(key, in: measuredPowerRange) else { continue }
            overrides[identity] = power
        }
        configuration.calibrations = calibrations
        configuration.measuredPowerOverrides = overrides
        configuration.warnings += root.unknownKeyWarnings(knownName: "known sections")
    }
}
