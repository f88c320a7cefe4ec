import BeaconKit
@testable import BeacondService
@testable import BeacondCore
import Foundation
import Testing

/// Background delivery's decisions without a bus or a database: activation's rate limit, queue expiry, and what
/// an app's new client gets from its queue.
@Suite("background delivery")
struct BackgroundDeliveryTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let start = Timestamp(microsecondsSinceEpoch: 1_800_000_000_000_000)

    static func event(_ id: Int64, _ kind: QueuedRegionEvent.Kind = .didEnterRegion) throws -> QueuedRegionEvent {
        var event = QueuedRegionEvent(
            appID: "org.example.Demo", kind: kind,
            region: try BeaconRegion(identifier: "lobby", constraint: BeaconIdentityConstraint(uuid: uuid)),
            timestamp: start + .seconds(Int64(id)))
        event.id = id
        return event
    }

    /// At most one activation per interval per app; another app is not held back by the first.
    @Test func activationIsRateLimitedPerApp() {
        var delivery = BackgroundDelivery()
        let interval = Duration.seconds(60)
        let asked = [
            delivery.shouldActivate("a", at: Self.start, interval: interval),
            delivery.shouldActivate("a", at: Self.start + .seconds(59), interval: interval),
            delivery.shouldActivate("b", at: Self.start + .seconds(59), interval: interval),
            delivery.shouldActivate("a", at: Self.start + .seconds(60), interval: interval),
            delivery.shouldActivate("a", at: Self.start + .seconds(61), interval: interval),
        ]
        #expect(asked == [true, false, true, true, false])
    }

    /// The expiry timer fires when the oldest event is older than queue_ttl, at once for one already expired.
    @Test func theOldestEventSetsTheExpiry() {
        #expect(
            BackgroundDelivery.expiryDelay(oldest: Self.start, ttl: .seconds(3600), now: Self.start + .seconds(600))
                == .seconds(3000))
        #expect(BackgroundDelivery.expiryDelay(oldest: Self.start, ttl: .seconds(3600), now: Self.start + .seconds(7200)) == .zero)
    }

    /// Oldest first, all late; the loss count goes with the first event only.
    @Test func aNewClientGetsTheQueueInOrderWithTheLossOnTheFirst() throws {
        let queued = QueuedEvents(events: [try Self.event(4), try Self.event(5, .didExitRegion), try Self.event(6)], dropped: 3)
        let plan = BackgroundDelivery.plan(queued, alreadySent: { _ in false }, allowsMonitoring: true)
        #expect(
            plan
                == .deliver(
                    [
                        .init(event: try Self.event(4), droppedBefore: 3),
                        .init(event: try Self.event(5, .didExitRegion), droppedBefore: 0),
                        .init(event: try Self.event(6), droppedBefore: 0),
                    ], dropped: 3))
    }

    /// Events sent to another client whose removal is not saved yet are not sent twice.
    @Test func eventsAlreadySentAreNotSentAgain() throws {
        let queued = QueuedEvents(events: [try Self.event(4), try Self.event(5)], dropped: 0)
        #expect(
            BackgroundDelivery.plan(queued, alreadySent: { $0 == 4 }, allowsMonitoring: true)
                == .deliver([.init(event: try Self.event(5), droppedBefore: 0)], dropped: 0))
        #expect(BackgroundDelivery.plan(queued, alreadySent: { _ in true }, allowsMonitoring: true) == .nothing(dropped: 0))
    }

    /// An app that is no longer Always does not get events of the time it was: they are discarded. With nothing
    /// left, a loss is kept for the next event (not reported as delivered).
    @Test func anAppNoLongerAllowedGetsNothing() throws {
        let queued = QueuedEvents(events: [try Self.event(4), try Self.event(5)], dropped: 1)
        #expect(BackgroundDelivery.plan(queued, alreadySent: { _ in false }, allowsMonitoring: false) == .discard(ids: [4, 5]))
        #expect(
            BackgroundDelivery.plan(QueuedEvents(events: [], dropped: 2), alreadySent: { _ in false }, allowsMonitoring: true)
                == .nothing(dropped: 2))
    }
}
