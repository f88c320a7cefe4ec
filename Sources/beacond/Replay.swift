import ArgumentParser
import BeaconKit
import Captures
import Foundation

/// `beacond replay`: capture files through the daemon's decoding → ranging → monitoring path.
struct Replay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Decode beacons from capture files and run ranging and monitoring on them.",
        discussion: """
            Reads each PATH (- for standard input) as it arrives, in blocks, in constant memory whatever its \
            size; its format is told from its content:
              btsnoop       datalink 1001 (HCI), 1002 (H4, Android's HCI snoop
                            log) or 2001 (Linux monitor: btmon -w)
              pcap, pcapng  link type 201 (BLUETOOTH_HCI_H4_WITH_PHDR) or 256
                            (BLUETOOTH_LE_LL_WITH_PHDR)
              text          one H4 HCI event per line in hex ("04 3e ..."); '#'
                            comment lines and anything after a tab are ignored;
                            each line advances the clock by --line-interval

            Every LE Advertising Report and LE Extended Advertising Report is decoded; iBeacon, AltBeacon and \
            Eddystone-UID frames become observations (Eddystone-TLM's battery and temperature join the beacon of \
            the same address), and so do advertisements from the resolvable private addresses of the phones \
            --device names. Malformed records are skipped and counted (see --stats); a file that is not a capture \
            is an error naming the file and why.

            Without --monitor or --range it prints one line per beacon observation. With them it also runs the \
            engine on the capture's own clock and prints region events (didStartMonitoring, didDetermineState, \
            didEnterRegion, didExitRegion) and, about once a second of capture time, the ranged beacons nearest \
            first (smoothed RSSI, estimated distance in metres, proximity).

            Output with --json is one JSON object per line. Observations have exactly these keys (rssi is null \
            when the controller reported 127, "not available"):
              {"time": "2021-02-01T03:27:59.789349Z" | null,
               "address": "A4:C1:38:BF:6F:AB",
               "uuid": "494E5445-4C4C-495F-524F-434B535F4857",
               "major": 20594, "minor": 62207, "txPower": -62, "rssi": -49 | null}
            Other kinds add "kind" ("AltBeacon": uuid, major and minor are id1, id2, id3; "Eddystone": \
            "namespace" and "instance" instead; "PrivateDevice": "device", its --device name). \
            Region and ranging events are objects with an "event" key; --stats adds a final {"stats": {...}} \
            object.

            From a pipe or FIFO each record is printed as soon as it is read, so a live capture can be watched \
            (btmon prints its decoded text to standard output too: give it bash's >(...) or a FIFO, not \
            /dev/stdout):
              btmon -w >(beacond replay --json -) >/dev/null
              tail -c +1 -f capture.btsnoop | beacond replay -
            PATHs are read in order; one that turns out not to be a capture ends the replay there, after what \
            was read before it is printed.

            Exit status: 0 success, 64 usage error, 66 a PATH could not be read or is not a capture.

            Example:
              beacond replay --monitor 494E5445-4C4C-495F-524F-434B535F4857:20594 \\
                  --range 494E5445-4C4C-495F-524F-434B535F4857 \\
                  --exit-timeout 5 --drain capture.log
            """)

    enum Speed: String, ExpressibleByArgument, CaseIterable {
        case realtime, max
    }

    @Flag(help: "One JSON object per line instead of a table.")
    var json = false

    @Flag(
        help: ArgumentHelp(
            "Print counts (records, HCI events, reports, iBeacons, malformed) and throughput.",
            discussion: "Without --json only the statistics are printed (and the events of --monitor and "
                + "--range); with --json they follow the observations as a final object."))
    var stats = false

    @Option(help: "realtime: wait between records as the capture did; max: as fast as possible.")
    var speed: Speed = .max

    @Option(
        name: .customLong("monitor"),
        help: ArgumentHelp(
            "Monitor a beacon region (repeatable); @ROOM: inside only while its beacon is in that room (needs --room).",
            discussion: "Any kind: UUID[:MAJOR[:MINOR]] (iBeacon), altbeacon:ID1[:ID2[:ID3]], "
                + "eddystone:NAMESPACE[:INSTANCE] (20 and 12 hex digits), device:NAME (a phone whose key --device gives).",
            valueName: "REGION[@ROOM]"))
    var monitored: [String] = []

    @Option(
        name: .customLong("device"),
        help: ArgumentHelp(
            "A private device's Identity Resolving Key (repeatable): its resolvable private addresses are it.",
            discussion: "KEY as docs/devices.md lists: irk:HEX or 32 hex digits (most significant byte first), "
                + "bluez:HEX (BlueZ's bond store), or a keychain's base64.",
            valueName: "NAME=KEY"))
    var deviceKeys: [String] = []

    @Option(
        help: ArgumentHelp(
            "The room the capture's receiver was in: its beacons are placed there (for --monitor ...@ROOM).",
            valueName: "room"))
    var room: String?

    @Option(
        help: ArgumentHelp(
            "Adaptive exits: each beacon exits after a silence learned from its own rhythm, at least this "
                + "long and at most --exit-timeout (0: off).", valueName: "seconds"))
    var exitTimeoutMin: Double = 0

    @Option(
        help: ArgumentHelp(
            "With --exit-timeout-min: the chance per hour that a present beacon is wrongly exited.",
            valueName: "probability"))
    var exitChance: Double = 1e-3

    @Option(
        name: .customLong("range"),
        help: ArgumentHelp(
            "Range beacons matching this constraint (repeatable), of any kind as --monitor takes it.", valueName: "CONSTRAINT"))
    var ranged: [String] = []

    @Option(help: ArgumentHelp("Seconds without a sighting before a region is exited.", valueName: "seconds"))
    var exitTimeout: Double = 30

    // Unconditional: a level is negative, and `-70` must not be taken for an option.
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "RSSI hysteresis of the monitored regions, with --absent-rssi: a sighting at or above "
                + "this level can enter a region.", valueName: "dBm"))
    var enterRSSI: Int?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "With --enter-rssi: a sighting below this level does not count; between the two it "
                + "keeps an inside region inside.", valueName: "dBm"))
    var absentRSSI: Int?

    @Option(help: ArgumentHelp("Seconds of engine time each line of a text capture stands for.", valueName: "seconds"))
    var lineInterval: Double = 0.1

    @Flag(help: "After the last record, run the engine's clock on until every pending exit has happened.")
    var drain = false

    @Argument(help: ArgumentHelp("Capture files, FIFOs, or - for standard input.", valueName: "PATH"))
    var paths: [String]

    /// The longest `--line-interval`: a day per line is already far beyond any real capture.
    static let longestLineInterval = 86_400.0

    func validate() throws {
        guard paths.filter({ $0 == "-" }).count <= 1 else {
            throw ValidationError("standard input (-) can be read once; give - at most once")
        }
        // Durations are built here, so out-of-range values are usage errors (64), not traps.
        do {
            _ = try MonitoringConfiguration(exitTimeout: try Self.duration(exitTimeout, name: "--exit-timeout"))
        } catch let error as ValidationError {
            throw error
        } catch {
            throw ValidationError("--exit-timeout: \(error)")
        }
        _ = try hysteresis()
        guard lineInterval >= 0, lineInterval <= Self.longestLineInterval else {
            throw ValidationError("--line-interval must be 0 to \(Int(Self.longestLineInterval)) seconds, got \(lineInterval)")
        }
        for text in ranged {
            do { _ = try BeaconIdentityConstraint(parsing: text) } catch {
                throw ValidationError("\(error)")
            }
        }
        let devices = try self.devices()
        for text in monitored {
            let spec: RegionSpec
            do { spec = try RegionSpec(parsing: text) } catch { throw ValidationError("\(error)") }
            if spec.room != nil, room == nil {
                throw ValidationError("--monitor \(text) names a room: give --room ROOM, the room the capture was recorded in")
            }
            try checkDevice(spec.constraint, devices, option: "--monitor \(text)")
        }
        for text in ranged {
            try checkDevice(try BeaconIdentityConstraint(parsing: text), devices, option: "--range \(text)")
        }
        if let room, !RegionSpec.isRoom(room) {
            throw ValidationError("--room '\(room)' is not a room: a-z, 0-9, '_' and '-', at most 64 bytes, e.g. --room kitchen")
        }
        _ = try adaptiveExit()
    }

    /// `--device NAME=KEY`s by name. A refusal never repeats the key, nor a name that may be one (swapped with it).
    func devices() throws -> [String: IdentityResolvingKey] {
        var devices: [String: IdentityResolvingKey] = [:]
        for (index, text) in deviceKeys.enumerated() {
            let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, BeaconIdentityConstraint.isDeviceName(parts[0]) else {
                throw ValidationError(
                    "--device (number \(index + 1)) takes NAME=KEY: a name of a-z, 0-9, '_' and '-', then '=' and its "
                        + "key, e.g. --device alice-phone=irk:ec0234a357c8ad05341010a60a397d9b")
            }
            let name = IdentityResolvingKey.mayHoldKey(parts[0]) ? "(number \(index + 1), NAME=KEY)" : parts[0]
            guard devices[parts[0]] == nil else { throw ValidationError("--device \(name) is given twice") }
            do { devices[parts[0]] = try IdentityResolvingKey(parsing: parts[1]) } catch {
                throw ValidationError("--device \(name): \(error)")
            }
        }
        return devices
    }

    func checkDevice(_ constraint: BeaconIdentityConstraint, _ devices: [String: IdentityResolvingKey], option: String) throws {
        guard constraint.kind == .privateDevice, let name = constraint.deviceName, devices[name] == nil else { return }
        throw ValidationError("\(option) names device \(name): give its key with --device \(name)=KEY (docs/devices.md)")
    }

    /// `--exit-timeout-min` and `--exit-chance`: nil when the minimum is 0.
    func adaptiveExit() throws -> AdaptiveExit? {
        guard exitChance.isFinite, AdaptiveExit.chanceRange.contains(exitChance) else {
            throw ValidationError("--exit-chance must be a probability from 1e-12 to 0.5, got \(exitChance)")
        }
        guard exitTimeoutMin.isFinite, exitTimeoutMin >= 0 else {
            throw ValidationError("--exit-timeout-min must be 0 (off) or at least 0.1 seconds, got \(exitTimeoutMin)")
        }
        guard exitTimeoutMin != 0 else { return nil }
        guard exitTimeoutMin <= exitTimeout else {
            throw ValidationError(
                "--exit-timeout-min \(exitTimeoutMin) is longer than --exit-timeout \(exitTimeout): adaptive "
                    + "exits fall between the two (e.g. --exit-timeout-min 3 --exit-timeout 180)")
        }
        do {
            return try AdaptiveExit(minimum: try Self.duration(exitTimeoutMin, name: "--exit-timeout-min"), chance: exitChance)
        } catch let error as ValidationError {
            throw error
        } catch {
            throw ValidationError("\(error)")
        }
    }

    /// `--enter-rssi` and `--absent-rssi`: both or neither, each −127…20 dBm, enter ≥ absent.
    func hysteresis() throws -> RSSIHysteresis? {
        switch (enterRSSI, absentRSSI) {
        case (nil, nil): return nil
        case let (enter?, absent?):
            for (name, value) in [("--enter-rssi", enter), ("--absent-rssi", absent)] where !(-127...20).contains(value) {
                throw ValidationError("\(name) must be -127 to 20 dBm, got \(value)")
            }
            do {
                return try RSSIHysteresis(enterAtOrAbove: enter, absentBelow: absent)
            } catch {
                throw ValidationError("--enter-rssi \(enter) must be at least --absent-rssi \(absent): \(error)")
            }
        default:
            throw ValidationError("--enter-rssi and --absent-rssi go together: give both or neither")
        }
    }

    /// Seconds from the command line as a `Duration`, refusing what a Duration cannot hold.
    static func duration(_ seconds: Double, name: String) throws -> Duration {
        guard seconds.isFinite, seconds >= 0, seconds < 1e12 else {
            throw ValidationError("\(name) must be a number of seconds from 0 to 10^12, got \(seconds)")
        }
        return .microseconds(Int64((seconds * 1_000_000).rounded()))
    }

    func run() async throws {
        // Every input is checked first, so a missing file stops replay before any output; each is opened only when
        // its turn comes (a FIFO's open waits for its writer, and a thousand files need not be open at once).
        do {
            for path in paths { try CaptureStream.check(path: path) }
        } catch {
            FileHandle.standardError.write(Data("beacond replay: \(error)\n".utf8))
            throw ExitCode(66)
        }
        var session = try ReplaySession(
            output: json ? .json : .table,
            monitored: monitored.map { try RegionSpec(parsing: $0) },
            ranged: ranged.map { try BeaconIdentityConstraint(parsing: $0) },
            exitTimeout: try Self.duration(exitTimeout, name: "--exit-timeout"),
            hysteresis: try hysteresis(),
            adaptiveExit: try adaptiveExit(),
            room: room,
            lineInterval: try Self.duration(lineInterval, name: "--line-interval"),
            printsObservations: json || !stats, devices: try devices())
        for path in paths {
            do {
                try session.play(try CaptureStream(path: path), realtime: speed == .realtime)
            } catch {
                // What was read before is printed; the input that is not a capture (or broke) ends the replay.
                if session.tally.playedAny { session.out.flush() }
                FileHandle.standardError.write(Data("beacond replay: \(error)\n".utf8))
                throw ExitCode(66)
            }
        }
        session.finish(drain: drain)
        if stats {
            session.printStatistics(files: paths.count)
        }
    }
}
