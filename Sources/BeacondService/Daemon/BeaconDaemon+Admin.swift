import BeaconKit
import BeacondAPI
import DBus
import Logging

/// Admin1's read side (status, clients, pending requests) and configuration reload (SIGHUP).
extension BeaconDaemon {
    func status() -> DBusValue {
        checkStateFile()
        var regions: [DBusValue] = []
        for session in clients.all {
            for region in session.orderedRegions {
                guard case .dictionary(_, _, var entries) = BeaconDictionaries.dictionary(region) else { continue }
                let saved = engine.monitoredRegion(client: session.number, identifier: region.identifier)
                let extra: [String: DBusValue] = [
                    BeacondRegionStatusKey.appID: .string(session.appID),
                    BeacondRegionStatusKey.client: .objectPath(session.path),
                    BeacondRegionStatusKey.state: .string((saved?.state ?? .unknown).rawValue),
                    BeacondRegionStatusKey.lastSeen: .uint64(UInt64(clamping: saved?.lastSeen?.microsecondsSinceEpoch ?? 0)),
                ]
                for (key, value) in extra.sorted(by: { $0.key < $1.key }) {
                    entries.append(DBusDictionaryEntry(key: .string(key), value: .variant(value)))
                }
                regions.append(.dictionary(keySignature: "s", valueSignature: "v", entries))
            }
        }
        // A queue that cannot be read is said in StateError, not shown as empty queues.
        var queued: [String: Int] = [:]
        var stateError = journal.failure?.reason ?? ""
        do {
            queued = try store.queuedEventCounts()
        } catch {
            logger.error("cannot read the queued events for status: \(error)")
            stateError += (stateError.isEmpty ? "" : "; ") + "the queued events cannot be read: \(error)"
        }
        let apps = configuration.apps.keys.sorted().map { appID -> DBusValue in
            let app = configuration.apps[appID]
            let stored = record(appID)
            return .vardict([
                BeacondAppKey.appID: .string(appID),
                BeacondAppKey.authorizationStatus: .string(stored.status.rawValue),
                BeacondAppKey.pendingRequest: .string(stored.pendingRequest?.rawValue ?? ""),
                BeacondAppKey.declarationFile: .string(app?.declaration.declarationFile ?? ""),
                BeacondAppKey.users: .array(elementSignature: "s", (app?.declaration.users.sorted() ?? []).map { .string($0) }),
                BeacondAppKey.queuedEvents: .uint32(UInt32(clamping: queued[appID] ?? 0)),
            ])
        }
        var status: [String: DBusValue] = [
            BeacondStatusKey.version: .string(BeacondVersion.current),
            BeacondStatusKey.locationServicesEnabled: .boolean(policy.locationServicesEnabled),
            BeacondStatusKey.scanning: .boolean(scanControl.phase.isScanning),
            BeacondStatusKey.scanner: .string("\(configuration.scanner)"),
            BeacondStatusKey.scannerState: .string(scanControl.phase.stateText),
            BeacondStatusKey.scannerDetail: .string(scanControl.phase.detail),
            BeacondStatusKey.adapters: BeaconDictionaries.array((scanner?.adapters ?? []).map { adapter in
                .vardict([BeacondAdapterKey.name: .string(adapter.name), BeacondAdapterKey.address: .string(adapter.address),
                          BeacondAdapterKey.powered: .boolean(adapter.powered)])
            }),
            BeacondStatusKey.prompt: .string(configuration.prompt.rawValue),
            BeacondStatusKey.clients: BeaconDictionaries.array(clientList()),
            BeacondStatusKey.regions: BeaconDictionaries.array(regions),
            BeacondStatusKey.pendingRequests: BeaconDictionaries.array(pendingRequestList()),
            BeacondStatusKey.apps: BeaconDictionaries.array(apps),
            BeacondStatusKey.configDirectory: .string(options.configDirectory),
            BeacondStatusKey.stateDirectory: .string(options.stateDirectory),
            BeacondStatusKey.stateError: .string(stateError),
            BeacondStatusKey.warnings: .array(elementSignature: "s", configuration.warnings.map { .string("\($0)") }),
            BeacondStatusKey.configurationError: .string(rejectedConfiguration ?? ""),
            BeacondStatusKey.locationServicesConfigured: .boolean(configuration.locationServicesEnabled),
            BeacondStatusKey.locationServicesSwitch: .boolean(authorization.servicesSwitch),
            BeacondStatusKey.startedAt: .uint64(UInt64(clamping: startedAt.microsecondsSinceEpoch)),
        ]
        status.merge(mqttStatus) { _, mqtt in mqtt }
        return .vardict(status)
    }

    func clientList() -> [DBusValue] {
        clients.all.map { session in
            var entries: [String: DBusValue] = [
                BeacondClientKey.path: .objectPath(session.path),
                BeacondClientKey.appID: .string(session.appID),
                BeacondClientKey.sender: .string(session.sender ?? ""),
                BeacondClientKey.authorizationStatus: .string(effectiveStatus(session.appID).rawValue),
                BeacondClientKey.inUse: .boolean(session.inUse),
                BeacondClientKey.connected: .boolean(session.isConnected),
                BeacondClientKey.monitoredRegions: .uint32(UInt32(session.regions.count)),
                BeacondClientKey.rangedConstraints: .uint32(UInt32(session.rangedConstraints.count)),
            ]
            if let pid = session.processID { entries[BeacondClientKey.processID] = .uint32(pid) }
            if let uid = session.userID { entries[BeacondClientKey.unixUserID] = .uint32(uid) }
            return .vardict(entries)
        }
    }

    func pendingRequestList() -> [DBusValue] {
        authorization.pendingRequests.map { pending in
            .vardict([
                BeacondPendingRequestKey.appID: .string(pending.appID),
                BeacondPendingRequestKey.request: .string(pending.request.rawValue),
                BeacondPendingRequestKey.currentStatus: .string(pending.status.rawValue),
                BeacondPendingRequestKey.usageDescription:
                    .string(configuration.apps[pending.appID]?.declaration.usageDescription(for: pending.request) ?? ""),
            ])
        }
    }

    /// SIGHUP: read the configuration again. A broken file leaves the old configuration in force (logged with
    /// file, line and problem); a good one applies at once.
    public func reload() {
        let new: DaemonConfiguration
        do {
            new = try ConfigurationLoader.load(directory: options.configDirectory, scanner: options.scanner)
        } catch {
            logger.error("configuration not reloaded, the previous one stays in force: \(error)")
            rejectedConfiguration = "\(error)"
            adminEvent(BeacondEventKind.configurationRejected, [BeacondEventKey.error: .string("\(error)")])
            return
        }
        rejectedConfiguration = nil
        for warning in new.warnings { logger.warning("\(warning)") }
        let old = configuration
        let oldPolicy = policy
        configuration = new
        // Apps no longer declared: their clients end, each told why.
        for session in clients.all where new.apps[session.appID] == nil {
            let error = BeacondError(.unknownApp, "app '\(session.appID)' is no longer declared in \(options.configDirectory)/apps.d")
            failMonitoring(session.number, error)
            failRanging(session.number, error)
            closeClient(session.number, reason: "app no longer declared")
        }
        // Connected clients whose user (or program) the new declaration no longer allows: revoked as above. A
        // detached client's regions are the app's and stay; its next client is checked when it registers.
        for session in clients.all where session.isConnected {
            guard let app = new.apps[session.appID], let caller = session.caller else { continue }
            do {
                try AuthorizationRules.checkCaller(caller, app: app.declaration)
            } catch {
                let error = BeacondError(.accessDenied, "revoked by the reloaded declaration: \(error.message)")
                failMonitoring(session.number, error)
                failRanging(session.number, error)
                closeClient(session.number, reason: "its user or program is no longer allowed by \(app.declaration.declarationFile)")
            }
        }
        if new.exitTimeout != old.exitTimeout || new.hysteresis != old.hysteresis || new.exitTimeoutMinimum != old.exitTimeoutMinimum
            || new.exitChance != old.exitChance {
            rebuildEngine()
            mqttNode?.reconfigureMonitoring(Self.monitoringConfiguration(new))
        }
        if new.queueTTL != old.queueTTL { scheduleQueueExpiry() }
        if new.scanner != old.scanner { perform(scanControl.sourceChanged(needsScanning: needsScanning)) }
        mqttSettingsChanged(from: old.mqtt)
        configureRooms()
        applyPolicyChange(from: oldPolicy)
        logger.notice("configuration reloaded from \(options.configDirectory)")
        adminEvent(BeacondEventKind.configurationReloaded,
                   [BeacondEventKey.warnings: .array(elementSignature: "s", new.warnings.map { .string("\($0)") })])
    }

    /// A new exit timeout: a fresh pipeline with every region restored in its current state (no events).
    func rebuildEngine() {
        let ranging = clients.all.filter(\.rangingActive).map { (client: $0.number, constraints: $0.rangedConstraints) }
        let (due, restarted) = engine.reconfigure(Self.monitoringConfiguration(configuration), ranging: ranging, at: clock())
        // What fell due under the old configuration goes out first.
        route(due)
        let hysteresis = configuration.hysteresis.map {
            ", RSSI hysteresis: enter at or above \($0.enterAtOrAbove) dBm, absent below \($0.absentBelow) dBm"
        } ?? ""
        logger.info("exit timeout is now \(configuration.exitTimeout)\(hysteresis)")
        engineChanged(restarted)
    }
}
