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
            beaconctl calibrate --tag <BEACON> --at <X,Y[@FLOOR]> ...
                      [--seconds <seconds>] [--write] [--config-dir <config-dir>]
            beaconctl calibrate --receivers
                      [--seconds <seconds>] [--write] [--config-dir <config-dir>]
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

            With a floor plan (floorplan.toml), stand at known spots instead: --tag names the beacon you carry, \
            each --at X,Y (metres on the plan; X,Y@FLOOR on a plan of several floors) a spot. For each spot in \
            turn, stand there with the tag (on a terminal the command waits for Enter; without one, several spots \
            need --unattended, and the tag is moved when it prints "spot N of M") \
            for --seconds (10 is enough; with 4 or more, the first 2 s at a spot are not counted, while receivers' \
            smoothing forgets the way there); every receiver of the plan that hears the tag gets a sample at the \
            distance the plan gives (org.beacond.Admin1.GetFloorPlan). Two or three spots a room, in different \
            rooms, fit each receiver's exponent as well as its offset; one spot fits the offset alone.

            With a floor plan and ESPresense nodes, no walk is needed: --receivers takes what the receivers hear \
            of each other for --seconds (ESPresense nodes advertise themselves and report each other as device \
            node:ID; org.beacond.Admin1.ListReceiverHearings) against the distances between them on the plan. \
            Each receiver gets its own offset, and all share one exponent fitted from every pair (a handful of \
            distances per receiver cannot fit one each through the noise). Give it 60 s: a \
            node reports another every few seconds. The receivers are high on walls and ceilings, the tag is not: \
            spots (--at) fit what a carried tag meets, and win where they disagree.

            Example:
              UUID=E2C56DB5-DFFB-48D2-B060-D0F5A71096E0
              beaconctl calibrate --seconds 60 --write \\
                  --reference $UUID:9:1@kitchen=1 --reference $UUID:9:2@kitchen=4 \\
                  --reference $UUID:9:1@hall=6 \\
                  --reference eddystone:edd1ebeac04e5defa017:0123456789ab@hall=2
              beaconctl calibrate --tag $UUID:1:2 --seconds 10 \\
                  --at 1,1 --at 3.5,2 --at 7,5.5 --at 8.5,1
              beaconctl calibrate --receivers --seconds 60 --write

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
    @Option(help: ArgumentHelp("The beacon you carry to the spots of --at.", valueName: "beacon"))
    var tag: String?
    @Option(
        name: .customLong("at"),
        help: ArgumentHelp("A spot on the floor plan where you stand with --tag (repeatable), metres.", valueName: "X,Y[@FLOOR]"))
    var spots: [String] = []
    @Flag(help: "Calibrate the floor plan's receivers from what they hear of each other (ESPresense nodes' node: readings).")
    var receivers = false
    @Option(help: "Seconds to collect readings (1 to 3600; with --at, at each spot).") var seconds = 30
    @Flag(help: "With --at and no terminal: move from spot to spot on a schedule (a script moves the tag at each 'spot N of M').")
    var unattended = false
    @Flag(help: "Write calibration.toml and reload the daemon without asking.") var write = false
    @Option(help: "Where calibration.toml goes (default: the daemon's configuration directory, as GetStatus says).")
    var configDir: String?

    func validate() throws {
        if receivers {
            guard references.isEmpty, tag == nil, spots.isEmpty, !unattended else {
                throw ValidationError("give --receivers alone: it takes no --reference, --tag, --at or --unattended")
            }
            guard (1...3600).contains(seconds) else { throw ValidationError("--seconds must be 1 to 3600, got \(seconds)") }
            return
        }
        if !spots.isEmpty || tag != nil {
            guard references.isEmpty else { throw ValidationError("give either --reference or --tag with --at, not both") }
            guard let tag, (try? BeaconIdentityConstraint(parsing: tag))?.namesOneBeacon == true else {
                throw ValidationError("--tag names the one beacon you carry, e.g. --tag E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2")
            }
            guard !spots.isEmpty else { throw ValidationError("give at least one --at X,Y: a spot on the floor plan where you stand with the tag") }
            for spot in spots {
                do { _ = try CalibrationSpot(parsing: spot) } catch { throw ValidationError(error.description) }
            }
            guard (1...3600).contains(seconds) else { throw ValidationError("--seconds must be 1 to 3600, got \(seconds)") }
            return
        }
        guard !references.isEmpty else {
            throw ValidationError(
                "give at least one --reference UUID:MAJOR:MINOR@ROOM=METRES (two distances per receiver fit its exponent), "
                    + "--tag BEACON with --at X,Y spots of the floor plan, or --receivers")
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
            if receivers {
                let (good, lines) = try collectFromReceivers(client)
                try finish(client, good: good, lines: lines, directory: directory)
                return
            }
            if let tag, let constraint = try? BeaconIdentityConstraint(parsing: tag) {
                let (good, lines) = try collectAtSpots(client, tag: constraint)
                try finish(client, good: good, lines: lines, directory: directory)
                return
            }
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
            guard !good.isEmpty else {
                Reporting.printLines(lines)
                throw BeaconctlError(
                    exitStatus: ExitStatus.failure,
                    message: "no receiver could be fitted: is each reference "
                        + "beacon advertising, and does the daemon have [mqtt] (beaconctl status)?")
            }
            try finish(client, good: good, lines: lines, directory: directory)
        }
    }

    /// Shows the fits, and with --write (or a yes) writes them to calibration.toml and has the daemon reload.
    private func finish(
        _ client: DaemonClient, good: [(receiver: String, fit: CalibrationFit)], lines: [String], directory: String
    ) throws(BeaconctlError) {
        Reporting.printLines(lines)
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

    /// --tag and --at: the tag's readings at each spot in turn, every plan receiver fitted against the plan's distances.
    private func collectAtSpots(
        _ client: DaemonClient, tag: BeaconIdentityConstraint
    ) throws(BeaconctlError) -> (good: [(receiver: String, fit: CalibrationFit)], lines: [String]) {
        var parsed: [CalibrationSpot] = []
        for text in spots { if let spot = try? CalibrationSpot(parsing: text) { parsed.append(spot) } }
        let terminal = isatty(STDIN_FILENO) == 1
        // Without a terminal nobody presses Enter at the next spot: every spot would be measured where the tag stood
        // first, and the fit written.
        guard terminal || parsed.count == 1 || unattended else {
            throw BeaconctlError(
                exitStatus: ExitStatus.usage,
                message: "\(parsed.count) spots and no terminal to say when the tag is at each: run it on a terminal, "
                    + "give one --at per run, or pass --unattended and move the tag when it prints 'spot N of M'")
        }
        var session = try SpotCalibration(tag: tag, spots: parsed, plan: try client.floorPlan())
        for (index, spot) in session.spots.enumerated() {
            if terminal {
                FileHandle.standardError.write(Data("stand at \(spot) with \(tag), then press Enter ".utf8))
                _ = readLine()
            }
            Reporting.printError("spot \(index + 1) of \(session.spots.count), \(spot): collecting readings for \(seconds) s...")
            // Readings of the first seconds at a spot are not counted: receivers smooth (ESPresense over seconds),
            // so they still remember the way there.
            let settle: UInt64 = seconds >= 4 ? 2_000_000 : 0
            let since = UInt64(Date().timeIntervalSince1970 * 1_000_000) + settle
            for _ in 0..<seconds {
                usleep(1_000_000)
                session.add(try client.receiverReadings(), spot: index, since: since)
                if Interruption.shared.isInterrupted { break }
            }
            if Interruption.shared.isInterrupted { break }
            Reporting.printError("spot \(index + 1): \(session.count(at: index)) reading(s) of \(tag)")
        }
        var good: [(receiver: String, fit: CalibrationFit)] = []
        var lines: [String] = []
        for (receiver, result) in session.fits() {
            lines.append("receiver \(receiver)")
            guard let placed = session.receivers.first(where: { $0.id == receiver }) else { continue }
            for (spot, sample, count) in session.samples(for: placed) {
                lines.append(
                    String(
                        format: "  at %@, %.1f m away: mean RSSI %.1f dBm over %d reading(s), measured power %.0f", spot.description,
                        sample.distance, sample.rssi, count, sample.measuredPower))
            }
            if let fit = Self.describe(result, of: placed, into: &lines) { good.append((receiver, fit)) }
        }
        guard !good.isEmpty else {
            Reporting.printLines(lines)
            let heard = session.spots.indices.contains { session.count(at: $0) > 0 }
            throw BeaconctlError(
                exitStatus: ExitStatus.failure,
                message: heard
                    ? "no receiver's readings gave a fit a receiver can have (above): check each spot's X,Y on the plan, and "
                        + "that the tag stood at each spot for the whole collection"
                    : "no receiver could be fitted: no plan receiver heard \(tag) at the spots. Is it advertising, "
                        + "and do the plan's receiver ids match the receivers' (beaconctl status)?")
        }
        return (good, lines)
    }

    /// --receivers: what the plan's receivers hear of each other, each fitted against the plan's distances.
    private func collectFromReceivers(
        _ client: DaemonClient
    ) throws(BeaconctlError) -> (good: [(receiver: String, fit: CalibrationFit)], lines: [String]) {
        var mesh = try ReceiverMeshCalibration(plan: try client.floorPlan())
        let since = UInt64(Date().timeIntervalSince1970 * 1_000_000)
        Reporting.printError("collecting what the \(mesh.receivers.count) plan receivers hear of each other for \(seconds) s (Ctrl-C stops early)...")
        for _ in 0..<seconds {
            usleep(1_000_000)
            mesh.add(try client.receiverHearings(), since: since)
            if Interruption.shared.isInterrupted { break }
        }
        var good: [(receiver: String, fit: CalibrationFit)] = []
        var lines: [String] = []
        for (receiver, result) in mesh.fits() {
            lines.append("receiver \(receiver)")
            guard let placed = mesh.receivers.first(where: { $0.id == receiver }) else { continue }
            for (heard, sample, count) in mesh.samples(for: placed) {
                lines.append(
                    String(
                        format: "  hears %@, %.1f m away: mean RSSI %.1f dBm over %d reading(s), measured power %.0f", heard,
                        sample.distance, sample.rssi, count, sample.measuredPower))
            }
            if let fit = Self.describe(result, of: placed, into: &lines) { good.append((receiver, fit)) }
        }
        if !mesh.offPlan.isEmpty {
            lines.append(
                "not on the floor plan, so not counted: \(mesh.offPlan.sorted().joined(separator: ", ")) "
                    + "(add each as [receivers.ID] with the id it publishes under)")
        }
        guard !good.isEmpty else {
            Reporting.printLines(lines)
            throw BeaconctlError(
                exitStatus: ExitStatus.failure,
                message: mesh.count > 0
                    ? "no receiver's readings gave a fit a receiver can have (above): check each receiver's x, y, z in floorplan.toml"
                    : "no plan receiver heard another: ESPresense nodes report each other as device node:ID once they have "
                        + "announced themselves (their discovery on espresense/settings); are they online, and do the plan's "
                        + "receiver ids match their rooms (beaconctl status)?")
        }
        return (good, lines)
    }

    /// A plan receiver's fit as lines (with a note when the plan's own calibration wins), and the fit if there is one.
    private static func describe(
        _ result: Result<CalibrationFit, CalibrationError>, of receiver: SpotCalibration.PlanReceiver, into lines: inout [String]
    ) -> CalibrationFit? {
        switch result {
        case .success(let fit):
            lines.append(
                String(
                    format: "  fit: rssi_offset %+.2f dB, path_loss_exponent %.3f; residual %.1f dB, median distance error %.0f %%",
                    fit.calibration.rssiOffset, fit.calibration.pathLossExponent, fit.residual, fit.medianDistanceError * 100))
            if receiver.calibratedInPlan {
                lines.append(
                    "  note: floorplan.toml calibrates \(receiver.id) itself, which wins: remove its rssi_offset and path_loss_exponent there")
            }
            return fit
        case .failure(let error):
            lines.append("  no fit: \(error)")
            return nil
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
