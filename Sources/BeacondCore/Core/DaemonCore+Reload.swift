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
            source.rejection = rejection.message
            outbox.notify(.configurationRejected(rejection.message))
            return
        }
        source.rejection = nil
        var new = loaded
        // A limit lowered below what an app has: new regions are refused at once, the app keeps what it has
        // until the next restart resumes only its first max_regions_per_app. Said, not done silently.
        for appID in new.apps.keys.sorted() where clients.registry.regionCount(of: appID) > new.maxRegionsPerApp {
            new.warnings.append(
                ConfigurationDiagnostic(
                    file: new.configFile, line: nil,
                    message: "app \(appID) monitors \(clients.registry.regionCount(of: appID)) regions, more than max_regions_per_app = "
                        + "\(new.maxRegionsPerApp): it adds none until below it, and the next restart resumes only its first "
                        + "\(new.maxRegionsPerApp) (the others are removed). Fix: raise max_regions_per_app, or StopMonitoring some"))
        }
        for warning in new.warnings { outbox.log(.warning, "\(warning)") }
        let old = configuration
        let oldPolicy = policy
        configuration = new
        // Apps no longer declared, and users or programs no longer allowed: their clients end, each told why.
        var context = clientContext
        ClientChanges.applyDeclarations(&clients, context, &outbox, &persistence, &delivery)
        if new.exitTimeout != old.exitTimeout || new.hysteresis != old.hysteresis || new.exitTimeoutMinimum != old.exitTimeoutMinimum
            || new.exitChance != old.exitChance
        {
            clients.reconfigureEngine(context, &outbox, &persistence, &delivery)
            publishing.reconfigure(new.monitoring, at: now)
            publishing.armTimer(&outbox)
        }
        clients.engine.setPrivateDeviceKeys(new.privateDeviceKeys)
        clients.engine.setPrivateDeviceMeasuredPower(new.measuredPowerOverrides)
        context = clientContext
        ClientChanges.followDeviceKeys(&clients, context, &outbox, &persistence, &delivery)
        if new.queueTTL != old.queueTTL { BackgroundDelivery.scheduleExpiry(configuration: new, persistence, &outbox) }
        // Settled before the source changes: a scanner nobody needs any more stops, and says why, rather than being
        // replaced by one for the new source.
        engineSettled()
        if new.scanner != old.scanner { perform(scanControl.sourceChanged(needsScanning: needsScanning)) }
        // The node is replaced after this input; `fleetStarted` configures the rooms again then.
        if new.mqtt != old.mqtt { outbox.emit(.mqttSettingsChanged(from: old.mqtt)) }
        fleet.configureRooms(configuration, &clients.engine, &outbox)
        applyPolicyChange(from: oldPolicy)
        outbox.log(.notice, "configuration reloaded from \(configDirectory)")
        outbox.notify(.configurationReloaded(warnings: new.warnings.map { "\($0)" }))
    }
}
