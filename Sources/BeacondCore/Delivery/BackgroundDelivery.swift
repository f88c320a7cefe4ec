package import BeaconKit

/// Background delivery's decisions, with no I/O: when to ask the bus to start an app (D-Bus activation, rate
/// limited per app), when the queue's oldest event expires, and what an app's new client gets from its queue.
/// The daemon reads and writes the queue in the state database and sends the signals; this decides.
package struct BackgroundDelivery {
    /// When beacond last asked the bus to start each app.
    private var lastActivation: [String: Timestamp] = [:]

    /// Whether to ask the bus to start `appID` now: at most once per `interval` per app, so a flapping region
    /// cannot fork-bomb the machine. A yes is remembered as the app's last activation.
    package mutating func shouldActivate(_ appID: String, at now: Timestamp, interval: Duration) -> Bool {
        if let last = lastActivation[appID], now - last < interval { return false }
        lastActivation[appID] = now
        return true
    }

    /// How long until an event that happened at `oldest` is older than `ttl` (never negative: one already
    /// expired is due now).
    package static func expiryDelay(oldest: Timestamp, ttl: Duration, now: Timestamp) -> Duration {
        max(oldest + ttl - now, .zero)
    }

    /// One queued event as the new client receives it: late, at its original time, and on the first one after a
    /// loss, how many were dropped before it.
    package struct Delivery: Equatable {
        package var event: QueuedRegionEvent
        package var droppedBefore: Int
    }

    /// What the app's new client gets from its queue.
    package enum Plan: Equatable {
        /// Nothing to send; `dropped` events were lost (the count waits for the next event the app gets).
        case nothing(dropped: Int)
        /// The app is no longer allowed to monitor: events of a time it was Always are not handed to it.
        case discard(ids: [Int64])
        /// Send these, oldest first; `dropped` were lost before them.
        case deliver([Delivery], dropped: Int)
    }

    /// The plan for `queued` (read from the database, oldest first): events already sent to another client whose
    /// removal is not yet saved (`alreadySent`) are not sent again.
    package static func plan(_ queued: QueuedEvents, alreadySent: (Int64) -> Bool, allowsMonitoring: Bool) -> Plan {
        let events = queued.events.filter { !alreadySent($0.id) }
        guard !events.isEmpty else { return .nothing(dropped: queued.dropped) }
        guard allowsMonitoring else { return .discard(ids: events.map(\.id)) }
        let deliveries = events.enumerated().map { index, event in
            Delivery(event: event, droppedBefore: index == 0 ? queued.dropped : 0)
        }
        return .deliver(deliveries, dropped: queued.dropped)
    }
}
