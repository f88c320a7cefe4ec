package import BeaconKit
import BeacondAPI

/// Background delivery for Always apps: Core Location keeps monitoring for an app that is not running and
/// relaunches it to deliver the event. Here a region event of a client whose connection is gone is queued
/// durably for its app (bounded, with a time to live), the app's D-Bus name is started if it declares one,
/// and the app's next client receives the queue, in order, each event marked late with its original time.
///
/// The queue lives in the state database (`StatePersistence`); what this concern owns is when each app was last
/// asked to start. What it asks of the daemon goes to the outbox.
extension BackgroundDelivery {
    /// A region event of `session`, whose connection is gone: queued for its app, whose D-Bus name is started.
    package mutating func queue(
        _ kind: QueuedRegionEvent.Kind, _ event: MonitoringEvent<EngineKey>, of session: ClientSession, configuration: DaemonConfiguration,
        _ persistence: inout StatePersistence, _ outbox: inout CoreOutbox
    ) {
        persistence.saveLater(
            .queueEvent(
                QueuedRegionEvent(appID: session.appID, kind: kind, region: event.region, timestamp: event.timestamp),
                limit: configuration.queueLimit), &outbox)
        outbox.log(.info, "\(kind.rawValue) of \(event.region.identifier) queued for \(session.appID): it has no client now", session.logMetadata)
        // Nothing else queued waits for expiry: this event is the next to expire (a queued one is never newer).
        if !outbox.isArmed(.queueExpiry) { Self.armExpiry(oldest: event.timestamp, configuration: configuration, &outbox) }
        activate(session.appID, configuration: configuration, &outbox)
    }

    /// `queue_ttl` is kept whether or not the app comes back: one timer fires when the oldest queued event expires,
    /// drops every expired event (counted, so the app's next client hears `DroppedBefore`), and is armed again for
    /// the next oldest. Called at start, when an event is queued, and when the configuration changes.
    package static func scheduleExpiry(configuration: DaemonConfiguration, _ persistence: StatePersistence, _ outbox: inout CoreOutbox) {
        outbox.cancel(.queueExpiry)
        let oldest: Timestamp?
        do {
            oldest = try persistence.oldestQueuedEventTime()
        } catch {
            outbox.log(.error, "cannot read the queued events to expire them: \(error)")
            return
        }
        guard let oldest else { return }
        armExpiry(oldest: oldest, configuration: configuration, &outbox)
    }

    /// The expiry timer for an event that happened at `oldest`.
    private static func armExpiry(oldest: Timestamp, configuration: DaemonConfiguration, _ outbox: inout CoreOutbox) {
        let due = expiryDelay(oldest: oldest, ttl: configuration.queueTTL, now: outbox.now)
        outbox.arm(.queueExpiry, at: outbox.now + due + .milliseconds(1))
    }

    /// Drops every queued event older than `queue_ttl`, each app's count logged (what is pending must be committed
    /// first: an event queued in this turn is in the journal, not yet in the database).
    package static func dropExpired(configuration: DaemonConfiguration, _ persistence: StatePersistence, _ outbox: inout CoreOutbox) {
        do {
            let dropped = try persistence.dropExpiredQueuedEvents(before: outbox.now - configuration.queueTTL)
            for (appID, count) in dropped.sorted(by: { $0.key < $1.key }) {
                outbox.log(
                    .notice,
                    """
                    \(count) queued events of \(appID) expired (older than queue_ttl = \(configuration.queueTTL)); \
                    its next client hears DroppedBefore
                    """,
                    ["client.app": "\(appID)"])
            }
        } catch {
            outbox.log(.error, "cannot drop the expired queued events: \(error)")
        }
    }

    /// Asks the bus to start the app's declared `dbus_name` (its `.service` file says how), at most once per
    /// `activation_interval` per app, so a flapping region cannot fork-bomb the machine.
    private mutating func activate(_ appID: String, configuration: DaemonConfiguration, _ outbox: inout CoreOutbox) {
        guard let name = configuration.apps[appID]?.dbusName else { return }
        guard shouldActivate(appID, at: outbox.now, interval: configuration.activationInterval) else { return }
        outbox.emit(.activate(dbusName: name, appID: appID))
    }

    /// The app's queue to its new client, oldest first, after the reply to RegisterClient; removed from the
    /// database once sent (a crash before that sends them again rather than losing them). What is pending must be
    /// committed first. `status`: the app's effective status now (events are discarded if it may not monitor).
    package static func deliverQueue(
        to session: ClientSession, status: AuthorizationStatus, configuration: DaemonConfiguration,
        _ persistence: inout StatePersistence, _ outbox: inout CoreOutbox
    ) {
        let queued: QueuedEvents
        do {
            queued = try persistence.queuedEvents(of: session.appID, expiredBefore: outbox.now - configuration.queueTTL)
        } catch {
            outbox.log(.error, "cannot read the events queued for \(session.appID): \(error)", session.logMetadata)
            return
        }
        let sentBefore = persistence.journal
        switch plan(queued, alreadySent: { sentBefore.wasSent(queuedEvent: $0) }, allowsMonitoring: status.allowsMonitoring) {
        case .nothing(let dropped):
            if dropped > 0 {
                // Kept: the count goes with the next event the app gets.
                outbox.log(
                    .notice,
                    "\(dropped) queued events of \(session.appID) were dropped (queue_limit or queue_ttl) and none is left to deliver",
                    session.logMetadata)
            }
        case .discard(let ids):
            outbox.log(.notice, "\(ids.count) queued events of \(session.appID) discarded: it is \(status.rawValue) now", session.logMetadata)
            persistence.saveLater(.removeQueuedEvents(appID: session.appID, ids: ids), &outbox)
        case .deliver(let deliveries, let dropped):
            for delivery in deliveries {
                let event = delivery.event
                let info = EventInfo(at: event.timestamp, late: true, droppedBefore: delivery.droppedBefore)
                outbox.notify(
                    session, event.kind == .didEnterRegion ? .didEnterRegion(event.region, info) : .didExitRegion(event.region, info),
                    .clientOnly)
            }
            if dropped > 0 {
                let limit = configuration.queueLimit
                outbox.log(
                    .notice,
                    """
                    \(dropped) queued events of \(session.appID) were dropped before delivery \
                    (more than queue_limit = \(limit), or older than queue_ttl)
                    """,
                    session.logMetadata)
            }
            outbox.log(.info, "delivered \(deliveries.count) queued region events to \(session.path) (\(session.appID))", session.logMetadata)
            persistence.queuedEventsSent(appID: session.appID, ids: deliveries.map(\.event.id), &outbox)
        }
    }
}
