#if canImport(Glibc)
    import Glibc
#endif
import DBus
import ArgumentParser
import BeaconKit
import BeaconctlKit
import BeacondAPI
import Foundation

/// `beaconctl calibrate`: fits each receiver's RSSI offset and path-loss exponent from reference beacons at known
/// distances, shows the fit, and writes calibration.toml on confirmation.
struct CalibrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calibrate",
        abstract: "Fit each receiver's RSSI offset and path-loss exponent from reference beacons at known distances.",
        // Generated, it is one line of 168 columns.
        usage: """
            beaconctl calibrate --reference <UUID:MAJOR:MINOR@ROOM=METRES> ...
                      [--seconds <seconds>] [--write] [--config-dir <config-dir>]
                      [--bus <system|session|ADDRESS>]
            """,
        discussion: """
            Receivers differ by 10-20 dB, and an offset alone is right at one distance only: beacond gives each \
            receiver an offset and a path-loss exponent. Place reference beacons at measured distances from a \
            receiver (two or more distances per receiver, e.g. 1 m and 4 m, in its room), name each with \
            --reference UUID:MAJOR:MINOR@ROOM=METRES (ROOM: the receiver, as beaconctl status lists it), and \
            leave them for --seconds while this command reads every receiver's readings \
            (org.beacond.Admin1.ListReceiverReadings, once a second). A reference of another kind is named in its \
            text form: altbeacon:ID1:ID2:ID3, eddystone:NAMESPACE:INSTANCE or device:NAME (a phone by the name \
            its key was declared under); only that kind's readings count for it.

            It then prints, per receiver, each reference's mean RSSI and the fit: rssi_offset, \
            path_loss_exponent, the residual (RMS dB between fit and readings) and the median distance error. \
            A receiver whose references are all within a factor 1.5 of one distance gets an offset with the \
            default exponent (2.7). \
            With --write, or after you answer y on a terminal, the fits are written to CONFIG_DIR/calibration.toml \
            (other receivers' sections and [beacons] are kept; CONFIG_DIR is the daemon's own unless --config-dir \
            says otherwise) and the daemon is told to reload (org.beacond.Admin1.Reload). Only readings made after \
            the command starts count. Needs [mqtt] in beacond.toml: rooms are receivers' rooms (without it, \
            calibrate fails at once, before collecting). No floor plan is needed.

            Example:
              UUID=E2C56DB5-DFFB-48D2-B060-D0F5A71096E0
              beaconctl calibrate --seconds 60 --write \\
                  --reference $UUID:9:1@kitchen=1 --reference $UUID:9:2@kitchen=4 \\
                  --reference $UUID:9:1@hall=6 \\
                  --reference eddystone:edd1ebeac04e5defa017:0123456789ab@hall=2

            \(AdminAccess.requirement)

            \(ExitStatus.helpText)
            """)

    @ParentCommand var root: BeaconctlCommand
    @OptionGroup var bus: BusOptions
    @Option(
        name: .customLong("reference"),
        help: ArgumentHelp(
            "A reference beacon and its distance from a receiver (repeatable); other kinds as "
                + "altbeacon:ID1:ID2:ID3, eddystone:NAMESPACE:INSTANCE or device:NAME.",
            valueName: "UUID:MAJOR:MINOR@ROOM=METRES"))
    var references: [String] = []
    @Option(help: "Seconds to collect readings (1 to 3600).") var seconds = 30
    @Flag(help: "Write calibration.toml and reload the daemon without asking.") var write = false
    @Option(help: "Where calibration.toml goes (default: the daemon's configuration directory, as GetStatus says).")
    var configDir: String?

    func validate() throws {
        guard !references.isEmpty else {
            throw ValidationError("give at least one --reference UUID:MAJOR:MINOR@ROOM=METRES (two distances per receiver fit its exponent)")
        }
        var parsed: [CalibrationReference] = []
        for text in references {
            do { parsed.append(try CalibrationReference(parsing: text)) } catch { throw ValidationError(error.description) }
        }
        if let twice = CalibrationSession.duplicate(in: parsed) {
            throw ValidationError(
                "\(twice.beacon) is given twice for \(twice.receiver): one reference beacon is at one distance "
                    + "from a receiver; use another beacon for another distance")
        }
        guard (1...3600).contains(seconds) else { throw ValidationError("--seconds must be 1 to 3600, got \(seconds)") }
    }

    func run() throws {
        Interruption.install()
        try Reporting.withDaemon(Self.busChoice(bus, parent: root.bus)) { client throws(BeaconctlError) in
            var parsed: [CalibrationReference] = []
            for text in references { if let reference = try? CalibrationReference(parsing: text) { parsed.append(reference) } }
            let status = try client.status()
            if let missing = CalibrationSession.missingFleet(status: status) {
                throw BeaconctlError(exitStatus: ExitStatus.failure, message: missing)
            }
            let directory = configDir ?? status.string(BeacondStatusKey.configDirectory) ?? "/etc/beacond"
            // Readings the daemon took before this command started say nothing of where the references are now.
            var session = CalibrationSession(references: parsed, since: UInt64(Date().timeIntervalSince1970 * 1_000_000))
            Reporting.printError("collecting readings for \(seconds) s (Ctrl-C stops early)...")
            // A reading each second, the first a second in: only readings made after the start count.
            for _ in 0..<seconds {
                usleep(1_000_000)
                session.add(try client.receiverReadings())
                if Interruption.shared.isInterrupted { break }
            }
            var good: [(receiver: String, fit: CalibrationFit)] = []
            var lines: [String] = []
            for (receiver, result) in session.fits() {
                lines.append("receiver \(receiver)")
                for (reference, sample, count) in session.samples(for: receiver) {
                    lines.append(
                        String(
                            format: "  %@ at %.1f m: mean RSSI %.1f dBm over %d reading(s), measured power %.0f",
                            "\(reference.beacon)", reference.distance, sample.rssi, count, sample.measuredPower))
                }
                for reference in parsed where reference.receiver == receiver && session.count(of: reference) == 0 {
                    lines.append("  \(reference.beacon) at \(reference.distance) m: not heard by \(receiver)")
                }
                switch result {
                case .success(let fit):
                    lines.append(
                        String(
                            format: "  fit: rssi_offset %+.2f dB, path_loss_exponent %.3f; residual %.1f dB, "
                                + "median distance error %.0f %%", fit.calibration.rssiOffset,
                            fit.calibration.pathLossExponent, fit.residual, fit.medianDistanceError * 100))
                    good.append((receiver, fit))
                case .failure(let error):
                    lines.append("  no fit: \(error)")
                }
            }
            Reporting.printLines(lines)
            guard !good.isEmpty else {
                throw BeaconctlError(
                    exitStatus: ExitStatus.failure,
                    message: "no receiver could be fitted: is each reference "
                        + "beacon advertising, and does the daemon have [mqtt] (beaconctl status)?")
            }
            guard write || confirm(directory) else {
                Reporting.printError("not written")
                return
            }
            let file = directory.hasSuffix("/") ? directory + "calibration.toml" : directory + "/calibration.toml"
            var existing: String?
            if FileManager.default.fileExists(atPath: file) {
                // A file that is there but unreadable must not be replaced by one without its other sections.
                do { existing = try String(contentsOfFile: file, encoding: .utf8) } catch {
                    throw BeaconctlError(
                        exitStatus: ExitStatus.failure,
                        message: "cannot read \(file) to update it: \(error); "
                            + "fix or move it, then calibrate again")
                }
            }
            let text = CalibrationSession.calibrationFile(
                existing: existing, fits: good,
                at: ISO8601DateFormatter().string(from: Date()))
            do {
                let temporary = file + ".beaconctl-new"
                try text.write(toFile: temporary, atomically: false, encoding: .utf8)
                guard rename(temporary, file) == 0 else { throw CocoaError(.fileWriteUnknown) }
            } catch {
                throw BeaconctlError(
                    exitStatus: ExitStatus.noPermission,
                    message: "cannot write \(file): \(error); "
                        + "run as root, or pass --config-dir with the daemon's configuration directory")
            }
            Reporting.printError("wrote \(file)")
            let problem = try client.reload()
            guard problem.isEmpty else {
                throw BeaconctlError(exitStatus: ExitStatus.failure, message: "the daemon kept its previous configuration: \(problem)")
            }
            Reporting.printError("beacond reloaded its configuration")
        }
    }

    /// Asks on a terminal; anything but y is no. Without a terminal, no (use --write).
    private func confirm(_ directory: String) -> Bool {
        guard isatty(STDIN_FILENO) == 1 else {
            Reporting.printError("not a terminal: pass --write to write calibration.toml")
            return false
        }
        FileHandle.standardError.write(Data("write these fits to \(directory)/calibration.toml and reload beacond? [y/N] ".utf8))
        return readLine()?.lowercased().hasPrefix("y") == true
    }
}
