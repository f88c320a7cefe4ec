import BeaconKit
import BeacondAPI
import BlueZ
import DBus
import Logging

/// The engine side: scanner input in, monitoring and ranging events out to clients, one timer for the next
/// deadline (no polling), and scanning only while someone monitors or ranges.
extension BeaconDaemon {
    typealias EngineEvent = BeaconPipeline<EngineKey>.Event

    func ingest(_ input: ScannerInput) {
        var events: [EngineEvent] = []
        let now = clock()
        switch input {
        case .hciEvent(let bytes):
            pipeline.ingest(hciEvent: bytes.span, at: now, into: &events)
        case .linkLayerPDU(let bytes, let rssi):
            pipeline.ingest(linkLayerPDU: bytes.span, rssi: rssi, at: now, into: &events)
        case .iBeacon(let frame, let rssi, let address, let addressType):
            pipeline.observe(IBeaconObservation(frame: frame, rssi: rssi, address: address, addressType: addressType,
                                                timestamp: now), into: &events)
        }
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
        if let engineTimer { loop.cancelTimer(engineTimer) }
        engineTimer = nil
        guard let deadline = pipeline.nextDeadline else { return }
        let delay = deadline - clock()
        let wait: Duration = delay > .zero ? min(delay, .seconds(3600)) : .zero
        engineTimer = loop.schedule(at: .now + wait) {
            self.assumeIsolated { daemon in
                daemon.engineTimer = nil
                var events: [EngineEvent] = []
                daemon.pipeline.advance(to: daemon.clock(), into: &events)
                daemon.engineChanged(events)
            }
        }
    }

    func route(_ events: [EngineEvent]) {
        for event in events {
            switch event {
            case .monitoring(let monitoring): deliver(monitoring)
            case .ranging(let results, _): for result in results { deliver(result) }
            case .observation: break
            }
        }
    }

    func deliver(_ event: MonitoringEvent<EngineKey>) {
        guard case .region(let client, _) = event.key, let session = sessions[client] else { return }
        let region = BeaconDictionaries.dictionary(event.region)
        let info = eventInfo(at: event.timestamp, late: false)
        var data = clientEventData(session)
        data[BeacondEventKey.region] = region
        switch event.kind {
        case .didStartMonitoring:
            signalClient(session, BeacondMember.didStartMonitoring, [region])
            adminEvent(BeacondEventKind.didStartMonitoring, data)
        case .didDetermineState(let state):
            markRegionChanged(event.key)
            signalClient(session, BeacondMember.didDetermineState, [.string(state.rawValue), region, info])
            data[BeacondEventKey.state] = .string(state.rawValue)
            adminEvent(BeacondEventKind.didDetermineState, data)
        case .didEnterRegion:
            markRegionChanged(event.key)
            logger.info("\(session.appID) entered region \(event.region.identifier)", metadata: metadata(session))
            signalClient(session, BeacondMember.didEnterRegion, [region, info])
            adminEvent(BeacondEventKind.didEnterRegion, data)
            if !session.isConnected { queueForApp(session, .didEnterRegion, event) }
        case .didExitRegion:
            markRegionChanged(event.key)
            logger.info("\(session.appID) exited region \(event.region.identifier)", metadata: metadata(session))
            signalClient(session, BeacondMember.didExitRegion, [region, info])
            adminEvent(BeacondEventKind.didExitRegion, data)
            if !session.isConnected { queueForApp(session, .didExitRegion, event) }
        }
    }

    func deliver(_ result: RangingResult<EngineKey>) {
        guard case .ranging(let client, _) = result.key, let session = sessions[client], session.rangingActive else { return }
        // The next cycle replaces this one: a peer that is not reading misses it rather than stall beacond.
        // Admission comes first, so a result nobody gets is never built (10,000 beacons take ~100 ms).
        // Every beacon dictionary has the same keys and nearly the same size: one built weighs them all.
        let constraint = BeaconDictionaries.dictionary(result.constraint)
        let perBeacon = result.beacons.first.map { BeaconDictionaries.dictionary($0).marshalledSizeEstimate } ?? 0
        let bytes = Self.signalBytes([constraint]) + result.beacons.count * perBeacon
        let what = "DidRangeBeacons of \(session.path) (\(session.appID))"
        let toClient = session.sender.map { admitDroppable(to: $0, bytes: bytes, what: what) } ?? false
        let toWatchers = watchers.sorted().filter { admitDroppable(to: $0, bytes: bytes, what: "Admin1.Event(\(what))") }
        guard toClient || !toWatchers.isEmpty else { return }
        let beacons = BeaconDictionaries.array(result.beacons.map(BeaconDictionaries.dictionary))
        if toClient, let sender = session.sender {
            queueSignal(path: session.path, interface: BeacondInterface.locationManager,
                        member: BeacondMember.didRangeBeacons, [beacons, constraint], to: sender, counted: true)
        }
        guard !toWatchers.isEmpty else { return }
        var data = clientEventData(session)
        data[BeacondEventKey.beacons] = beacons
        data[BeacondEventKey.constraint] = constraint
        adminEvent(BeacondEventKind.didRangeBeacons, data, admitted: toWatchers)
    }

    func metadata(_ session: ClientSession) -> Logger.Metadata {
        ["client.app": "\(session.appID)", "client.path": "\(session.path)"]
    }

    // MARK: Scanning

    var needsScanning: Bool { pipeline.monitor.count > 0 || !pipeline.ranger.rangedKeys.isEmpty }

    func updateScanning() {
        if needsScanning {
            // A scanner that is starting or waiting is left alone; a failed one is retried by its timer.
            if scanner == nil, scannerRetry == nil { startScanner() }
        } else if scanning || scanner != nil || scannerRetry != nil {
            if let scannerRetry { loop.cancelTimer(scannerRetry) }
            scannerRetry = nil
            stopScanner()
            scannerState = "idle"
            scannerDetail = ""
            logger.info("scanning stopped: nobody monitors or ranges")
        }
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
            guard let server else { throw ScannerError("not connected to the bus") }
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

    func startScanner() {
        do throws(ScannerError) {
            let scanner: any BeaconScanner
            if let existing = self.scanner { scanner = existing } else { scanner = try makeScanner() }
            self.scanner = scanner
            scannerState = "starting"
            if let scannerRetry { loop.cancelTimer(scannerRetry) }
            scannerRetry = nil
            logger.info("scanner starting: \(scanner.label)")
            try scanner.start(loop: loop, deliver: { input in
                self.assumeIsolated { $0.ingest(input) }
            }, status: { status in
                self.assumeIsolated { $0.scannerStatusChanged(status) }
            })
        } catch {
            // Monitoring stays registered (regions are unknown until a scanner works); status and doctor say why.
            if scannerState != BeacondScannerState.failedPrefix + error.message { logger.error("cannot scan: \(error.message)") }
            scanner = nil
            scannerState = BeacondScannerState.failedPrefix + error.message
            blind()
        }
    }

    /// No scanner sees anything: regions become unknown rather than exiting one by one (a stationary beacon must
    /// never produce a false exit), and the scanner is tried again later.
    func blind() {
        suspendDetection()
        guard scannerRetry == nil else { return }
        scannerRetry = loop.schedule(at: .now + Self.scannerRetryInterval) {
            self.assumeIsolated { daemon in
                daemon.scannerRetry = nil
                if daemon.needsScanning, daemon.scanner == nil { daemon.startScanner() }
            }
        }
    }

    func stopScanner() {
        scanner?.stop()
        scanner = nil
        setScanning(false)
    }

    func setScanning(_ now: Bool) {
        guard scanning != now else { return }
        scanning = now
        managerPropertiesChanged([BeacondMember.scanning: .boolean(now)])
        adminEvent(BeacondEventKind.scanningChanged, [BeacondEventKey.scanning: .boolean(now)])
    }

    /// What a started scanner reports: seeing (regions get a full exit timeout from now), waiting (regions
    /// become unknown; the scanner recovers by itself), or failed (stopped; retried later).
    func scannerStatusChanged(_ status: ScannerStatus) {
        guard scanner != nil else { return }
        switch status {
        case .scanning(let detail):
            scannerState = "scanning"
            scannerDetail = "\(scanner?.label ?? ""): \(detail)"
            if !scanning { logger.notice("scanning: \(detail)") }
            pipeline.monitor.resumeDetection(at: clock())
            setScanning(true)
            armEngineTimer()
        case .waiting(let reason):
            scannerDetail = scanner?.label ?? ""
            if scannerState != BeacondScannerState.waitingPrefix + reason { logger.warning("cannot scan now: \(reason)") }
            scannerState = BeacondScannerState.waitingPrefix + reason
            setScanning(false)
            suspendDetection()
        case .failed(let reason):
            logger.error("scanner failed: \(reason)")
            stopScanner()
            scannerState = BeacondScannerState.failedPrefix + reason
            if needsScanning { blind() }
        }
    }

    /// Regions become unknown rather than exiting while nothing can be seen.
    func suspendDetection() {
        var scratch: [MonitoringEvent<EngineKey>] = []
        pipeline.monitor.suspendDetection(at: clock(), into: &scratch)
        route(scratch.map { .monitoring($0) })
        armEngineTimer()
    }
}
