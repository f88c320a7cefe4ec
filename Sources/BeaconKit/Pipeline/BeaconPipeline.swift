public import Foundation

/// The path every advertisement takes, shared by the daemon and `beacond replay`:
/// HCI bytes → advertising reports → beacon observations (iBeacon, AltBeacon, Eddystone-UID, private devices by
/// their keys) → ranging table and region monitors.
///
/// Time only moves through the timestamps given to `ingest` and `advance`, so a capture replayed
/// at any speed produces the same events, and tests need no sleeps.
public struct BeaconPipeline<Key: Hashable & Sendable>: Sendable {
    public enum Event: Sendable, Hashable {
        case observation(BeaconObservation)
        case monitoring(MonitoringEvent<Key>)
        /// One ranging cycle: every ranged constraint with the beacons it matches, nearest first (with `presence`, also
        /// those only other receivers hear).
        case ranging([RangingResult<Key>], at: Timestamp)
    }

    public private(set) var counters = DecodeCounters()
    public var monitor: RegionMonitor<Key>
    public var ranger: BeaconRanger<Key>
    /// Rooms, when receivers have rooms (a node on an MQTT broker): each sighting places its beacon, and regions with
    /// a room count only sightings placed there. nil: no rooms (regions with a room never enter).
    public var presence: RoomPresence?
    /// The keys of private devices to recognise: an advertisement from a resolvable private address one of them made
    /// is a sighting of that device, whatever the address is this quarter hour.
    public var privateDevices = PrivateAddressResolver()
    /// What a sighting gets that its frame does not carry: the latest Eddystone-TLM of its address, a phone's RSSI
    /// at 1 m.
    var additions = SightingAdditions()
    /// The RSSI at 1 m assumed for a phone (a private device): a typical phone's, the iBeacon convention for a 0 dBm
    /// transmitter, between Bermuda's −55 and ESPresense's −65 for Apple devices (docs/devices.md, "A phone's power").
    public static var phoneMeasuredPower: Int8 { SightingAdditions.phoneMeasuredPower }
    /// Each private device's RSSI at 1 m where calibration.toml gives one (`"device:NAME" = dBm`), by fingerprint.
    public var privateDeviceMeasuredPower: [UUID: Int8] {
        get { additions.measuredPower }
        set { additions.measuredPower = newValue }
    }
    /// Whether `ingest` reports each observation as an event (replay prints them; the daemon does not need them).
    public var emitsObservations: Bool
    /// When ranging cycles come, and when they pause.
    var cadence: RangingCadence
    /// How often ranging results are produced (Core Location: about once a second).
    public var rangingInterval: Duration { cadence.interval }
    /// Consecutive empty ranging cycles after which ranging pauses (`RangingCadence.emptyCyclesBeforePause`).
    public var emptyRangingCyclesBeforePause: Int { cadence.emptyCyclesBeforePause }
    var clock: Timestamp?
    /// Reused buffer for the monitor's events, so steady-state ingestion does not allocate.
    var monitoringScratch: [MonitoringEvent<Key>] = []

    public init(
        monitoring: MonitoringConfiguration = .default,
        ranging: RangingConfiguration = RangingConfiguration(),
        rangingInterval: Duration = .seconds(1),
        emptyRangingCyclesBeforePause: Int = 60,
        emitsObservations: Bool = true
    ) {
        self.monitor = RegionMonitor(configuration: monitoring)
        self.ranger = BeaconRanger(configuration: ranging)
        self.cadence = RangingCadence(interval: rangingInterval, emptyCyclesBeforePause: emptyRangingCyclesBeforePause)
        self.emitsObservations = emitsObservations
    }

    /// The latest time the pipeline has seen.
    public var now: Timestamp? { clock }

    /// Decodes one HCI event (no H4 type byte) received at `time`.
    public mutating func ingest(hciEvent: Span<UInt8>, at time: Timestamp, into events: inout [Event]) {
        advance(to: time, into: &events)
        let outcome = HCIEventDecoder.decode(event: hciEvent) { report in
            self.ingest(report: report, data: hciEvent.extracting(report.dataRange), at: time, into: &events)
        }
        counters.add(outcome)
    }

    /// Decodes one advertising-channel PDU captured over the air.
    public mutating func ingest(linkLayerPDU pdu: Span<UInt8>, rssi: Int8?, at time: Timestamp, into events: inout [Event]) {
        advance(to: time, into: &events)
        let outcome = LinkLayerDecoder.decode(advertisingPDU: pdu, rssi: rssi) { report in
            self.ingest(report: report, data: pdu.extracting(report.dataRange), at: time, into: &events)
        }
        counters.add(outcome)
    }

    /// Feeds one decoded report and its advertising data. Reports with no beacon frame and from no known private
    /// device are ignored here (counted by the decoders). A report without a beacon frame is read again for what else
    /// beacond uses (Eddystone-TLM, a phone's TX Power Level); one with a frame carries nothing else beacond reads.
    public mutating func ingest(report: AdvertisingReport, data: Span<UInt8>, at time: Timestamp, into events: inout [Event]) {
        var content = AdvertisementContent(beacon: report.beacon)
        if report.beacon == nil, report.dataComplete {
            content = BeaconFrameParser.parse(advertisingData: data)
            // Only a TLM frame or a known phone needs more; everything else stops here.
            guard content.telemetry != nil || !privateDevices.isEmpty else { return }
        }
        ingest(content, rssi: report.rssi, address: report.address, addressType: report.addressType, at: time, into: &events)
    }

    /// Feeds what one advertisement carried, decoded elsewhere (bluetoothd's D-Bus properties carry no HCI bytes).
    public mutating func ingest(
        _ content: AdvertisementContent, rssi: Int8?, address: BluetoothAddress, addressType: UInt8, at time: Timestamp,
        into events: inout [Event]
    ) {
        if let telemetry = content.telemetry { additions.record(telemetry, from: address) }
        var frame = content.beacon
        if frame == nil, !privateDevices.isEmpty,
            let fingerprint = privateDevices.resolve(address, addressType: addressType, at: time)
        {
            // Not the advertised TX Power Level: that is the radio's nominal output (iPhones say 12 dBm, Android 1, −7
            // or −15), not a power measured at 0 m, so Eddystone's "minus 41 dB" put a phone at arm's length ~50 m
            // away. A phone is taken as a typical one (docs/devices.md), unless calibration.toml measured it.
            frame = BeaconFrame(
                identity: .privateDevice(fingerprint: fingerprint),
                measuredPower: additions.measuredPower(of: fingerprint))
        }
        guard let frame else { return }
        counters.beacons += 1
        if frame.identity.kind == .iBeacon { counters.iBeacons += 1 }
        let telemetry = frame.identity.kind == .eddystone ? additions.telemetry(of: address) : nil
        observe(
            BeaconObservation(
                frame: frame, rssi: rssi, address: address, addressType: addressType, timestamp: time,
                telemetry: telemetry),
            into: &events)
    }

    /// Feeds an observation that was decoded elsewhere (BlueZ D-Bus properties carry no HCI bytes).
    public mutating func observe(_ observation: BeaconObservation, into events: inout [Event]) {
        advance(to: observation.timestamp, into: &events)
        if emitsObservations { events.append(.observation(observation)) }
        var room = SightingRoom.unplaced
        if presence != nil {
            room = presence!.place(
                observation.identity, rssi: observation.rssi.map(Double.init),
                advertisedPower: Int(observation.frame.measuredPower), by: .local,
                in: presence!.localRoom, at: observation.timestamp)
        }
        if monitor.count > 0 {
            monitor.observe(observation, room: room, into: &monitoringScratch)
            drainMonitoringEvents(into: &events)
        }
        if !ranger.rangedKeys.isEmpty {
            ranger.observe(observation)
            resumeRanging(after: observation.timestamp)
        }
    }

    /// Another receiver's reading of `identity` at `time`, already placed in `presence` (a fleet's): ranging lists the
    /// beacon from the nearest receiver's measurement in cycles this adapter does not hear it, and the reading resumes
    /// paused cycles as a sighting does. The caller advances the clock first.
    public mutating func observeRemotely(_ identity: BeaconIdentity, measuredPower: Int?, at time: Timestamp) {
        guard !ranger.rangedKeys.isEmpty else { return }
        ranger.observeRemotely(identity, measuredPower: measuredPower, at: time)
        resumeRanging(after: time)
    }

    /// Cycles paused after `emptyRangingCyclesBeforePause` empty ones resume, on their old phase, once a ranged beacon
    /// is heard again.
    private mutating func resumeRanging(after time: Timestamp) {
        guard ranger.trackedBeaconCount > 0 else { return }
        cadence.resume(after: time)
    }

    /// Moves the clock to `time`, producing every exit and ranging cycle due by then, in time order.
    /// Time never runs backwards: an earlier `time` (a capture with a clock step) changes nothing.
    public mutating func advance(to time: Timestamp, into events: inout [Event]) {
        if let clock, time <= clock { return }
        while let cycle = cadence.next, cycle <= time {
            monitor.advance(to: cycle, into: &monitoringScratch)
            drainMonitoringEvents(into: &events)
            let results = ranger.rangeBeacons(at: cycle, fleet: presence)
            events.append(.ranging(results, at: cycle))
            cadence.ranged(at: cycle, empty: ranger.trackedBeaconCount == 0, ranging: !ranger.rangedKeys.isEmpty)
        }
        monitor.advance(to: time, into: &monitoringScratch)
        drainMonitoringEvents(into: &events)
        clock = time
    }

    /// Starts ranging `constraint` for `key`; the first cycle comes one interval after `time` (or
    /// after the cycle already scheduled), and cycles continue, empty or not, until the last key stops.
    public mutating func startRanging(
        _ constraint: BeaconIdentityConstraint, key: Key, at time: Timestamp,
        into events: inout [Event]
    ) {
        advance(to: time, into: &events)
        ranger.startRanging(constraint, key: key)
        cadence.start(after: max(time, clock ?? time))
    }

    /// Stops ranging for `key`; with no key left, cycles stop.
    public mutating func stopRanging(_ key: Key) {
        ranger.stopRanging(key)
        if ranger.rangedKeys.isEmpty { cadence.stop() }
    }

    /// Region monitoring in the pipeline's clock: the region's timers start now (or at `time`).
    public mutating func startMonitoring(_ region: BeaconRegion, key: Key, at time: Timestamp, into events: inout [Event]) {
        advance(to: time, into: &events)
        monitor.startMonitoring(region, for: key, at: time, into: &monitoringScratch)
        drainMonitoringEvents(into: &events)
    }

    private mutating func drainMonitoringEvents(into events: inout [Event]) {
        guard !monitoringScratch.isEmpty else { return }
        for event in monitoringScratch { events.append(.monitoring(event)) }
        monitoringScratch.removeAll(keepingCapacity: true)
    }

    /// The time at which something is next due without new sightings (an exit or a ranging cycle),
    /// so a caller can arm one timer instead of polling.
    public var nextDeadline: Timestamp? {
        switch (monitor.nextDeadline, cadence.next) {
        case (let a?, let b?): return min(a, b)
        case (let a?, nil): return a
        case (nil, let b?): return b
        case (nil, nil): return nil
        }
    }
}

/// What a sighting gets that its frame does not carry.
struct SightingAdditions: Sendable {
    /// The RSSI at 1 m assumed for a phone (a private device): see `BeaconPipeline.phoneMeasuredPower`.
    static var phoneMeasuredPower: Int8 { -59 }
    /// The most addresses whose telemetry is kept (a flood of TLM frames cannot grow memory past it).
    static var telemetryCapacity: Int { 4096 }
    /// Eddystone-TLM by the address that sent it, attached to that address's Eddystone-UID sightings.
    private var telemetryByAddress: [UInt64: EddystoneTelemetry] = [:]
    /// Each private device's RSSI at 1 m where calibration.toml gives one, by fingerprint.
    var measuredPower: [UUID: Int8] = [:]

    mutating func record(_ telemetry: EddystoneTelemetry, from address: BluetoothAddress) {
        if telemetryByAddress.count >= Self.telemetryCapacity, telemetryByAddress[address.rawValue] == nil {
            telemetryByAddress.removeAll(keepingCapacity: true)
        }
        telemetryByAddress[address.rawValue] = telemetry
    }

    func telemetry(of address: BluetoothAddress) -> EddystoneTelemetry? { telemetryByAddress[address.rawValue] }

    /// Not the advertised TX Power Level (see `BeaconPipeline.ingest`): calibration.toml's, else a typical phone's.
    func measuredPower(of fingerprint: UUID) -> Int8 { measuredPower[fingerprint] ?? Self.phoneMeasuredPower }
}

/// When ranging cycles come: one every `interval` while something is ranged, empty results included (as Core
/// Location reports them), until `emptyCyclesBeforePause` empty ones in a row; then none until a ranged beacon is
/// heard again, on the same phase.
struct RangingCadence: Sendable {
    let interval: Duration
    /// Consecutive empty ranging cycles after which ranging pauses until a ranged beacon is heard
    /// again. Core Location reports empty results every second for as long as ranging is on; here a
    /// capture with an hour-long gap, a corrupt timestamp a century ahead or a stepped system clock
    /// would make that millions of identical empty results (and unbounded work), so after this many
    /// the pipeline stops repeating itself. The next sighting resumes cycles on the same phase.
    let emptyCyclesBeforePause: Int
    /// The next cycle; nil when nothing is ranged or cycles are paused.
    private(set) var next: Timestamp?
    /// A cycle time of the current cadence, kept while paused so cycles resume on the same phase.
    private var phase: Timestamp?
    private var emptyCycles = 0

    init(interval: Duration, emptyCyclesBeforePause: Int) {
        // A zero or negative interval would make the cadence loop forever.
        self.interval = max(interval, .microseconds(1))
        self.emptyCyclesBeforePause = max(1, emptyCyclesBeforePause)
    }

    /// Ranging started at `time`: the first cycle one interval later, unless cycles already run.
    mutating func start(after time: Timestamp) {
        guard next == nil else { return }
        next = time + interval
        emptyCycles = 0
    }

    /// Nothing is ranged any more.
    mutating func stop() {
        next = nil
        phase = nil
    }

    /// A ranged beacon was heard at `time`: paused cycles resume, on their old phase.
    mutating func resume(after time: Timestamp) {
        guard next == nil, let phase else { return }
        next = Self.firstCycle(after: time, phase: phase, interval: interval)
        emptyCycles = 0
    }

    /// The cycle at `cycle` produced its results (`empty`: no beacon tracked); `ranging`: something is still ranged.
    mutating func ranged(at cycle: Timestamp, empty: Bool, ranging: Bool) {
        phase = cycle
        // Core Location reports every second while ranging is on, empty results included, up to the pause.
        emptyCycles = empty ? emptyCycles + 1 : 0
        let paused = emptyCycles >= emptyCyclesBeforePause
        // At the end of time the sum saturates; a cycle that does not move forward ends the cadence.
        let following = cycle + interval
        next = !ranging || paused || following <= cycle ? nil : following
    }

    /// The first `phase + k·interval` strictly after `time` (k ≥ 1): cycles resume on their old beat.
    static func firstCycle(after time: Timestamp, phase: Timestamp, interval: Duration) -> Timestamp {
        let step = interval.wholeMicroseconds
        let elapsed = (time - phase).wholeMicroseconds
        guard elapsed >= 0 else { return phase + interval }
        let (steps, overflow) = (elapsed / step + 1).multipliedReportingOverflow(by: step)
        return overflow ? Timestamp(microsecondsSinceEpoch: .max) : phase + .microseconds(steps)
    }
}
