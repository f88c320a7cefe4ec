import BeaconLocation
import Synchronization

/// A monitor's events and diagnostics, collected by tasks as they come.
final class EventLog: Sendable {
    private let state = Mutex<(events: [Monitor.Event], diagnostics: [ServiceSession.Diagnostic], ended: (any Error)??)>(
        ([], [], nil))
    private let tasks = Mutex<[Task<Void, Never>]>([])

    init(_ monitor: Monitor) {
        let events = Task { [self] in
            do {
                for try await event in monitor.events { state.withLock { $0.events.append(event) } }
                state.withLock { $0.ended = .some(nil) }
            } catch {
                state.withLock { $0.ended = .some(error) }
            }
        }
        let diagnostics = Task { [self] in
            for await diagnostic in monitor.diagnostics { state.withLock { $0.diagnostics.append(diagnostic) } }
        }
        tasks.withLock { $0 = [events, diagnostics] }
    }

    /// The demo app's monitor with `lobby` (major 1), its log, and the beacon advertising: once lobby is inside.
    static func lobbyInside(_ world: World) async throws -> (Monitor, EventLog, Advertiser) {
        let monitor = try await Monitor(appID: World.demo, bus: world.address)
        let log = EventLog(monitor)
        try await monitor.add(BeaconIdentityCondition(uuid: World.demoUUID, major: 1), identifier: "lobby")
        let beacon = Advertiser(world)
        beacon.on()
        try await until("lobby inside") { log.states == ["lobby inside"] }
        return (monitor, log, beacon)
    }

    /// Every event, state changes and diagnostics.
    var allEvents: [Monitor.Event] { state.withLock { $0.events } }
    /// The state changes.
    var events: [Monitor.Event] { allEvents.filter { $0.diagnostic == nil } }
    var states: [String] { events.map { "\($0.identifier) \($0.state.rawValue)" } }
    /// The events that carry a diagnostic, and what `print(event)` prints of every event.
    var diagnosticEvents: [Monitor.Event] { allEvents.filter { $0.diagnostic != nil } }
    var lines: [String] { allEvents.map { "\($0)" } }
    var diagnostics: [ServiceSession.Diagnostic] { state.withLock { $0.diagnostics } }
    var last: ServiceSession.Diagnostic? { diagnostics.last }
    /// Nil while the events go on; then how they ended (nil: finished).
    var ended: (any Error)?? { state.withLock { $0.ended } }

    func wait() async {
        for task in tasks.withLock({ $0 }) { await task.value }
    }
}
