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
        arm(.engine, forDeadline: engine.nextDeadline())
    }

    /// Arms a timer for a pure component's next deadline (at most an hour ahead), or cancels it when there is none.
    /// A timer that fires no later stays: firing early only advances the component to its time and arms again.
    /// Remote readings move deadlines later, and re-arming after each (100,000 a second on a busy fleet) cost a
    /// cancel and a schedule apiece.
    package mutating func arm(_ timer: DaemonTimer, forDeadline deadline: Timestamp?) {
        guard let deadline else {
            cancel(timer)
            return
        }
        let delay = deadline - now
        let fires = now + (delay > .zero ? min(delay, .seconds(3600)) : .zero)
        if let armed = armedTimers[timer], armed <= fires { return }
        arm(timer, at: fires)
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
            notify(session, .didStartMonitoring(event.region))
        case .didDetermineState(let state):
            markRegionChanged(event.key)
            notify(session, .didDetermineState(state, event.region, info))
        case .didEnterRegion:
            markRegionChanged(event.key)
            log(.info, "\(session.appID) entered region \(event.region.identifier)", metadata(session))
            notify(session, .didEnterRegion(event.region, info))
            if !session.isConnected { queueForApp(session, .didEnterRegion, event) }
        case .didExitRegion:
            markRegionChanged(event.key)
            log(.info, "\(session.appID) exited region \(event.region.identifier)", metadata(session))
            notify(session, .didExitRegion(event.region, info))
            if !session.isConnected { queueForApp(session, .didExitRegion, event) }
        }
    }

    package mutating func deliver(_ result: RangingResult<EngineKey>) {
        guard case .ranging(let client, _) = result.key, let session = clients[client], session.rangingActive else { return }
        emit(.range(ClientAddress(session), result.constraint, result.beacons.map(report)))
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
                emit(.startScanner)
            case .stopScanner:
                emit(.stopScanner)
            case .scheduleRetry:
                arm(.scannerRetry, at: now + Self.scannerRetryInterval)
            case .cancelRetry:
                cancel(.scannerRetry)
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
                emit(.managerPropertyChanged(.scanning(scanning)))
                notify(.scanningChanged(scanning))
            case .log(let level, let message):
                switch level {
                case .info: log(.info, message)
                case .notice: log(.notice, message)
                case .warning: log(.warning, message)
                case .error: log(.error, message)
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
        emit(.managerPropertyChanged(.scannerState(state)))
    }
}
