/// The path every advertisement takes, shared by the daemon and `beacond replay`:
/// HCI bytes → advertising reports → iBeacon observations → ranging table and region monitors.
///
/// Time only moves through the timestamps given to `ingest` and `advance`, so a capture replayed
/// at any speed produces the same events, and tests need no sleeps.
public struct BeaconPipeline<Key: Hashable & Sendable>: Sendable {
    public enum Event: Sendable, Hashable {
        case observation(IBeaconObservation)
        case monitoring(MonitoringEvent<Key>)
        /// One ranging cycle: every ranged constraint with the beacons it matches, nearest first.
        case ranging([RangingResult<Key>], at: Timestamp)
    }

    public private(set) var counters = DecodeCounters()
    public var monitor: RegionMonitor<Key>
    public var ranger: BeaconRanger<Key>
    /// How often ranging results are produced (Core Location: about once a second).
    public let rangingInterval: Duration
    /// Whether `ingest` reports each observation as an event (replay prints them; the daemon does not need them).
    public var emitsObservations: Bool

    var nextRangingCycle: Timestamp?
    var clock: Timestamp?
    /// Reused buffer for the monitor's events, so steady-state ingestion does not allocate.
    var monitoringScratch: [MonitoringEvent<Key>] = []

    public init(monitoring: MonitoringConfiguration = .default,
                ranging: RangingConfiguration = RangingConfiguration(),
                rangingInterval: Duration = .seconds(1),
                emitsObservations: Bool = true) {
        self.monitor = RegionMonitor(configuration: monitoring)
        self.ranger = BeaconRanger(configuration: ranging)
        self.rangingInterval = rangingInterval
        self.emitsObservations = emitsObservations
    }

    /// The latest time the pipeline has seen.
    public var now: Timestamp? { clock }

    /// Decodes one HCI event (no H4 type byte) received at `time`.
    public mutating func ingest(hciEvent: Span<UInt8>, at time: Timestamp, into events: inout [Event]) {
        advance(to: time, into: &events)
        let outcome = HCIEventDecoder.decode(event: hciEvent) { report in
            self.ingest(report: report, at: time, into: &events)
        }
        counters.add(outcome)
    }

    /// Decodes one advertising-channel PDU captured over the air.
    public mutating func ingest(linkLayerPDU pdu: Span<UInt8>, rssi: Int8?, at time: Timestamp, into events: inout [Event]) {
        advance(to: time, into: &events)
        let outcome = LinkLayerDecoder.decode(advertisingPDU: pdu, rssi: rssi) { report in
            self.ingest(report: report, at: time, into: &events)
        }
        counters.add(outcome)
    }

    /// Feeds one decoded report. Reports without an iBeacon are ignored here (counted by the decoders).
    public mutating func ingest(report: AdvertisingReport, at time: Timestamp, into events: inout [Event]) {
        guard let frame = report.iBeacon else { return }
        counters.iBeacons += 1
        let observation = IBeaconObservation(frame: frame, rssi: report.rssi, address: report.address,
                                             addressType: report.addressType, timestamp: time)
        observe(observation, into: &events)
    }

    /// Feeds an observation that was decoded elsewhere (BlueZ D-Bus properties carry no HCI bytes).
    public mutating func observe(_ observation: IBeaconObservation, into events: inout [Event]) {
        advance(to: observation.timestamp, into: &events)
        if emitsObservations { events.append(.observation(observation)) }
        if monitor.count > 0 {
            monitor.observe(observation, into: &monitoringScratch)
            drainMonitoringEvents(into: &events)
        }
        if !ranger.rangedKeys.isEmpty {
            ranger.observe(observation)
            if nextRangingCycle == nil { nextRangingCycle = observation.timestamp + rangingInterval }
        }
    }

    /// Moves the clock to `time`, producing every exit and ranging cycle due by then, in time order.
    /// Time never runs backwards: an earlier `time` (a capture with a clock step) changes nothing.
    public mutating func advance(to time: Timestamp, into events: inout [Event]) {
        if let clock, time <= clock { return }
        while let cycle = nextRangingCycle, cycle <= time {
            monitor.advance(to: cycle, into: &monitoringScratch)
            drainMonitoringEvents(into: &events)
            let results = ranger.rangeBeacons(at: cycle)
            events.append(.ranging(results, at: cycle))
            // Stop cycling once nothing is tracked: the next sighting restarts the cadence.
            let idle = ranger.trackedBeaconCount == 0 || ranger.rangedKeys.isEmpty
            nextRangingCycle = idle ? nil : cycle + rangingInterval
        }
        monitor.advance(to: time, into: &monitoringScratch)
        drainMonitoringEvents(into: &events)
        clock = time
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
        switch (monitor.nextDeadline, nextRangingCycle) {
        case (let a?, let b?): return min(a, b)
        case (let a?, nil): return a
        case (nil, let b?): return b
        case (nil, nil): return nil
        }
    }
}
