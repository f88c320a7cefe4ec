package import BeaconKit
import BeacondAPI

/// The engine side: scanner input in, monitoring and ranging events out to clients, one timer for the next
/// deadline (no polling), and scanning only while someone monitors or ranges.
extension DaemonCore {
    package typealias EngineEvent = BeaconEngine.Event

    /// After every change to the engine: deliver its events, re-arm the deadline timer, start or stop scanning.
    package mutating func engineChanged(_ events: [EngineEvent]) {
        route(events)
        armEngineTimer()
        updateScanning()
    }

    package mutating func armEngineTimer() {
        outbox.arm(.engine, forDeadline: engine.nextDeadline())
    }

    package mutating func route(_ events: [EngineEvent]) {
        for event in events {
            switch event {
            case .monitoring(let monitoring): deliver(monitoring)
            case .ranging(let results, _): for result in results { deliver(result) }
            case .observation(let observation): observedLocally(observation)
            }
        }
    }

    package mutating func deliver(_ event: MonitoringEvent<EngineKey>) {
        guard case .region(let client, _) = event.key, let session = clients[client] else { return }
        let info = EventInfo(at: event.timestamp)
        switch event.kind {
        case .didStartMonitoring:
            outbox.notify(session, .didStartMonitoring(event.region))
        case .didDetermineState(let state):
            persistence.markRegionChanged(event.key, &outbox)
            outbox.notify(session, .didDetermineState(state, event.region, info))
        case .didEnterRegion:
            persistence.markRegionChanged(event.key, &outbox)
            outbox.log(.info, "\(session.appID) entered region \(event.region.identifier)", session.logMetadata)
            outbox.notify(session, .didEnterRegion(event.region, info))
            if !session.isConnected { queueForApp(session, .didEnterRegion, event) }
        case .didExitRegion:
            persistence.markRegionChanged(event.key, &outbox)
            outbox.log(.info, "\(session.appID) exited region \(event.region.identifier)", session.logMetadata)
            outbox.notify(session, .didExitRegion(event.region, info))
            if !session.isConnected { queueForApp(session, .didExitRegion, event) }
        }
    }

    private mutating func queueForApp(_ session: ClientSession, _ kind: QueuedRegionEvent.Kind, _ event: MonitoringEvent<EngineKey>) {
        delivery.queue(kind, event, of: session, configuration: configuration, &persistence, &outbox)
    }

    package mutating func deliver(_ result: RangingResult<EngineKey>) {
        guard case .ranging(let client, _) = result.key, let session = clients[client], session.rangingActive else { return }
        outbox.emit(.range(ClientAddress(session), result.constraint, result.beacons.map(report)))
    }

    // MARK: Scanning

    /// Someone monitors or ranges, or this node publishes readings to an MQTT broker.
    package var needsScanning: Bool { engine.needsScanning || (fleet.nodeRuns && configuration.mqtt.publishes) }

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
                engine.resumeDetection(at: now)
                publishing.resumeDetection(at: now)
                armHomeAssistantTimer()
                armEngineTimer()
            case .suspendDetection:
                // Regions become unknown rather than exiting while nothing can be seen.
                updatePublishing { [now] publishing, placement in publishing.suspendDetection(at: now, placement: placement) }
                route(engine.suspendDetection(at: now))
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
