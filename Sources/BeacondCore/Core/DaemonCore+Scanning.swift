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
        armEngineTimer()
        updateScanning()
    }

    package mutating func armEngineTimer() {
        outbox.arm(.engine, forDeadline: clients.engine.nextDeadline())
    }

    // MARK: Scanning

    /// Someone monitors or ranges, or this node publishes readings to an MQTT broker.
    package var needsScanning: Bool { clients.engine.needsScanning || (fleet.nodeRuns && configuration.mqtt.publishes) }

    package mutating func updateScanning() {
        perform(scanControl.needChanged(needsScanning: needsScanning))
    }

    /// Carries out what scan control decided.
    package mutating func perform(_ actions: [ScanControl.Action]) {
        for action in actions {
            switch action {
            case .startScanner:
                outbox.emit(.startScanner)
            case .stopScanner:
                outbox.emit(.stopScanner)
            case .scheduleRetry:
                outbox.arm(.scannerRetry, at: now + Self.scannerRetryInterval)
            case .cancelRetry:
                outbox.cancel(.scannerRetry)
            case .resumeDetection:
                clients.engine.resumeDetection(at: now)
                publishing.resumeDetection(at: now)
                armHomeAssistantTimer()
                armEngineTimer()
            case .suspendDetection:
                // Regions become unknown rather than exiting while nothing can be seen.
                updatePublishing { [now] publishing, placement in publishing.suspendDetection(at: now, placement: placement) }
                let events = clients.engine.suspendDetection(at: now)
                clients.route(events, configuration: configuration, nodeRuns: fleet.nodeRuns, &outbox, &persistence, &delivery)
                armEngineTimer()
            case .scanningChanged(let scanning):
                outbox.emit(.managerPropertyChanged(.scanning(scanning)))
                outbox.notify(.scanningChanged(scanning))
            case .log(let level, let message):
                switch level {
                case .info: outbox.log(.info, message)
                case .notice: outbox.log(.notice, message)
                case .warning: outbox.log(.warning, message)
                case .error: outbox.log(.error, message)
                }
            }
        }
        showScannerState()
    }

    /// Tells apps (Manager1 `ScannerState`) what the scanner does now, when that changed.
    package mutating func showScannerState() {
        let state = scanControl.phase.stateText
        let blind =
            scannerStateShown.hasPrefix(BeacondScannerState.failedPrefix)
            || scannerStateShown.hasPrefix(BeacondScannerState.waitingPrefix)
        if blind && state == BeacondScannerState.starting { return } // a retry: still failed until it scans
        guard state != scannerStateShown else { return }
        scannerStateShown = state
        outbox.emit(.managerPropertyChanged(.scannerState(state)))
    }
}
