import BeaconKit
import BeacondAPI
import DBus
import Logging

/// Background delivery for Always apps: Core Location keeps monitoring for an app that is not running and
/// relaunches it to deliver the event. Here a region event of a client whose connection is gone is queued
/// durably for its app (bounded, with a time to live), the app's D-Bus name is started if it declares one,
/// and the app's next client receives the queue, in order, each event marked late with its original time.
extension BeaconDaemon {
    /// The event dictionary every region event signal carries after its region: when it happened, and whether
    /// it is delivered late (it waited in the app's queue). `dropped` > 0 on the first late event after some
    /// were dropped (queue full or too old).
    func eventInfo(at timestamp: Timestamp, late: Bool, dropped: Int = 0) -> DBusValue {
        var info: [String: DBusValue] = [
            BeacondEventInfoKey.timestamp: .uint64(UInt64(clamping: timestamp.microsecondsSinceEpoch)),
            BeacondEventInfoKey.late: .boolean(late),
        ]
        if dropped > 0 { info[BeacondEventInfoKey.droppedBefore] = .uint32(UInt32(clamping: dropped)) }
        return .vardict(info)
    }

    func queueForApp(_ session: ClientSession, _ kind: QueuedRegionEvent.Kind, _ event: MonitoringEvent<EngineKey>) {
        saveLater(.queueEvent(QueuedRegionEvent(appID: session.appID, kind: kind, region: event.region,
                                                timestamp: event.timestamp),
                              limit: configuration.queueLimit))
        logger.info("\(kind.rawValue) of \(event.region.identifier) queued for \(session.appID): it has no client now",
                    metadata: metadata(session))
        // Nothing else queued waits for expiry: this event is the next to expire (a queued one is never newer).
        if queueExpiry == nil { armQueueExpiry(at: event.timestamp) }
        activate(session.appID)
    }

    /// `queue_ttl` is kept whether or not the app comes back: one timer fires when the oldest queued event expires,
    /// drops every expired event (counted, so the app's next client hears `DroppedBefore`), and is armed again for
    /// the next oldest. Called at start, when an event is queued, and when the configuration changes.
    func scheduleQueueExpiry() {
        stopQueueExpiry()
        let oldest: Timestamp?
        do {
            oldest = try store.oldestQueuedEventTime()
        } catch {
            logger.error("cannot read the queued events to expire them: \(error)")
            return
        }
        guard let oldest else { return }
        armQueueExpiry(at: oldest)
    }

    func stopQueueExpiry() {
        if let queueExpiry { loop.cancelTimer(queueExpiry) }
        queueExpiry = nil
    }

    /// The expiry timer for an event that happened at `oldest`.
    func armQueueExpiry(at oldest: Timestamp) {
        stopQueueExpiry()
        let due = BackgroundDelivery.expiryDelay(oldest: oldest, ttl: configuration.queueTTL, now: clock())
        queueExpiry = loop.schedule(at: .now + due + .milliseconds(1)) {
            self.assumeIsolated { daemon in
                daemon.queueExpiry = nil
                daemon.dropExpiredQueuedEvents()
                daemon.scheduleQueueExpiry()
            }
        }
    }

    func dropExpiredQueuedEvents() {
        commitState()
        do {
            let dropped = try store.dropExpiredQueuedEvents(before: clock() - configuration.queueTTL)
            for (appID, count) in dropped.sorted(by: { $0.key < $1.key }) {
                logger.notice("\(count) queued events of \(appID) expired (older than queue_ttl = \(configuration.queueTTL)); its next client hears DroppedBefore",
                              metadata: ["client.app": "\(appID)"])
            }
        } catch {
            logger.error("cannot drop the expired queued events: \(error)")
        }
    }

    /// Asks the bus to start the app's declared `dbus_name` (its `.service` file says how), at most once per
    /// `activation_interval` per app, so a flapping region cannot fork-bomb the machine.
    func activate(_ appID: String) {
        guard let name = configuration.apps[appID]?.dbusName, let server else { return }
        guard delivery.shouldActivate(appID, at: clock(), interval: configuration.activationInterval) else { return }
        logger.info("starting \(name) on the bus for \(appID) to deliver its queued region events")
        server.callAsync(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                         interface: "org.freedesktop.DBus", member: "StartServiceByName",
                         arguments: [.string(name), .uint32(0)]) { result in
            self.assumeIsolated { daemon in
                switch result {
                case .success(let reply):
                    // 1: started now; 2: it was already running (its client may be about to register).
                    let started = reply.first == .uint32(1)
                    daemon.logger.info("\(name) \(started ? "started" : "was already running") for \(appID)")
                case .failure(let error):
                    let fix = "install a D-Bus service file for \(name) (/usr/share/dbus-1/system-services/\(name).service "
                        + "with Name=, Exec= and User=), or remove dbus_name from the app's declaration"
                    daemon.logger.warning("could not start \(name) for \(appID): \(error.name): \(error.message). Fix: \(fix)")
                }
            }
        }
    }

    /// The app's queue to its new client, oldest first, after the reply to RegisterClient; removed from the
    /// database once sent (a crash before that sends them again rather than losing them).
    func deliverQueuedEvents(to session: ClientSession) {
        commitState()
        let ttl = configuration.queueTTL
        let queued: QueuedEvents
        do {
            queued = try store.queuedEvents(of: session.appID, expiredBefore: clock() - ttl)
        } catch {
            logger.error("cannot read the events queued for \(session.appID): \(error)", metadata: metadata(session))
            return
        }
        let status = effectiveStatus(session.appID)
        switch BackgroundDelivery.plan(queued, alreadySent: { journal.wasSent(queuedEvent: $0) }, allowsMonitoring: status.allowsMonitoring) {
        case .nothing(let dropped):
            if dropped > 0 {
                // Kept: the count goes with the next event the app gets.
                logger.notice("\(dropped) queued events of \(session.appID) were dropped (queue_limit or queue_ttl) and none is left to deliver",
                              metadata: metadata(session))
            }
        case .discard(let ids):
            logger.notice("\(ids.count) queued events of \(session.appID) discarded: it is \(status.rawValue) now",
                          metadata: metadata(session))
            saveLater(.removeQueuedEvents(appID: session.appID, ids: ids))
        case .deliver(let deliveries, let dropped):
            for delivery in deliveries {
                let event = delivery.event
                let member = event.kind == .didEnterRegion ? BeacondMember.didEnterRegion : BeacondMember.didExitRegion
                signalClient(session, member, [BeaconDictionaries.dictionary(event.region),
                                               eventInfo(at: event.timestamp, late: true, dropped: delivery.droppedBefore)])
            }
            if dropped > 0 {
                let limit = configuration.queueLimit
                logger.notice("\(dropped) queued events of \(session.appID) were dropped before delivery (more than queue_limit = \(limit), or older than queue_ttl)",
                              metadata: metadata(session))
            }
            logger.info("delivered \(deliveries.count) queued region events to \(session.path) (\(session.appID))",
                        metadata: metadata(session))
            journal.queuedEventsSent(appID: session.appID, ids: deliveries.map(\.event.id))
            scheduleFlush()
        }
    }
}
