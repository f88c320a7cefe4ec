import BeacondAPI
import BeaconKit
import BeacondService
import BeacondCore
import Captures
import Foundation

/// Plays captures through `BeaconPipeline` and prints what a user of ranging and monitoring would see.
struct ReplaySession {
    enum Output { case table, json }

    let output: Output
    var pipeline: BeaconPipeline<String>
    var events: [BeaconPipeline<String>.Event] = []
    /// Where in capture time the replay is.
    var captureTime: CaptureTime
    /// What has been played, for the statistics.
    var tally = Tally()
    var out = ReplayOutput()
    /// Whether observations are printed (not with `--stats` alone: then only the statistics, and the region and
    /// ranging events asked for).
    let printsObservations: Bool
    /// Regions and ranging start at the first record's time, so their timers run on capture time.
    var pending: PendingStart
    /// `--device` names by key fingerprint, to print private devices by name.
    var deviceNames: [UUID: String] = [:]
    var realtime = false

    /// Engine time for files without timestamps (text captures): continues from the previous file.
    struct CaptureTime {
        /// The time between two lines of a text capture (`--line-interval`).
        let lineInterval: Duration
        var synthetic = Timestamp.epoch
        /// Whether the last record played had a real timestamp (drained events are printed alike).
        var lastHadTime = false
    }

    /// What was played, over every file.
    struct Tally {
        var records = 0
        var malformedRecords = 0
        /// Whether any record was played (an input that turns out not to be a capture prints nothing when it is
        /// first).
        var playedAny = false
        /// From the start of the replay to the statistics: the whole replay, reading (and waiting for a pipe),
        /// decoding and printing included.
        let started = ContinuousClock.now
    }

    /// What the command line asked to monitor and range, started at the first record's time.
    struct PendingStart {
        var regions: [BeaconRegion] = []
        var ranging: [BeaconIdentityConstraint] = []
    }

    /// The longest single wait in realtime replay.
    static let longestRealtimeWait: Duration = .seconds(60)

    init(
        output: Output, monitored: [RegionSpec], ranged: [BeaconIdentityConstraint],
        exitTimeout: Duration, hysteresis: RSSIHysteresis? = nil, adaptiveExit: AdaptiveExit? = nil, room: String? = nil,
        lineInterval: Duration, printsObservations: Bool = true, devices: [String: IdentityResolvingKey] = [:]
    ) throws {
        self.output = output
        self.printsObservations = printsObservations
        self.pending = PendingStart()
        captureTime = CaptureTime(lineInterval: lineInterval)
        pipeline = BeaconPipeline(
            monitoring: try MonitoringConfiguration(
                exitTimeout: exitTimeout, hysteresis: hysteresis,
                adaptiveExit: adaptiveExit))
        // The capture is one receiver's: in `room`, every beacon it hears is placed there.
        if let room { pipeline.presence = RoomPresence(localRoom: room) }
        if output == .table, printsObservations || !monitored.isEmpty || !ranged.isEmpty { printTableHeader() }
        // Private devices by the names --device gave their keys (`validate` checked every name is given).
        pipeline.privateDevices.setKeys(devices.sorted { $0.key < $1.key }.map(\.value))
        // Looked up as the daemon looks up the administrator's devices.
        var declared = DaemonConfiguration.defaults
        declared.devices = devices
        deviceNames = declared.deviceNamesByFingerprint
        func resolved(_ constraint: BeaconIdentityConstraint) -> BeaconIdentityConstraint {
            declared.resolvingDevice(constraint) ?? constraint
        }
        pending.regions = Set(monitored).sorted(by: { $0.description < $1.description }).map {
            BeaconRegion(identifier: $0.description, constraint: resolved($0.constraint), room: $0.room)
        }
        pending.ranging = Set(ranged).sorted(by: { $0.description < $1.description }).map(resolved)
    }

    /// Plays a capture as it is read (`CaptureStream`: constant memory, and live from a pipe). Realtime replay
    /// sleeps between records; so does the process, which is all replay does.
    mutating func play(_ stream: CaptureStream, realtime: Bool) throws(CaptureError) {
        self.realtime = realtime
        var pacer = CapturePacer(longestWait: Self.longestRealtimeWait)
        do {
            try stream.forEachBatch { bytes, records in
                tally.playedAny = true
                for record in records {
                    let time: Timestamp
                    if let stamp = record.timestamp {
                        time = stamp
                    } else {
                        captureTime.synthetic = captureTime.synthetic + captureTime.lineInterval
                        time = captureTime.synthetic
                    }
                    if realtime, record.timestamp != nil {
                        // Paced by the capture's own clock (`CapturePacer`, as the daemon's replay: scanner).
                        let wait = ContinuousClock.now.duration(to: pacer.due(for: time, now: ContinuousClock.now))
                        if wait > .zero { Thread.sleep(forTimeInterval: wait.secondsValue) }
                    }
                    startPendingRegions(at: time)
                    pipeline.ingest(record.packet, payload: bytes.extracting(record.payload), at: time, into: &events)
                    flush(time: record.timestamp == nil ? nil : time)
                    captureTime.lastHadTime = record.timestamp != nil
                }
                // A live input (a pipe from btmon) is watched as it happens: each block's lines go out now.
                if stream.isLive { out.flush() }
            }
        } catch {
            // Damage found before the input ended is said too (nothing is said of an input that was no capture).
            if stream.recordCount > 0 { reportSkipped(stream) }
            throw error
        }
        reportSkipped(stream)
    }

    /// Counts what `stream` read and skipped, and says which records were skipped.
    mutating func reportSkipped(_ stream: CaptureStream) {
        tally.records += stream.recordCount
        tally.malformedRecords += stream.malformedRecords
        for detail in stream.malformedDetails {
            FileHandle.standardError.write(Data("beacond replay: \(stream.displayName): skipped \(detail)\n".utf8))
        }
    }

    /// Monitoring and ranging start at the first record, so their timers run on capture time.
    mutating func startPendingRegions(at time: Timestamp) {
        for region in pending.regions {
            pipeline.startMonitoring(region, key: region.identifier, at: time, into: &events)
        }
        for constraint in pending.ranging {
            pipeline.startRanging(constraint, key: constraint.description, at: time, into: &events)
        }
        pending.regions = []
        pending.ranging = []
    }

    /// Ends the replay: with `drain`, the clock runs on past the last record until pending exits
    /// (and the ranging cycles before them) have happened; then prints each region's final state.
    mutating func finish(drain: Bool) {
        if drain {
            // Run until no region has a transition pending (ranging would cycle forever). Every
            // monitor deadline is finite and regions settle outside, so this ends; the bound is a
            // guard against a future engine change, not an expected exit.
            var steps = 0
            while let deadline = pipeline.monitor.nextDeadline, steps < 1_000_000 {
                pipeline.advance(to: deadline, into: &events)
                flush(time: captureTime.lastHadTime ? deadline : nil)
                steps += 1
            }
        }
        guard pipeline.monitor.count > 0 else { out.flush(); return }
        for key in pipeline.monitor.regions.keys.sorted() {
            let state = pipeline.monitor.state(of: key) ?? .unknown
            switch output {
            case .table:
                out.line("final state  \(key): \(state.rawValue)")
            case .json:
                out.line("{\"event\": \"finalState\", \"region\": \(jsonString(key)), \"state\": \"\(state.rawValue)\"}")
            }
        }
        out.flush()
    }

    mutating func printStatistics(files: Int) {
        let counters = pipeline.counters
        let seconds = tally.started.duration(to: .now).secondsValue
        let rate = seconds > 0 ? Double(counters.reports) / seconds : 0
        let malformed = tally.malformedRecords + counters.malformed
        switch output {
        case .table:
            if out.bytesWritten > 0 { out.line("") }
            out.line("statistics")
            out.line("  files                \(files)")
            out.line("  records              \(tally.records)")
            out.line("  packets decoded      \(counters.events) (HCI events and over-the-air PDUs)")
            out.line("  advertising events   \(counters.advertisingEvents)")
            out.line("  advertising reports  \(counters.reports)")
            out.line("  iBeacons             \(counters.iBeacons)")
            out.line("  beacons, every kind  \(counters.beacons)")
            out.line("  malformed skipped    \(malformed) (records \(tally.malformedRecords), events/reports \(counters.malformed))")
            for (reason, count) in counters.malformedByReason.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                out.line("    \(reason.rawValue): \(count)")
            }
            out.line(
                "  throughput           \(formatRate(rate)) reports/s (\(counters.reports) advertising reports in "
                    + "\(String(format: "%.3f", seconds)) s, the whole replay: reading, decoding, engine and output)")
        case .json:
            out.line(
                "{\"stats\": {\"files\": \(files), \"records\": \(tally.records), \"events\": \(counters.events), "
                    + "\"advertisingEvents\": \(counters.advertisingEvents), \"reports\": \(counters.reports), "
                    + "\"iBeacons\": \(counters.iBeacons), \"beacons\": \(counters.beacons), \"malformed\": \(malformed), "
                    + "\"malformedRecords\": \(tally.malformedRecords), "
                    + "\"seconds\": \(String(format: "%.6f", seconds)), \"reportsPerSecond\": \(Int(rate))}}")
        }
        out.flush()
    }

    // MARK: - Printing

    /// Prints pending events. `time` is nil for captures without timestamps (text): engine times
    /// are then synthetic and printed as null / "-".
    mutating func flush(time: Timestamp?) {
        let hasTime = time != nil
        for event in events {
            switch event {
            case .observation(let observation):
                guard printsObservations else { continue }
                switch output {
                case .json: out.observationJSON(observation, hasTime: hasTime, deviceNames: deviceNames)
                case .table: out.observationTable(observation, hasTime: hasTime, deviceNames: deviceNames)
                }
            case .monitoring(let event):
                print(event, hasTime: hasTime)
            case .ranging(let results, let at):
                print(results, at: hasTime ? at : nil)
            }
        }
        events.removeAll(keepingCapacity: true)
        // Realtime replay is watched live; otherwise batch writes.
        if realtime { out.flush() } else { out.flushIfLarge() }
    }

    mutating func printTableHeader() {
        out.line("TIME (UTC)                   EVENT    ADDRESS            UUID                                  MAJOR  MINOR   TX  RSSI")
    }

    mutating func print(_ event: MonitoringEvent<String>, hasTime: Bool) {
        let name: String
        var detail = ""
        switch event.kind {
        case .didStartMonitoring: name = "didStartMonitoring"
        case .didDetermineState(let state): name = "didDetermineState"; detail = state.rawValue
        case .didEnterRegion: name = "didEnterRegion"
        case .didExitRegion: name = "didExitRegion"
        }
        let time = hasTime ? event.timestamp.iso8601 : nil
        switch output {
        case .json:
            var line = "{\"event\": \"\(name)\", \"time\": \(time.map { "\"\($0)\"" } ?? "null"), \"region\": \(jsonString(event.key))"
            if !detail.isEmpty { line += ", \"state\": \"\(detail)\"" }
            out.line(line + "}")
        case .table:
            out.line(pad(time ?? "-", 28) + " region   " + name + " " + event.key + (detail.isEmpty ? "" : " → \(detail)"))
        }
    }

    mutating func print(_ results: [RangingResult<String>], at time: Timestamp?) {
        let stamp = time?.iso8601
        for result in results.sorted(by: { $0.key < $1.key }) {
            switch output {
            case .json:
                let beacons = result.beacons.map { beacon in
                    "{" + ReplayIdentity.jsonFields(beacon.identity, deviceNames: deviceNames) + ", \"rssi\": \(beacon.rssi), "
                        + "\"accuracy\": \(formatAccuracyJSON(beacon.accuracy)), \"proximity\": \"\(beacon.proximity.rawValue)\", "
                        + "\"txPower\": \(beacon.measuredPower), \"lastSeen\": \(time == nil ? "null" : "\"\(beacon.timestamp.iso8601)\"")}"
                }
                out.line(
                    "{\"event\": \"didRangeBeacons\", \"time\": \(stamp.map { "\"\($0)\"" } ?? "null"), \"constraint\": \(jsonString(result.key)), "
                        + "\"beacons\": [\(beacons.joined(separator: ", "))]}")
            case .table:
                let list = result.beacons.map { beacon in
                    let name =
                        beacon.identity.kind == .iBeacon
                        ? "\(beacon.identity.major):\(beacon.identity.minor)"
                        : ReplayIdentity.text(beacon.identity, deviceNames: deviceNames)
                    // RSSI 0 is Core Location's "not heard this cycle".
                    guard beacon.rssi != 0 else { return name + " not heard this second" }
                    let distance = beacon.accuracy < 0 ? "distance unknown" : String(format: "%.1f m", beacon.accuracy)
                    return name + " rssi \(beacon.rssi) \(distance) \(beacon.proximity.rawValue)"
                }
                let text = list.isEmpty ? "no beacons in range" : list.joined(separator: "; ")
                out.line(pad(stamp ?? "-", 28) + " ranging  " + result.key + ": " + text)
            }
        }
    }
}

private func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

private func padLeft(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
}

private func formatAccuracyJSON(_ value: Double) -> String {
    value < 0 ? "-1" : String(format: "%.3f", value)
}

private func formatRate(_ rate: Double) -> String {
    rate >= 1_000_000 ? String(format: "%.2f M", rate / 1_000_000) : String(format: "%.0f", rate)
}

/// How replay names a beacon of any kind: the CLI's text form (`altbeacon:…`, `eddystone:…`, `device:NAME`) and JSON
/// fields (`"uuid", "major", "minor"` for an iBeacon as before; `"kind"` and the kind's own keys for the others).
enum ReplayIdentity {
    static func text(_ identity: BeaconIdentity, deviceNames: [UUID: String]) -> String {
        if identity.kind == .privateDevice, let name = deviceNames[identity.uuid] { return "device:" + name }
        return identity.description
    }

    static func jsonFields(_ identity: BeaconIdentity, deviceNames: [UUID: String]) -> String {
        let numbers = "\"uuid\": \"\(identity.uuid.uuidString)\", \"major\": \(identity.major), \"minor\": \(identity.minor)"
        switch identity.kind {
        case .iBeacon: return numbers
        case .altBeacon: return "\"kind\": \"AltBeacon\", " + numbers
        case .eddystone:
            return "\"kind\": \"Eddystone\", \"namespace\": \"\(identity.eddystoneNamespace)\", "
                + "\"instance\": \"\(identity.eddystoneInstance)\""
        case .privateDevice:
            return "\"kind\": \"PrivateDevice\", \"device\": "
                + jsonString(deviceNames[identity.uuid] ?? identity.uuid.uuidString)
        }
    }
}

/// A JSON string literal (region identifiers come from the command line and may hold anything).
func jsonString(_ text: String) -> String { JSONString.quoted(text) }
