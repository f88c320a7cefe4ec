import BeacondCore

/// Keeps a client that does not read its socket from stalling beacond for everyone.
///
/// dbus-daemon charges the messages it holds for a recipient to their *sender*: once what beacond sent to a
/// peer that never reads passes the bus's `max_outgoing_bytes` (127 MB on a stock bus), the bus stops reading
/// from beacond, so every reply to every other client waits, and libdbus buffers beacond's unsent messages
/// without limit (measured: 950 MB, calls of others timing out; docs/performance.md, Under abuse). No D-Bus
/// message tells a sender what a recipient has read, but a `Peer.Ping` does: libdbus, GDBus and sd-bus answer
/// it when they dispatch, after everything sent before it. So beacond counts the bytes it sent each peer,
/// pings, and counts them read when the answer comes. Droppable signals (`DidRangeBeacons`, which the next
/// cycle replaces) are not sent to a peer with more than `perPeerLimit` unread, nor to any peer with unread
/// bytes while all peers together have more than `totalLimit`. Region events are never dropped: they are small
/// and rare, and a client must not miss an entry or exit.
struct SignalFlowControl {
    /// Unread bytes one peer may have before its droppable signals are dropped.
    let perPeerLimit: Int
    /// Unread bytes all peers together may have (well under the bus's limit for beacond).
    let totalLimit: Int

    struct Peer {
        var sent = 0
        /// Bytes known read: everything sent before the last answered ping.
        var read = 0
        /// `sent` when the ping in flight was sent.
        var pingMark: Int?
        /// Droppable signals dropped since the peer last caught up.
        var dropped = 0
        var unread: Int { sent - read }
    }

    private(set) var peers: [String: Peer] = [:]
    private(set) var totalUnread = 0

    init(perPeerLimit: Int = 8 << 20, totalLimit: Int = 48 << 20) {
        self.perPeerLimit = perPeerLimit
        self.totalLimit = totalLimit
    }

    enum Admission: Equatable {
        case send
        /// Dropped; `first` is true for the first drop since the peer last caught up (log it once).
        case drop(first: Bool)
    }

    /// Whether a droppable signal of `bytes` may go to `peer` now (and if so it is counted as sent).
    mutating func admitDroppable(to peer: String, bytes: Int) -> Admission {
        var state = peers[peer] ?? Peer()
        let lagging = state.unread > 0 && (state.unread + bytes > perPeerLimit || totalUnread + bytes > totalLimit)
        guard lagging else {
            peers[peer] = state
            recordSent(to: peer, bytes: bytes)
            return .send
        }
        state.dropped += 1
        peers[peer] = state
        return .drop(first: state.dropped == 1)
    }

    /// Counts a signal that is sent whatever the peer does (region events, property changes).
    mutating func recordSent(to peer: String, bytes: Int) {
        peers[peer, default: Peer()].sent += bytes
        totalUnread += bytes
    }

    /// Peers with unread bytes and no ping in flight: ping each, and pass the mark to `pingAnswered`.
    mutating func pingsToSend() -> [(peer: String, mark: Int)] {
        var pings: [(String, Int)] = []
        for (name, state) in peers where state.unread > 0 && state.pingMark == nil {
            peers[name]?.pingMark = state.sent
            pings.append((name, state.sent))
        }
        return pings.sorted { $0.0 < $1.0 }
    }

    /// The peer answered the ping sent at `mark`: it has read everything before it. Returns how many droppable
    /// signals it missed if it had been lagging and has now caught up (0 otherwise).
    mutating func pingAnswered(by peer: String, mark: Int) -> Int {
        guard var state = peers[peer], state.pingMark == mark else { return 0 }
        let newlyRead = max(0, mark - state.read)
        state.read = max(state.read, mark)
        state.pingMark = nil
        totalUnread -= newlyRead
        var missed = 0
        if state.dropped > 0, state.unread <= perPeerLimit / 2 {
            missed = state.dropped
            state.dropped = 0
        }
        peers[peer] = state
        return missed
    }

    /// The ping got no answer (timeout): the peer still counts as not having read; the next flush pings again.
    mutating func pingFailed(for peer: String, mark: Int) {
        guard peers[peer]?.pingMark == mark else { return }
        peers[peer]?.pingMark = nil
    }

    /// The peer left the bus: what it did not read is the bus's to discard, not beacond's to count.
    mutating func forget(_ peer: String) {
        guard let state = peers.removeValue(forKey: peer) else { return }
        totalUnread -= state.unread
    }
}
