import BeaconKit
import Testing

/// Several receivers as one monitor: a region is inside while any receiver hears its beacon; a receiver that goes
/// offline makes the regions only it heard unknown, never outside, until it returns (exit timeout 30 s).
@Suite("RegionMonitor with several receivers")
struct RegionMonitorReceiverTests {
    typealias Kit = MonitorTestKit
    let beacon = Kit.beacon(1, 1)
    let kitchen = ReceiverID(rawValue: 1)
    let hall = ReceiverID(rawValue: 2)

    func harness() throws -> MonitorTestHarness {
        var h = MonitorTestHarness()
        h.start(try Kit.region("a"), at: 0)
        _ = h.take()
        return h
    }

    @Test("a beacon walking from receiver to receiver never exits; silence everywhere exits once")
    func walkingNeverExits() throws {
        var h = try harness()
        h.see(beacon, by: kitchen, at: 1)
        for second in stride(from: 10.0, through: 100, by: 10) { h.see(beacon, by: second < 50 ? kitchen : hall, at: second) }
        h.see(beacon, at: 110) // this node's own scanner too
        h.advance(to: 139)
        #expect(h.take() == ["1.0 didDetermineState(inside) a", "1.0 didEnterRegion a"])
        h.advance(to: 140)
        #expect(h.take() == ["140.0 didDetermineState(outside) a", "140.0 didExitRegion a"])
    }

    @Test("the only receiver that heard it goes offline: unknown, no exit however long; back: a full exit timeout")
    func offlineMakesUnknownNotAbsent() throws {
        var h = try harness()
        h.see(beacon, by: kitchen, at: 1)
        _ = h.take()
        h.receiverOffline(kitchen, at: 5)
        #expect(h.take() == ["5.0 didDetermineState(unknown) a"])
        #expect(h.nextDeadline == nil)
        h.advance(to: 10_000)
        #expect(h.take().isEmpty)
        h.receiverOnline(kitchen, at: 10_000)
        #expect(h.nextDeadline == 10_030)
        h.advance(to: 10_030)
        #expect(h.take() == ["10030.0 didDetermineState(outside) a", "10030.0 didExitRegion a"])
    }

    @Test("seen again after the receiver returns: inside with no second entry")
    func backAndSeenIsNoNewEntry() throws {
        var h = try harness()
        h.see(beacon, by: kitchen, at: 1)
        h.receiverOffline(kitchen, at: 5)
        h.receiverOnline(kitchen, at: 60)
        h.see(beacon, by: kitchen, at: 61)
        #expect(
            h.take() == [
                "1.0 didDetermineState(inside) a", "1.0 didEnterRegion a", "5.0 didDetermineState(unknown) a",
                "61.0 didDetermineState(inside) a",
            ])
    }

    @Test("heard by another online receiver, or by this node, lately: an offline receiver changes nothing at once")
    func anotherReceiverKeepsItInside() throws {
        var h = try harness()
        h.see(beacon, by: kitchen, at: 1)
        h.see(beacon, by: hall, at: 2)
        h.receiverOffline(kitchen, at: 5)
        #expect(h.take() == ["1.0 didDetermineState(inside) a", "1.0 didEnterRegion a"])
        // At its exit deadline (hall heard it last at 2), kitchen, which heard it at 1 and is offline, may still be
        // beside it (its will may come long after it died): it waits for kitchen instead of exiting.
        h.advance(to: 32)
        #expect(h.take() == ["32.0 didDetermineState(unknown) a"])

        var local = try harness()
        local.see(beacon, by: kitchen, at: 1)
        local.see(beacon, at: 2)
        local.receiverOffline(kitchen, at: 5)
        #expect(local.take() == ["1.0 didDetermineState(inside) a", "1.0 didEnterRegion a"])
        #expect(local.nextDeadline == 32)
    }

    @Test("a receiver heard from longer than the exit timeout ago does not count, online or not")
    func oldHearingsDoNotCount() throws {
        var h = try harness()
        h.see(beacon, by: hall, at: 1)
        h.see(beacon, by: kitchen, at: 20)
        h.receiverOffline(kitchen, at: 40) // hall's hearing (1) is older than 40 - 30: only kitchen counts
        #expect(h.take().suffix(1) == ["40.0 didDetermineState(unknown) a"])
    }

    @Test("heard by two receivers that both go offline: it waits for both")
    func waitsForEveryReceiverThatHeardIt() throws {
        var h = try harness()
        h.see(beacon, by: kitchen, at: 1)
        h.see(beacon, by: hall, at: 2)
        h.receiverOffline(kitchen, at: 5)
        #expect(h.take().count == 2) // inside, entry: hall still online
        h.receiverOffline(hall, at: 6)
        #expect(h.take() == ["6.0 didDetermineState(unknown) a"])
        h.receiverOnline(kitchen, at: 100)
        #expect(h.nextDeadline == nil) // hall, which also heard it, is still offline
        h.receiverOnline(hall, at: 200)
        #expect(h.nextDeadline == 230)
    }

    @Test("an online receiver hearing it while blind makes it inside at once")
    func anotherReceiverEndsTheBlindness() throws {
        var h = try harness()
        h.see(beacon, by: kitchen, at: 1)
        h.receiverOffline(kitchen, at: 5)
        h.see(beacon, by: hall, at: 50)
        #expect(h.take().suffix(1) == ["50.0 didDetermineState(inside) a"])
        h.receiverOnline(kitchen, at: 60) // nothing waits for it any more
        #expect(h.nextDeadline == 80)
        h.advance(to: 80)
        #expect(h.take() == ["80.0 didDetermineState(outside) a", "80.0 didExitRegion a"])
    }

    @Test("a region waiting for its exit when the receiver goes offline waits instead of exiting")
    func pendingExitWaits() throws {
        var h = try harness()
        h.see(beacon, by: kitchen, at: 1)
        h.suspend(at: 2) // this node's scanner blind: unknown, exit pending after resume
        h.resume(at: 3)
        h.receiverOffline(kitchen, at: 10)
        h.advance(to: 1_000)
        #expect(h.take() == ["1.0 didDetermineState(inside) a", "1.0 didEnterRegion a", "2.0 didDetermineState(unknown) a"])
        #expect(h.nextDeadline == nil)
    }

    @Test("a blind region stays blind across this node's own suspension and resumption")
    func localResumeDoesNotUnblind() throws {
        var h = try harness()
        h.see(beacon, by: kitchen, at: 1)
        h.receiverOffline(kitchen, at: 5)
        h.suspend(at: 6)
        h.resume(at: 7)
        h.advance(to: 1_000)
        #expect(h.take().suffix(1) == ["5.0 didDetermineState(unknown) a"])
        #expect(h.monitor.offlineReceivers == [kitchen])
    }

    @Test("heard here, then only by a receiver that went offline: at the exit deadline it waits instead of exiting")
    func blindAtTheDeadline() throws {
        var h = try harness()
        h.see(beacon, at: 4) // this node's adapter
        for second in stride(from: 5.0, through: 20, by: 5) { h.see(beacon, by: kitchen, at: second) }
        h.receiverOffline(kitchen, at: 25) // this node heard it at 4, within 30 s: not blind yet
        #expect(h.take() == ["4.0 didDetermineState(inside) a", "4.0 didEnterRegion a"])
        h.advance(to: 1_000)
        #expect(h.take() == ["50.0 didDetermineState(unknown) a"])
        h.receiverOnline(kitchen, at: 1_000)
        h.advance(to: 1_030)
        #expect(h.take() == ["1030.0 didDetermineState(outside) a", "1030.0 didExitRegion a"])
    }

    @Test("a blind region also waits for a receiver that heard it meanwhile and went offline too")
    func blindWaitsForLaterReceivers() throws {
        let hysteresis = try RSSIHysteresis(enterAtOrAbove: -70, absentBelow: -90)
        var h = MonitorTestHarness(try MonitoringConfiguration(exitTimeout: .seconds(30), hysteresis: hysteresis))
        h.start(try Kit.region("a"), at: 0)
        h.see(beacon, by: kitchen, at: 1, rssi: -60)
        h.receiverOffline(kitchen, at: 2) // blind, waiting for kitchen
        h.see(beacon, by: hall, at: 3, rssi: -80) // weak: counts as heard, not as an entry
        h.receiverOffline(hall, at: 4)
        h.receiverOnline(kitchen, at: 10)
        #expect(h.nextDeadline == nil) // hall, which heard it at 3, is still offline
        h.receiverOnline(hall, at: 20)
        #expect(h.nextDeadline == 50)
    }

    @Test("a rebuilt monitor keeps who heard each region and what it waits for")
    func receiverRecordsCarryOver() throws {
        var h = try harness()
        h.see(beacon, by: kitchen, at: 1)
        h.receiverOffline(kitchen, at: 5)
        var rebuilt = MonitorTestHarness(try MonitoringConfiguration(exitTimeout: .seconds(60)))
        let saved = try #require(h.monitor.monitoredRegion(for: "a"))
        rebuilt.monitor.restore(saved, for: "a", at: Kit.at(6))
        rebuilt.monitor.restoreReceivers(
            try #require(h.monitor.receiverRecord(for: "a")), for: "a",
            offline: h.monitor.offlineReceivers)
        #expect(rebuilt.nextDeadline == nil)
        rebuilt.advance(to: 1_000)
        #expect(rebuilt.take().isEmpty)
        rebuilt.receiverOnline(kitchen, at: 1_000)
        #expect(rebuilt.nextDeadline == 1_060)
    }

    @Test("offline and online twice, and the local receiver, change nothing more")
    func repeatedCallsAreHarmless() throws {
        var h = try harness()
        h.see(beacon, by: kitchen, at: 1)
        h.receiverOffline(kitchen, at: 5)
        h.receiverOffline(kitchen, at: 6)
        h.receiverOffline(.local, at: 6)
        #expect(h.take().filter { $0.contains("unknown") } == ["5.0 didDetermineState(unknown) a"])
        h.receiverOnline(kitchen, at: 7)
        h.receiverOnline(kitchen, at: 8)
        #expect(h.nextDeadline == 37)
    }
}

extension RegionMonitorReceiverTests {
    /// A receiver evicted from the receiver table (issue 39): it holds the regions it heard lately, and a blind region
    /// that waited only for it gets a full exit timeout from then instead of waiting for ever.
    @Test("a forgotten receiver: it held the region it heard; a region blind for it alone exits after a timeout")
    func forgottenReceiver() throws {
        var h = try harness()
        h.see(beacon, by: kitchen, at: 1)
        _ = h.take()
        h.advance(to: 5)
        #expect(h.monitor.receiversHoldingRegions == [kitchen])
        h.receiverOffline(kitchen, at: 5)
        #expect(h.take() == ["5.0 didDetermineState(unknown) a"])
        h.advance(to: 100)
        #expect(h.monitor.receiversHoldingRegions == [kitchen], "a blind region waits for it")
        h.monitor.forgetReceiver(kitchen)
        #expect(h.monitor.offlineReceivers.isEmpty && h.monitor.receiversHoldingRegions.isEmpty)
        #expect(h.nextDeadline == 130)
        h.advance(to: 130)
        #expect(h.take() == ["130.0 didDetermineState(outside) a", "130.0 didExitRegion a"])
    }
}

extension MonitorTestHarness {
    mutating func see(_ identity: BeaconIdentity, by receiver: ReceiverID, at seconds: Double, rssi: Int8? = -60) {
        monitor.observe(identity, rssi: rssi, by: receiver, at: MonitorTestKit.at(seconds), into: &pending)
    }

    mutating func receiverOffline(_ receiver: ReceiverID, at seconds: Double) {
        monitor.receiverWentOffline(receiver, at: MonitorTestKit.at(seconds), into: &pending)
    }

    mutating func receiverOnline(_ receiver: ReceiverID, at seconds: Double) {
        monitor.receiverCameOnline(receiver, at: MonitorTestKit.at(seconds), into: &pending)
    }
}
