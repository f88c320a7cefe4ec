import BeaconKit
@testable import BeacondCore
@testable import BeacondService
import Foundation
import Logging
import Testing

/// Background delivery as a concern of its own, with no core: it queues an absent app's events in the state
/// database through `StatePersistence`, asks the bus to start the app at most once per interval, and hands the queue
/// to the app's next client; what it asks of the daemon is in the state.outbox.
@Suite("background delivery: queueing and delivering, alone")
struct BackgroundDeliveryQueueTests {
    let fixture: ConcernFixture
    var state: ConcernState
    var delivery = BackgroundDelivery()

    init() throws {
        fixture = try ConcernFixture()
        state = ConcernState(fixture)
    }

    var configuration: DaemonConfiguration { fixture.configuration }
    var session: ClientSession { fixture.session }

    func event(_ kind: MonitoringEvent<EngineKey>.Kind, at seconds: Int64) throws -> MonitoringEvent<EngineKey> {
        MonitoringEvent(
            kind: kind, key: .region(client: session.number, identifier: "front"), region: try CoreHarness.region("front"),
            timestamp: CoreHarness.origin + .seconds(seconds))
    }

    static func activations(_ effects: [DaemonEffect]) -> [String] {
        effects.compactMap { if case .activate(let name, _) = $0 { name } else { nil } }
    }

    @Test("an absent app's events are queued, it is started once per activation_interval, and the expiry timer is armed for the oldest")
    mutating func queues() throws {
        delivery.queue(
            .didEnterRegion, try event(.didEnterRegion, at: 0), of: session, configuration: configuration, &state.persistence, &state.outbox)
        #expect(Self.activations(state.outbox.take()) == ["org.example.Door"])
        #expect(state.outbox.armedTimers[.queueExpiry] == CoreHarness.origin + configuration.queueTTL + .milliseconds(1))

        state.outbox.now = CoreHarness.origin + .seconds(10)
        delivery.queue(
            .didExitRegion, try event(.didExitRegion, at: 10), of: session, configuration: configuration, &state.persistence, &state.outbox)
        #expect(Self.activations(state.outbox.take()).isEmpty, "started again within activation_interval")
        #expect(
            state.outbox.armedTimers[.queueExpiry] == CoreHarness.origin + configuration.queueTTL + .milliseconds(1), "the oldest still expires first"
        )

        state.persistence.commit(.powerLoss, force: false, current: [:], &state.outbox)
        #expect(try state.persistence.queuedEventCounts() == [CoreHarness.door: 2])
    }

    @Test("the app's next client gets its queue late and in order, once; an app no longer allowed to monitor gets it discarded")
    mutating func delivers() throws {
        delivery.queue(
            .didEnterRegion, try event(.didEnterRegion, at: 0), of: session, configuration: configuration, &state.persistence, &state.outbox)
        delivery.queue(.didExitRegion, try event(.didExitRegion, at: 5), of: session, configuration: configuration, &state.persistence, &state.outbox)
        state.persistence.commit(.powerLoss, force: false, current: [:], &state.outbox)
        _ = state.outbox.take()

        BackgroundDelivery.deliverQueue(
            to: session, status: .authorizedAlways, configuration: configuration, &state.persistence, &state.outbox)
        let delivered = state.outbox.take().compactMap { effect -> String? in
            guard case .notify(_, let event, _) = effect else { return nil }
            switch event {
            case .didEnterRegion(_, let info): return "enter late=\(info.late)"
            case .didExitRegion(_, let info): return "exit late=\(info.late)"
            default: return nil
            }
        }
        #expect(delivered == ["enter late=true", "exit late=true"])
        BackgroundDelivery.deliverQueue(
            to: session, status: .authorizedAlways, configuration: configuration, &state.persistence, &state.outbox)
        #expect(!state.outbox.take().contains { if case .notify = $0 { true } else { false } }, "sent twice before its removal was saved")
        let settles = state.persistence.signalsSent()
        #expect(settles)
        state.persistence.commit(.powerLoss, force: false, current: [:], &state.outbox)
        #expect(try state.persistence.queuedEventCounts()[CoreHarness.door, default: 0] == 0)

        delivery.queue(
            .didEnterRegion, try event(.didEnterRegion, at: 9), of: session, configuration: configuration, &state.persistence, &state.outbox)
        state.persistence.commit(.powerLoss, force: false, current: [:], &state.outbox)
        _ = state.outbox.take()
        BackgroundDelivery.deliverQueue(to: session, status: .denied, configuration: configuration, &state.persistence, &state.outbox)
        #expect(!state.outbox.take().contains { if case .notify = $0 { true } else { false } })
        state.persistence.commit(.powerLoss, force: false, current: [:], &state.outbox)
        #expect(try state.persistence.queuedEventCounts()[CoreHarness.door, default: 0] == 0, "discarded")
    }
}
