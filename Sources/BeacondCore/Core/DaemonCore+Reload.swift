import BeaconKit
import BeacondAPI

/// A reload (SIGHUP, `Admin1.Reload`): the configuration read again from disk, applied to every client at once.
extension DaemonCore {
    /// SIGHUP: read the configuration again. A broken file leaves the old configuration in force (logged with
    /// file, line and problem); a good one applies at once.
    package mutating func reload(_ result: Result<DaemonConfiguration, ConfigurationRejection>) {
        let loaded: DaemonConfiguration
        switch result {
        case .success(let configuration):
            loaded = configuration
        case .failure(let rejection):
            outbox.log(.error, "configuration not reloaded, the previous one stays in force: \(rejection.message)")
            rejectedConfiguration = rejection.message
            outbox.notify(.configurationRejected(rejection.message))
            return
        }
        rejectedConfiguration = nil
        var new = loaded
        // A limit lowered below what an app has: new regions are refused at once, the app keeps what it has
        // until the next restart resumes only its first max_regions_per_app. Said, not done silently.
        for appID in new.apps.keys.sorted() where clients.regionCount(of: appID) > new.maxRegionsPerApp {
            new.warnings.append(
                ConfigurationDiagnostic(
                    file: new.configFile, line: nil,
                    message: "app \(appID) monitors \(clients.regionCount(of: appID)) regions, more than max_regions_per_app = "
                        + "\(new.maxRegionsPerApp): it adds none until below it, and the next restart resumes only its first "
                        + "\(new.maxRegionsPerApp) (the others are removed). Fix: raise max_regions_per_app, or StopMonitoring some"))
        }
        for warning in new.warnings { outbox.log(.warning, "\(warning)") }
        let old = configuration
        let oldPolicy = policy
        configuration = new
        // Apps no longer declared: their clients end, each told why.
        for session in clients.all where new.apps[session.appID] == nil {
            let error = BeacondError(.unknownApp, "app '\(session.appID)' is no longer declared in \(configDirectory)/apps.d")
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
            || new.exitChance != old.exitChance
        {
            rebuildEngine()
            publishing.reconfigure(Self.monitoringConfiguration(new), at: now)
            armHomeAssistantTimer()
        }
        engine.setPrivateDeviceKeys(Self.privateDeviceKeys(new))
        engine.setPrivateDeviceMeasuredPower(new.measuredPowerOverrides)
        followDeviceKeys()
        if new.queueTTL != old.queueTTL { BackgroundDelivery.scheduleExpiry(configuration: new, persistence, &outbox) }
        if new.scanner != old.scanner { perform(scanControl.sourceChanged(needsScanning: needsScanning)) }
        // The node is replaced after this input; `fleetStarted` configures the rooms again then.
        if new.mqtt != old.mqtt { outbox.emit(.mqttSettingsChanged(from: old.mqtt)) }
        configureRooms()
        applyPolicyChange(from: oldPolicy)
        outbox.log(.notice, "configuration reloaded from \(configDirectory)")
        outbox.notify(.configurationReloaded(warnings: new.warnings.map { "\($0)" }))
    }

    /// A new exit timeout: a fresh pipeline with every region restored in its current state (no events).
    package mutating func rebuildEngine() {
        let ranging = clients.all.filter(\.rangingActive).map { (client: $0.number, constraints: $0.rangedConstraints) }
        let (due, restarted) = engine.reconfigure(Self.monitoringConfiguration(configuration), ranging: ranging, at: now)
        // What fell due under the old configuration goes out first.
        route(due)
        let hysteresis =
            configuration.hysteresis.map {
                ", RSSI hysteresis: enter at or above \($0.enterAtOrAbove) dBm, absent below \($0.absentBelow) dBm"
            } ?? ""
        outbox.log(.info, "exit timeout is now \(configuration.exitTimeout)\(hysteresis)")
        engineChanged(restarted)
    }
}
