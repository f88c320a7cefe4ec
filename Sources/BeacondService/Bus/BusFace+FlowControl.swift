import BeacondAPI
import DBus
import Logging
import BeacondCore

/// Flow control towards peers that do not read (`SignalFlowControl`): droppable signals are admitted or
/// dropped, and after each flush every peer with unread bytes is pinged so beacond learns what it has read.
extension BusFace {
    /// How long beacond waits for a peer to answer `Peer.Ping` before it asks again.
    static let pingTimeout: Duration = .seconds(10)

    /// Errors made by the bus or libdbus (timeout, peer gone), which say nothing about what the peer read.
    static let errorsNotFromThePeer: Set<String> = [
        "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout",
        "org.freedesktop.DBus.Error.Disconnected", "org.freedesktop.DBus.Error.ServiceUnknown",
        "org.freedesktop.DBus.Error.NameHasNoOwner", "org.freedesktop.DBus.Error.LimitsExceeded",
        "org.freedesktop.DBus.Error.NoMemory",
    ]

    /// True if the droppable signal may be sent; a drop is logged once per episode of the peer lagging.
    func admitDroppable(to peer: String, bytes: Int, what: String) -> Bool {
        switch outbox.admitDroppable(to: peer, bytes: bytes) {
        case .send:
            return true
        case .drop(let first, let unread, let needsFlush):
            // A peer whose last ping failed is pinged again only by a flush: make sure one comes, or a peer that
            // reads again after a long stop would never be found to have caught up.
            if needsFlush { flushDue() }
            if first {
                logger.warning(
                    """
                    \(peer) is not reading its messages (\(unread / 1024) KiB unread): \(what) \
                    and other ranging signals to it are dropped until it catches up, so it cannot stall beacond for other clients
                    """
                )
            }
            return false
        }
    }

    func pingPeers() {
        for (peer, mark) in outbox.pingsToSend() {
            server.callAsync(
                destination: peer, path: "/", interface: "org.freedesktop.DBus.Peer", member: "Ping",
                timeout: Self.pingTimeout
            ) { [weak self] result in
                // The answer may come after shutdown released the bus face: nothing is left to judge then.
                guard let self else { return }
                switch result {
                case .success:
                    let missed = outbox.pingAnswered(by: peer, mark: mark)
                    if missed > 0 {
                        logger.notice("\(peer) reads its messages again; it missed \(missed) ranging signals")
                    }
                case .failure(let error) where error.name == "org.freedesktop.DBus.Error.AccessDenied":
                    // The bus policy forbids the ping (an old org.beacond.conf): without it no peer can be
                    // judged, so none is throttled. Said once, with the fix.
                    if outbox.pingDenied(for: peer, mark: mark) {
                        logger.warning(
                            """
                            the bus refuses beacond's Peer.Ping to its clients (\(error.message)), \
                            so a client that never reads could stall beacond. \
                            Fix: install the current /usr/share/dbus-1/system.d/org.beacond.conf (make install) and run systemctl reload dbus
                            """
                        )
                    }
                case .failure(let error) where Self.errorsNotFromThePeer.contains(error.name):
                    outbox.pingFailed(for: peer, mark: mark)
                case .failure:
                    // An error the peer itself sent (a library that does not implement Peer) proves it read.
                    _ = outbox.pingAnswered(by: peer, mark: mark)
                }
            }
        }
    }
}
