import BeaconKit
import Testing

@Suite("RegionMonitor RSSI hysteresis")
struct RegionMonitorHysteresisTests {
    typealias Kit = MonitorTestKit
    let beacon = Kit.beacon(1, 1)

    /// A monitor with region "a" (UUID A) started at 0 s; by default it enters at -70 dBm or stronger and
    /// counts below -80 dBm as absent.
    func harness(enter: Int = -70, absent: Int = -80) throws -> MonitorTestHarness {
        var h = MonitorTestHarness(
            try MonitoringConfiguration(
                hysteresis: try RSSIHysteresis(enterAtOrAbove: enter, absentBelow: absent)))
        h.start(try Kit.region("a"), at: 0)
        _ = h.take()
        return h
    }

    @Test("a sighting exactly at enterAtOrAbove enters")
    func enterThresholdInclusive() throws {
        var h = try harness()
        h.see(beacon, at: 1, rssi: -70)
        #expect(h.take() == ["1.0 didDetermineState(inside) a", "1.0 didEnterRegion a"])
    }

    @Test("sightings in the band, down to absentBelow itself, cannot enter", arguments: [Int8(-71), -75, -80])
    func bandDoesNotEnter(rssi: Int8) throws {
        var h = try harness()
        h.see(beacon, at: 1, rssi: rssi)
        #expect(h.take().isEmpty)
        #expect(h.monitor.state(of: "a") == .unknown)
        #expect(h.monitor.lastSeen(of: "a") == nil)
        // The band does not hold off the unknown → outside determination either.
        h.see(beacon, at: 29, rssi: rssi)
        h.advance(to: 30)
        #expect(h.take() == ["30.0 didDetermineState(outside) a"])
        h.see(beacon, at: 31, rssi: rssi)
        #expect(h.monitor.state(of: "a") == .outside)
    }

    @Test("sightings in the band, down to absentBelow itself, keep an inside region inside", arguments: [Int8(-71), -80])
    func bandRefreshes(rssi: Int8) throws {
        var h = try harness()
        h.see(beacon, at: 1, rssi: -60)
        h.see(beacon, at: 20, rssi: rssi)
        #expect(h.monitor.lastSeen(of: "a") == Kit.at(20))
        h.advance(to: 49.999)
        #expect(h.take().count == 2)
        h.advance(to: 50)
        #expect(h.take() == ["50.0 didDetermineState(outside) a", "50.0 didExitRegion a"])
    }

    @Test("a sighting below absentBelow is no sighting: it neither enters nor refreshes")
    func belowAbsentIgnored() throws {
        var h = try harness()
        h.see(beacon, at: 1, rssi: -60)
        _ = h.take()
        h.see(beacon, at: 20, rssi: -81)
        #expect(h.monitor.lastSeen(of: "a") == Kit.at(1))
        #expect(h.nextDeadline == 31)
        h.advance(to: 31)
        #expect(h.take() == ["31.0 didDetermineState(outside) a", "31.0 didExitRegion a"])
        h.see(beacon, at: 40, rssi: -100)
        #expect(h.monitor.state(of: "a") == .outside)
    }

    @Test("a sighting without RSSI counts as present: the frame was received")
    func missingRSSICounts() throws {
        var h = try harness()
        h.see(beacon, at: 1, rssi: nil)
        #expect(h.take() == ["1.0 didDetermineState(inside) a", "1.0 didEnterRegion a"])
        h.see(beacon, at: 25, rssi: nil)
        #expect(h.nextDeadline == 55)
    }

    @Test("equal thresholds: at the threshold enters, below it is absent")
    func singleThreshold() throws {
        var h = try harness(enter: -75, absent: -75)
        h.see(beacon, at: 1, rssi: -76)
        #expect(h.monitor.state(of: "a") == .unknown)
        h.see(beacon, at: 2, rssi: -75)
        #expect(h.monitor.state(of: "a") == .inside)
        h.see(beacon, at: 20, rssi: -76)
        #expect(h.monitor.lastSeen(of: "a") == Kit.at(2))
    }

    @Test("a beacon hovering around one threshold flaps without hysteresis and not with it")
    func hoveringBeacon() throws {
        // Every 20 s the beacon reads -72 dBm, with -65 dBm every 80 s: with a single -70 dBm threshold (the
        // weaker readings absent), the region leaves after each strong reading; with a band it stays inside.
        let readings: [Int8] = (0..<12).map { $0.isMultiple(of: 4) ? -65 : -72 }
        var single = try harness(enter: -70, absent: -70)
        var banded = try harness(enter: -70, absent: -80)
        for (step, rssi) in readings.enumerated() {
            single.see(beacon, at: Double(step) * 20, rssi: rssi)
            banded.see(beacon, at: Double(step) * 20, rssi: rssi)
        }
        #expect(single.take().filter { $0.hasSuffix("didEnterRegion a") }.count == 3)
        #expect(banded.take() == ["0.0 didDetermineState(inside) a", "0.0 didEnterRegion a"])
    }

    /// Each region may bring its own thresholds; one without uses the configuration's (the daemon's default).
    @Test("per-region thresholds: each region weighs a sighting by its own, others by the configuration's")
    func perRegionThresholds() throws {
        var h = MonitorTestHarness(
            try MonitoringConfiguration(
                hysteresis: try RSSIHysteresis(enterAtOrAbove: -70, absentBelow: -80)))
        var near = try Kit.region("near")
        near.hysteresis = try RSSIHysteresis(enterAtOrAbove: -50, absentBelow: -60)
        var any = try Kit.region("any")
        any.hysteresis = nil
        h.start(near, at: 0)
        h.start(any, at: 0)
        _ = h.take()
        // -65 dBm: enough for "any" (the configuration's -70), not for "near" (its own -50).
        h.see(beacon, at: 1, rssi: -65)
        #expect(h.monitor.state(of: "near") == .unknown)
        #expect(h.monitor.state(of: "any") == .inside)
        h.see(beacon, at: 2, rssi: -45)
        #expect(h.monitor.state(of: "near") == .inside)
        // -65 dBm is below near's absent threshold: no refresh there, but "any" is refreshed.
        h.see(beacon, at: 20, rssi: -65)
        #expect(h.monitor.lastSeen(of: "near") == Kit.at(2))
        #expect(h.monitor.lastSeen(of: "any") == Kit.at(20))
        // -55 dBm is in near's band: it keeps near inside.
        h.see(beacon, at: 25, rssi: -55)
        #expect(h.monitor.lastSeen(of: "near") == Kit.at(25))
    }

    @Test("a region's thresholds apply without any in the configuration, and are part of the region")
    func perRegionWithoutConfiguration() throws {
        var h = MonitorTestHarness()
        var region = try Kit.region("a")
        region.hysteresis = try RSSIHysteresis(enterAtOrAbove: -70, absentBelow: -80)
        h.start(region, at: 0)
        _ = h.take()
        h.see(beacon, at: 1, rssi: -75)
        #expect(h.monitor.state(of: "a") == .unknown)
        h.see(beacon, at: 2, rssi: -70)
        #expect(h.take() == ["2.0 didDetermineState(inside) a", "2.0 didEnterRegion a"])
        #expect(h.monitor.region(for: "a")?.hysteresis == region.hysteresis)
        var plain = region
        plain.hysteresis = nil
        #expect(plain != region)
    }

    @Test("inverted thresholds are a configuration error with a clear message")
    func invertedThresholds() {
        #expect(throws: MonitoringConfigurationError.hysteresisInverted(enterAtOrAbove: -80, absentBelow: -70)) {
            try RSSIHysteresis(enterAtOrAbove: -80, absentBelow: -70)
        }
        let message = MonitoringConfigurationError.hysteresisInverted(enterAtOrAbove: -80, absentBelow: -70)
            .description
        #expect(message.contains("-80 dBm") && message.contains("-70 dBm") && message.contains(">="))
    }

    @Test("exitTimeout must be positive and at most a year")
    func exitTimeoutRange() throws {
        #expect(throws: MonitoringConfigurationError.exitTimeoutOutOfRange(.zero)) {
            try MonitoringConfiguration(exitTimeout: .zero)
        }
        #expect(throws: MonitoringConfigurationError.exitTimeoutOutOfRange(.seconds(-1))) {
            try MonitoringConfiguration(exitTimeout: .seconds(-1))
        }
        #expect(throws: (any Error).self) { try MonitoringConfiguration(exitTimeout: .seconds(366 * 86_400)) }
        #expect(try MonitoringConfiguration(exitTimeout: .microseconds(1)).exitTimeout == .microseconds(1))
        #expect(MonitoringConfiguration.default.exitTimeout == .seconds(30))
        #expect(MonitoringConfiguration.default.hysteresis == nil)
        #expect(try MonitoringConfiguration() == .default)
    }
}
