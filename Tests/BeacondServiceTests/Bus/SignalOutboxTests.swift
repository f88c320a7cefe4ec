@testable import BeacondService
@testable import BeacondCore
import DBus
import Testing

/// The outbox without a bus: order, one flush per turn, flow control's drops and pings.
@Suite("signal outbox")
struct SignalOutboxTests {
    static func signal(_ member: String, to peer: String? = ":1.7") -> SignalOutbox.Signal {
        SignalOutbox.Signal(
            path: "/org/beacond/client/1", interface: "org.beacond.LocationManager1", member: member,
            arguments: [], destination: peer)
    }

    /// Signals leave in the order they were queued; the first queued since a flush asks for one, later ones do not.
    @Test func oneFlushPerTurnInOrder() {
        var outbox = SignalOutbox()
        let asked = [
            outbox.queue(Self.signal("DidEnterRegion")), outbox.queue(Self.signal("PropertiesChanged")),
            outbox.flushNeeded(),
        ]
        #expect(asked == [true, false, false])
        let sent = outbox.takeForSending().map(\.member)
        #expect(sent == ["DidEnterRegion", "PropertiesChanged"])
        #expect(outbox.pending.isEmpty)
        let again = outbox.queue(Self.signal("DidExitRegion"))
        #expect(again)
    }

    /// A peer that does not read: droppable signals stop once it has too much unread (the first drop is the one to
    /// log); a ping answered shows it caught up, and says how many it missed.
    @Test func droppableSignalsStopForAPeerThatDoesNotRead() {
        var outbox = SignalOutbox()
        let peer = ":1.9"
        let bytes = 1 << 20
        var admissions: [SignalOutbox.Admission] = []
        for _ in 0..<10 { admissions.append(outbox.admitDroppable(to: peer, bytes: bytes)) }
        #expect(admissions.prefix(8).allSatisfy { $0 == .send })
        guard case .drop(let first, let unread, _) = admissions[8], case .drop(let second, _, _) = admissions[9] else {
            Issue.record("a peer with 8 MiB unread still gets droppable signals: \(admissions)")
            return
        }
        #expect(first && !second)
        #expect(unread == 8 * bytes)
        let pings = outbox.pingsToSend()
        #expect(pings.map(\.peer) == [peer])
        let missed = outbox.pingAnswered(by: peer, mark: pings[0].mark)
        #expect(missed == 2)
        let after = outbox.admitDroppable(to: peer, bytes: bytes)
        #expect(after == .send)
    }

    /// Region events are never dropped: they are queued and counted, whatever the peer has unread.
    @Test func regionEventsAreNeverDropped() {
        var outbox = SignalOutbox()
        for _ in 0..<20 { _ = outbox.admitDroppable(to: ":1.7", bytes: 1 << 20) }
        _ = outbox.queue(Self.signal("DidExitRegion"))
        let sent = outbox.takeForSending().map(\.member)
        #expect(sent == ["DidExitRegion"])
    }

    /// A bus policy that forbids the ping is reported once, and judges nobody.
    @Test func aDeniedPingIsReportedOnce() {
        var outbox = SignalOutbox()
        for _ in 0..<9 { _ = outbox.admitDroppable(to: ":1.7", bytes: 1 << 20) }
        let mark = outbox.pingsToSend()[0].mark
        let reported = [outbox.pingDenied(for: ":1.7", mark: mark), outbox.pingDenied(for: ":1.7", mark: mark)]
        #expect(reported == [true, false])
        let after = outbox.admitDroppable(to: ":1.7", bytes: 1 << 20)
        #expect(after == .send)
    }
}
