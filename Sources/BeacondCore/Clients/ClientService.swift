package import BeaconKit
import BeacondAPI

/// The clients and their regions: who is registered (`ClientRegistry`), what each monitors and ranges, and the
/// engine those regions and constraints run in (`BeaconEngine`), with the only methods that change them:
/// registration and its limits, what a client's leaving does to an Always app's regions, a region or ranged
/// constraint in or out, ranging made active or paused, the restart's restore, and where the engine's events go.
/// The rules of the LocationManager1 calls (`LocationManagerCalls`) and of changes from outside a client's calls
/// (`ClientChanges`: authorization, reloads, device keys) decide what to do and do it through these methods.
///
/// "Client X monitors region R" has one owner: a region enters or leaves the registry, the engine and the journal in
/// one method (`monitor`, `unmonitor`, `moveRegion` in `ClientService+Regions.swift`), never one without the others;
/// `DaemonCoreRegionsInvariantTests` checks they agree after every input of randomized sequences.
///
/// What it reads of the rest of the core comes in a `Context`; what it asks of the daemon goes to the outbox; what
/// must be saved to `StatePersistence`; an absent app's events to `BackgroundDelivery`. After a change, the core
/// re-arms the engine's timer and asks scan control whether scanning is still needed.
package struct ClientService {
    /// Changed only by this value's methods (in its own files); the rest of the core reads it.
    package internal(set) var registry = ClientRegistry()
    /// The pipeline every client's regions and ranging run in. Fleet readings, scanner input and scan control drive
    /// it too; regions and ranged constraints change only through this value's methods.
    package internal(set) var engine: BeaconEngine

    package static let maximumClientsPerConnection = 32

    package init(engine: BeaconEngine) {
        self.engine = engine
    }

    /// What the clients' side reads of the rest of the core for one input (nothing here changes it).
    package struct Context {
        package let configuration: DaemonConfiguration
        package let configDirectory: String
        package let authorization: AuthorizationService
        /// This node's room, why no node runs, every receiver's room.
        package let fleet: FleetRooms

        package var policy: AuthorizationPolicy { authorization.policy(configured: configuration.policy) }
        package func record(_ appID: String) -> AuthorizationRecord { authorization.record(appID) }
        package func effectiveStatus(_ appID: String) -> AuthorizationStatus { authorization.effectiveStatus(appID, policy) }
        package var exitTimeout: Duration { configuration.monitoring.exitTimeout }

        /// The declaration of the client's app, or the refusal when it is no longer declared.
        package func app(of session: ClientSession) throws(CallError) -> AppConfiguration {
            guard let app = configuration.apps[session.appID] else {
                throw BeacondError(.unknownApp, "app '\(session.appID)' is no longer declared in \(configDirectory)/apps.d").callError
            }
            return app
        }
    }

    // MARK: Lookups

    package subscript(number: Int) -> ClientSession? { registry[number] }

    package func session(_ number: Int) throws(CallError) -> ClientSession {
        guard let session = registry[number] else { throw .clientClosed(number) }
        return session
    }

    /// The client's properties as they are now (read from the registry, not from a caller's copy).
    package func propertiesChanged(_ number: Int, _ names: [ClientPropertyName], _ context: Context, _ outbox: inout CoreOutbox) {
        guard let session = registry[number] else { return }
        let properties = names.map { name -> ClientProperty in
            switch name {
            case .authorizationStatus: .authorizationStatus(context.effectiveStatus(session.appID))
            case .inUse: .inUse(session.inUse)
            case .monitoredRegions: .monitoredRegions
            case .rangedConstraints: .rangedConstraints
            }
        }
        outbox.emit(.clientPropertiesChanged(ClientAddress(session), properties))
    }
}
