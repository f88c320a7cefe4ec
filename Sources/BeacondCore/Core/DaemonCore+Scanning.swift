import BeaconKit
import BeacondAPI

/// The engine's side: its events routed to the clients (`ClientService.route`), one timer for its next deadline
/// (no polling), and scanning only while someone monitors or ranges (`ScanControl` decides, this carries it out).
extension DaemonCore {
    package typealias EngineEvent = BeaconEngine.Event

    /// Engine events from outside a client's call (scanner input, another receiver's reading, a timer): delivered to
    /// their clients, then the engine settled.
    package mutating func engineChanged(_ events: [EngineEvent]) {
        if !events.isEmpty {
            clients.route(events, configuration: configuration, nodeRuns: fleet.nodeRuns, &outbox, &persistence, &delivery)
        }
        engineSettled()
    }

    /// After any change to the engine: re-arm its deadline timer, start or stop scanning.
    package mutating func engineSettled() {
        outbox.arm(.engine, forDeadline: clients.engine.nextDeadline())
        perform(scanControl.needChanged(needsScanning: needsScanning))
    }

    // MARK: Scanning

    /// Someone monitors or ranges, or this node publishes readings to an MQTT broker.
    package var needsScanning: Bool { clients.engine.needsScanning || (fleet.nodeRuns && configuration.mqtt.publishes) }

    /// Carries out what scan control decided, in order: detection resumed or suspended here, the rest as effects.
    package mutating func perform(_ actions: [ScanControl.Action]) {
        for action in actions {
            switch action {
            case .resumeDetection:
                clients.engine.resumeDetection(at: now)
                publishing.resumeDetection(at: now)
                publishing.armTimer(&outbox)
                outbox.arm(.engine, forDeadline: clients.engine.nextDeadline())
            case .suspendDetection:
                // Regions become unknown rather than exiting while nothing can be seen.
                publishing.update(presence: clients.engine.presence, &outbox) { [now] in $0.suspendDetection(at: now, placement: $1) }
                let events = clients.engine.suspendDetection(at: now)
                clients.route(events, configuration: configuration, nodeRuns: fleet.nodeRuns, &outbox, &persistence, &delivery)
                outbox.arm(.engine, forDeadline: clients.engine.nextDeadline())
            default:
                ScanControl.carryOut(action, &outbox)
            }
        }
        scanControl.showState(&outbox)
    }
}
