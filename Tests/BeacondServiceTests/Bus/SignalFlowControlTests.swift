@testable import BeacondService
@testable import BeacondCore
import DBus
import Testing

@Suite("signal flow control: a peer that does not read")
struct SignalFlowControlTests {
    @Test("a peer that answers its pings gets every droppable signal")
    func readingPeer() {
        var flow = SignalFlowControl(perPeerLimit: 1000, totalLimit: 5000)
        for _ in 0..<100 {
            #expect(flow.admitDroppable(to: ":1.5", bytes: 600) == .send)
            for ping in flow.pingsToSend() { #expect(flow.pingAnswered(by: ping.peer, mark: ping.mark) == 0) }
        }
        #expect(flow.totalUnread == 0)
    }

    @Test("a peer that never answers gets droppable signals up to its limit, then none; region events still go")
    func silentPeer() {
        var flow = SignalFlowControl(perPeerLimit: 1000, totalLimit: 5000)
        #expect(flow.admitDroppable(to: ":1.5", bytes: 600) == .send)
        #expect(flow.pingsToSend().map(\.peer) == [":1.5"])
        // Its first signal alone may exceed nothing; the second would pass the limit while the first is unread.
        #expect(flow.admitDroppable(to: ":1.5", bytes: 600) == .drop(first: true))
        #expect(flow.admitDroppable(to: ":1.5", bytes: 600) == .drop(first: false))
        flow.recordSent(to: ":1.5", bytes: 512)
        #expect(flow.peers[":1.5"]?.unread == 1112)
        // A ping is in flight: no second one until it is answered or fails.
        #expect(flow.pingsToSend().isEmpty)
        // Another peer is not affected.
        #expect(flow.admitDroppable(to: ":1.9", bytes: 600) == .send)
    }

    @Test("a peer that catches up gets signals again, and is told how many it missed once")
    func catchingUp() {
        var flow = SignalFlowControl(perPeerLimit: 1000, totalLimit: 5000)
        _ = flow.admitDroppable(to: ":1.5", bytes: 900)
        let ping = flow.pingsToSend()[0]
        for _ in 0..<3 { _ = flow.admitDroppable(to: ":1.5", bytes: 900) }
        #expect(flow.pingAnswered(by: ":1.5", mark: ping.mark) == 3)
        #expect(flow.admitDroppable(to: ":1.5", bytes: 900) == .send)
        // A stale answer (a mark that is not the ping in flight) changes nothing.
        #expect(flow.pingAnswered(by: ":1.5", mark: 1) == 0)
    }

    @Test("a failed ping leaves the bytes unread and lets the next flush ping again")
    func failedPing() {
        var flow = SignalFlowControl(perPeerLimit: 1000, totalLimit: 5000)
        _ = flow.admitDroppable(to: ":1.5", bytes: 900)
        let ping = flow.pingsToSend()[0]
        flow.pingFailed(for: ":1.5", mark: ping.mark)
        #expect(flow.peers[":1.5"]?.unread == 900)
        #expect(flow.pingsToSend().map(\.peer) == [":1.5"])
    }

    @Test("together, lagging peers are held to the total limit; a peer that has read everything is not")
    func totalLimit() {
        var flow = SignalFlowControl(perPeerLimit: 1000, totalLimit: 2500)
        for peer in [":1.1", ":1.2", ":1.3"] { #expect(flow.admitDroppable(to: peer, bytes: 800) == .send) }
        _ = flow.pingsToSend()
        #expect(flow.totalUnread == 2400)
        // :1.1 has unread bytes and the total would pass 2500: dropped although its own limit is not reached.
        #expect(flow.admitDroppable(to: ":1.1", bytes: 150) == .drop(first: true))
        // A new peer with nothing unread is always served.
        #expect(flow.admitDroppable(to: ":1.4", bytes: 800) == .send)
    }

    @Test("a peer that leaves the bus no longer counts")
    func forget() {
        var flow = SignalFlowControl(perPeerLimit: 1000, totalLimit: 5000)
        _ = flow.admitDroppable(to: ":1.5", bytes: 900)
        flow.forget(":1.5")
        #expect(flow.totalUnread == 0 && flow.peers.isEmpty)
    }

    @Test("the size estimate grows with the content and errs high for a beacon dictionary")
    func sizeEstimate() {
        let beacon = DBusValue.vardict([
            "UUID": .string("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"), "Major": .uint16(1),
            "Minor": .uint16(2), "RSSI": .int16(-60), "Accuracy": .double(1.5),
            "Proximity": .string("near"), "TxPower": .int16(-59), "Timestamp": .uint64(1),
        ])
        // Hand count of the wire format: 8 entries of key string + variant; about 260 bytes.
        #expect(beacon.marshalledSizeEstimate >= 260)
        #expect(beacon.marshalledSizeEstimate < 520)
        let many = DBusValue.array(elementSignature: "a{sv}", Array(repeating: beacon, count: 100))
        #expect(many.marshalledSizeEstimate >= 100 * beacon.marshalledSizeEstimate)
    }
}
