package import BeaconKit
import BeacondAPI

/// Regions and ranging that name a private device follow its name, not the key it had when they were added: a
/// reload (or a restart) that gives the name another key moves them to it; one that removes the name stops them,
/// each said with the fix (never a region left waiting for a key nobody declares any more).
extension DaemonCore {
    package enum DeviceFollowing {
        case unchanged
        /// The region for the key its device's name has now, starting over (unknown), as StartMonitoring of it.
        case moved(MonitoredRegion)
        /// The name is declared no more.
        case gone(String)
    }

    /// What a saved region of a private device becomes under this configuration (a restart).
    package func followingDevice(_ monitored: MonitoredRegion, app: AppConfiguration) -> DeviceFollowing {
        let constraint = monitored.region.constraint
        guard constraint.kind == .privateDevice, let name = constraint.deviceName else { return .unchanged }
        guard let key = configuration.deviceKey(name, for: app) else { return .gone(name) }
        let fingerprint = key.fingerprint
        guard fingerprint != constraint.uuid else { return .unchanged }
        var region = monitored.region
        region.constraint = constraint.resolvingDevice(fingerprint: fingerprint)
        return .moved(MonitoredRegion(region: region, state: .unknown, lastSeen: nil, lastDeterminedState: .unknown))
    }

    /// After a reload: every client's device regions and ranging follow their names.
    package mutating func followDeviceKeys() {
        for session in clients.all {
            guard let app = configuration.apps[session.appID] else { continue }
            var events: [EngineEvent] = []
            var regionsChanged = false
            for region in session.orderedRegions where region.constraint.kind == .privateDevice {
                guard let name = region.constraint.deviceName else { continue }
                if let key = configuration.deviceKey(name, for: app) {
                    let fingerprint = key.fingerprint
                    guard fingerprint != region.constraint.uuid else { continue }
                    // As StartMonitoring of it again: the region starts over (unknown), for the phone the name
                    // means now.
                    var moved = region
                    moved.constraint = region.constraint.resolvingDevice(fingerprint: fingerprint)
                    events += monitor(moved, session: session)
                    outbox.log(
                        .notice, "region \(region.identifier) of \(session.appID) follows device \(name) to its new key",
                        session.logMetadata)
                } else {
                    let error = deviceGone(name, app: app, what: "its region '\(region.identifier)' stops")
                    outbox.notify(session, .monitoringDidFail(region, error))
                    events += unmonitor(region.identifier, client: session.number)
                    outbox.log(.notice, "region \(region.identifier) of \(session.appID) stopped: \(error.message)", session.logMetadata)
                }
                regionsChanged = true
            }
            var rangingChanged = false
            for constraint in session.rangedConstraints where constraint.kind == .privateDevice {
                guard let name = constraint.deviceName else { continue }
                let key = configuration.deviceKey(name, for: app)
                if let key, key.fingerprint == constraint.uuid { continue }
                unrange(constraint, client: session.number)
                if let key {
                    clients.addRangedConstraint(constraint.resolvingDevice(fingerprint: key.fingerprint), to: session.number)
                } else {
                    outbox.notify(session, .rangingDidFail(constraint, deviceGone(name, app: app, what: "its ranging stops")))
                }
                rangingChanged = true
            }
            if regionsChanged { clientPropertiesChanged(session.number, [.monitoredRegions]) }
            if rangingChanged {
                clientPropertiesChanged(session.number, [.rangedConstraints])
                refreshRanging(session.number)
            }
            guard regionsChanged || rangingChanged else { continue }
            if !session.isConnected, clients[session.number]?.regions.isEmpty == true { removeSession(session.number) }
            engineChanged(events)
        }
    }

    private func deviceGone(_ name: String, app: AppConfiguration, what: String) -> BeacondError {
        BeacondError(
            .invalidRegion,
            "no private device named '\(name)' is declared for \(app.declaration.appID) any more, so \(what). Fix: "
                + "declare its Identity Resolving Key again under [devices] in \(app.declaration.declarationFile) or in "
                + "\(configDirectory)/devices.d, reload, and start it again")
    }
}
