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
        h.see(beacon, at: 110)                       // this node's own scanner too
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
        #expect(h.take() == ["1.0 didDetermineState(inside) a", "1.0 didEnterRegion a", "5.0 didDetermineState(unknown) a",
                             "61.0 didDetermineState(inside) a"])
    }

    @Test("heard by another online receiver, or by this node, lately: an offline receiver changes nothing")
    func anotherReceiverKeepsItInside() throws {
        var h = try harness()
        h.see(beacon, by: kitchen, at: 1)
        h.see(beacon, by: hall, at: 2)
        h.receiverOffline(kitchen, at: 5)
        #expect(h.take() == ["1.0 didDetermineState(inside) a", "1.0 didEnterRegion a"])
        h.advance(to: 32)                         // hall heard it last at 2
        #expect(h.take() == ["32.0 didDetermineState(outside) a", "32.0 didExitRegion a"])

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
        h.receiverOffline(kitchen, at: 40)        // hall's hearing (1) is older than 40 - 30: only kitchen counts
        #expect(h.take().suffix(1) == ["40.0 didDetermineState(unknown) a"])
    }

    @Test("heard by two receivers that both go offline: it waits for both")
    func waitsForEveryReceiverThatHeardIt() throws {
        var h = try harness()
        h.see(beacon, by: kitchen, at: 1)
        h.see(beacon, by: hall, at: 2)
        h.receiverOffline(kitchen, at: 5)
        #expect(h.take().count == 2)              // inside, entry: hall still online
        h.receiverOffline(hall, at: 6)
        #expect(h.take() == ["6.0 didDetermineState(unknown) a"])
        h.receiverOnline(kitchen, at: 100)
        #expect(h.nextDeadline == nil)            // hall, which also heard it, is still offline
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
        h.receiverOnline(kitchen, at: 60)         // nothing waits for it any more
        #expect(h.nextDeadline == 80)
        h.advance(to: 80)
        #expect(h.take() == ["80.0 didDetermineState(outside) a", "80.0 didExitRegion a"])
    }

    @Test("a region waiting for its exit when the receiver goes offline waits instead of exiting")
    func pendingExitWaits() throws {
        var h = try harness()
        h.see(beacon, by: kitchen, at: 1)
        h.suspend(at: 2)                          // this node's scanner blind: unknown, exit pending after resume
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
