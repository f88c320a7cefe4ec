import DBus
import BeacondCore

/// The signals waiting to go out, with the flow control towards each peer: signals are sent after the current
/// method's reply (so a client learns its object path before the first signal about it) and in the order they
/// were queued; droppable ones (ranging results, watchers' events) go only to peers that read. No I/O: the
/// daemon schedules the flush this asks for, sends what `takeForSending` returns and pings the peers it names.
struct SignalOutbox {
    struct Signal {
        var path: String
        var interface: String
        var member: String
        var arguments: [DBusValue]
        var destination: String?
    }

    /// What a droppable signal to a peer gets.
    enum Admission: Equatable {
        case send
        /// Dropped: the peer has too much unread. `firstDrop`: this episode's first (log it); `needsFlush`: a
        /// flush must come so the peer is pinged again and can be found to have caught up.
        case drop(firstDrop: Bool, unread: Int, needsFlush: Bool)
    }

    /// A generous size for a signal that is not measured (region events, property changes: a few hundred bytes).
    static let smallSignalBytes = 512

    private(set) var pending: [Signal] = []
    private var flushScheduled = false
    /// What each peer has been sent and has read, so one that never reads cannot stall the bus for beacond.
    private var flow = SignalFlowControl()
    private var pingDeniedReported = false

    /// Queues a signal. `counted`: admitted as droppable, already counted; others count as a small message.
    /// Returns whether a flush must be scheduled (none is yet).
    mutating func queue(_ signal: Signal, counted: Bool = false) -> Bool {
        if let destination = signal.destination, !counted {
            flow.recordSent(to: destination, bytes: Self.smallSignalBytes)
        }
        pending.append(signal)
        return flushNeeded()
    }

    /// Whether the caller must schedule a flush now (true once until the flush runs).
    mutating func flushNeeded() -> Bool {
        defer { flushScheduled = true }
        return !flushScheduled
    }

    /// The flush runs: everything queued, in order, to send now.
    mutating func takeForSending() -> [Signal] {
        flushScheduled = false
        defer { pending.removeAll() }
        return pending
    }

    /// Whether a droppable signal of `bytes` may go to `peer` (counted if so).
    mutating func admitDroppable(to peer: String, bytes: Int) -> Admission {
        switch flow.admitDroppable(to: peer, bytes: bytes) {
        case .send:
            return .send
        case .drop(let first):
            // A peer whose last ping failed is pinged again only by a flush.
            let needsFlush = flow.peers[peer]?.pingMark == nil && flushNeeded()
            return .drop(firstDrop: first, unread: flow.peers[peer]?.unread ?? 0, needsFlush: needsFlush)
        }
    }

    /// The peers to ping after a flush, each with the mark its answer proves read.
    mutating func pingsToSend() -> [(peer: String, mark: Int)] { flow.pingsToSend() }

    /// The peer answered (or its library sent an error: either proves it read). Returns how many droppable
    /// signals it missed while it lagged (0: it was not lagging).
    mutating func pingAnswered(by peer: String, mark: Int) -> Int { flow.pingAnswered(by: peer, mark: mark) }

    /// The bus or libdbus failed the ping (timeout, peer gone): it says nothing about what the peer read.
    mutating func pingFailed(for peer: String, mark: Int) { flow.pingFailed(for: peer, mark: mark) }

    /// The bus policy forbids the ping: no peer can be judged, so none is throttled. Returns whether this is the
    /// first time (to say so once, with the fix).
    mutating func pingDenied(for peer: String, mark: Int) -> Bool {
        _ = flow.pingAnswered(by: peer, mark: mark)
        defer { pingDeniedReported = true }
        return !pingDeniedReported
    }

    /// The peer left the bus.
    mutating func forget(_ peer: String) { flow.forget(peer) }
}
