import BeaconKit
import BeacondAPI
import BlueZ
import DBus
import Logging

/// The engine side: scanner input in, monitoring and ranging events out to clients, one timer for the next
/// deadline (no polling), and scanning only while someone monitors or ranges.
extension BeaconDaemon {
    typealias EngineEvent = BeaconEngine.Event

    func ingest(_ input: ScannerInput) {
        let events = engine.ingest(input, at: clock())
        engineChanged(events)
        scheduleLastSeenSave()
    }

    /// After every change to the engine: deliver its events, re-arm the deadline timer, start or stop scanning.
    func engineChanged(_ events: [EngineEvent]) {
        route(events)
        armEngineTimer()
        updateScanning()
    }

    func armEngineTimer() {
        guard let deadline = engine.nextDeadline() else {
            timers.cancel(.engine)
            return
        }
        let delay = deadline - clock()
        let fires = ContinuousClock.now + (delay > .zero ? min(delay, .seconds(3600)) : .zero)
        // A timer that fires no later stays: firing early only advances the engine to its time and arms again.
        // Remote readings move deadlines later, and re-arming after each (100,000 a second on a busy fleet) cost a
        // cancel and a schedule apiece.
        if let armed = timers.deadline(.engine), armed <= fires { return }
        arm(.engine, at: fires)
    }

    func route(_ events: [EngineEvent]) {
        for event in events {
            switch event {
            case .monitoring(let monitoring): deliver(monitoring)
            case .ranging(let results, _): for result in results { deliver(result) }
            case .observation(let observation): publishReading(observation)
            }
        }
    }

    func deliver(_ event: MonitoringEvent<EngineKey>) {
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
            logger.info("\(session.appID) entered region \(event.region.identifier)", metadata: metadata(session))
            notify(session, .didEnterRegion(event.region, info))
            if !session.isConnected { queueForApp(session, .didEnterRegion, event) }
        case .didExitRegion:
            markRegionChanged(event.key)
            logger.info("\(session.appID) exited region \(event.region.identifier)", metadata: metadata(session))
            notify(session, .didExitRegion(event.region, info))
            if !session.isConnected { queueForApp(session, .didExitRegion, event) }
        }
    }

    func deliver(_ result: RangingResult<EngineKey>) {
        guard case .ranging(let client, _) = result.key, let session = clients[client], session.rangingActive,
            let bus
        else { return }
        let address = ClientAddress(session)
        let audience = bus.rangingAudience(
            address, constraint: result.constraint, beacons: result.beacons.count,
            first: result.beacons.first.map(report))
        guard !audience.isEmpty else { return }
        bus.range(address, constraint: result.constraint, result.beacons.map(report), to: audience)
    }

    func metadata(_ session: ClientSession) -> Logger.Metadata {
        ["client.app": "\(session.appID)", "client.path": "\(session.path)"]
    }

    // MARK: Scanning

    /// Someone monitors or ranges, or this node publishes readings to an MQTT broker.
    var needsScanning: Bool { engine.needsScanning || (mqttNode != nil && configuration.mqtt.publishes) }

    func updateScanning() {
        perform(scanControl.needChanged(needsScanning: needsScanning))
    }

    /// How long after a failed start the scanner is tried again (while someone still needs it).
    static let scannerRetryInterval: Duration = .seconds(30)

    func makeScanner() throws(ScannerError) -> any BeaconScanner {
        switch configuration.scanner {
        case .fifo(let path):
            let scanner = FIFOScanner(path: path)
            scanner.onMalformedLine = { line, reason in
                self.assumeIsolated { $0.logger.warning("fifo:\(path) line \(line) ignored: \(reason)") }
            }
            return scanner
        case .replay(let path):
            let scanner = ReplayScanner(path: path)
            scanner.finished = { count in
                self.assumeIsolated { $0.logger.info("replay of \(path) finished (\(count) records)") }
            }
            return scanner
        case .hci, .bluez, .auto:
            guard let server = bus?.server else { throw ScannerError("not connected to the bus") }
            let mode: BlueZScannerSource.Mode
            var choice: String?
            var adapterName: String?
            switch configuration.scanner {
            case .hci(let name): mode = .hci; adapterName = name
            case .bluez(let name): mode = .bluez; adapterName = name
            default:
                let raw = HCISocket.hasRawCapability
                mode = raw ? .hci : .bluez
                choice = raw ? "auto: CAP_NET_RAW present" : "auto: no CAP_NET_RAW, so bluetoothd's D-Bus reports only"
            }
            return BlueZScannerSource(mode: mode, adapterName: adapterName, server: server, loop: loop, choice: choice)
        }
    }

    /// Carries out what scan control decided; the scanner object and the retry timer change only here.
    func perform(_ actions: [ScanControl.Action]) {
        for action in actions {
            switch action {
            case .startScanner:
                startScanner()
            case .stopScanner:
                scanner?.stop()
                scanner = nil
            case .scheduleRetry:
                arm(.scannerRetry, at: .now + Self.scannerRetryInterval)
            case .cancelRetry:
                timers.cancel(.scannerRetry)
            case .resumeDetection:
                engine.resumeDetection(at: clock())
                mqttNode?.localDetection(suspended: false)
                armEngineTimer()
            case .suspendDetection:
                suspendDetection()
            case .scanningChanged(let now):
                bus?.propertyChanged(.scanning(now))
                notify(.scanningChanged(now))
            case .log(let level, let message):
                switch level {
                case .info: logger.info("\(message)")
                case .notice: logger.notice("\(message)")
                case .warning: logger.warning("\(message)")
                case .error: logger.error("\(message)")
                }
            }
        }
    }

    /// Makes the scanner (or reuses the one there) and starts it; monitoring stays registered when that fails
    /// (regions are unknown until a scanner works; status and doctor say why).
    func startScanner() {
        do throws(ScannerError) {
            let scanner: any BeaconScanner
            if let existing = self.scanner { scanner = existing } else { scanner = try makeScanner() }
            self.scanner = scanner
            perform(scanControl.started(label: scanner.label))
            try scanner.start(
                loop: loop,
                deliver: { input in
                    self.assumeIsolated { $0.ingest(input) }
                },
                status: { status in
                    self.assumeIsolated { $0.scannerStatusChanged(status) }
                })
        } catch {
            scanner = nil
            perform(scanControl.startFailed(error.message))
        }
    }

    /// What a started scanner reports: seeing (regions get a full exit timeout from now), waiting (regions
    /// become unknown; the scanner recovers by itself), or failed (stopped; retried later).
    func scannerStatusChanged(_ status: ScannerStatus) {
        guard let scanner else { return }
        perform(scanControl.reported(status, label: scanner.label, needsScanning: needsScanning))
    }

    /// Regions become unknown rather than exiting while nothing can be seen.
    func suspendDetection() {
        mqttNode?.localDetection(suspended: true)
        let events = engine.suspendDetection(at: clock())
        route(events)
        armEngineTimer()
    }
}
