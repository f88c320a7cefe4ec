public import BeaconKit
import BeacondAPI

/// Who a client event is for: the client's number (its object is `/org/beacond/client/N`), its app, and the
/// connection that registered it (nil once that connection left: the event is then only queued or mirrored).
public struct ClientAddress: Hashable, Sendable {
    public var number: Int
    public var appID: String
    public var sender: String?

    public var path: String { BeacondBus.clientPathPrefix + String(number) }

    package init(_ session: ClientSession) {
        number = session.number
        appID = session.appID
        sender = session.sender
    }
}

/// When a region event happened, and whether it waited in the app's queue (`droppedBefore` > 0 on the first late
/// event after some were dropped: queue full or too old).
public struct EventInfo: Hashable, Sendable {
    public var timestamp: Timestamp
    public var late: Bool
    public var droppedBefore: Int

    public init(at timestamp: Timestamp, late: Bool = false, droppedBefore: Int = 0) {
        self.timestamp = timestamp
        self.late = late
        self.droppedBefore = droppedBefore
    }
}

/// What a client hears: its `LocationManager1` signals, in Core Location's delegate words.
public enum ClientEvent: Hashable, Sendable {
    case authorizationChanged(AuthorizationStatus)
    case didStartMonitoring(BeaconRegion)
    case didDetermineState(RegionState, BeaconRegion, EventInfo)
    case didEnterRegion(BeaconRegion, EventInfo)
    case didExitRegion(BeaconRegion, EventInfo)
    case monitoringDidFail(BeaconRegion, BeacondError)
    case rangingDidFail(BeaconIdentityConstraint, BeacondError)
}

/// Whether administrators watching `Admin1.Event` see a client event too. Most are mirrored; a late event was
/// mirrored when it happened, and the state a repeated `StartMonitoring` reports back is no change.
public enum Audience: Hashable, Sendable {
    case clientAndAdministrators
    case clientOnly
    case administratorsOnly
}

/// `Admin1.Event`s that are not a client's signal.
public enum AdminEvent: Hashable, Sendable {
    case clientRegistered(ClientAddress)
    case clientClosed(ClientAddress)
    case authorizationRequested(ClientAddress, AuthorizationRequest, disposition: String)
    /// An app with no client to tell (with clients, the change is their `authorizationChanged`).
    case authorizationChanged(appID: String, AuthorizationStatus)
    case locationServicesChanged(enabled: Bool)
    case scanningChanged(Bool)
    case configurationReloaded(warnings: [String])
    /// The files on disk were rejected; the previous configuration stays in force.
    case configurationRejected(String)
}

/// A client property whose change is announced (`PropertiesChanged`). The lists grow with use, so they are
/// announced by name only; their value is one `Get` away.
public enum ClientProperty: Hashable, Sendable {
    case authorizationStatus(AuthorizationStatus)
    case inUse(Bool)
    case monitoredRegions
    case rangedConstraints
}

/// A `Manager1` property whose change is announced.
public enum ManagerProperty: Hashable, Sendable {
    case locationServicesEnabled(Bool)
    case scanning(Bool)
    /// `ScannerState`: what apps are told about the scanner (`ScanControl.shownState`).
    case scannerState(String)
}

/// A ranged beacon as a client gets it: with rooms, where the room locator places it and every receiver's
/// distance by room.
public struct RangedBeaconReport: Hashable, Sendable {
    public var beacon: RangedBeacon
    /// nil without rooms (no `[mqtt]` node); "" when the beacon cannot be placed.
    public var room: String?
    public var receivers: [String: Double]
    /// With a floor plan: where the beacon is on it.
    public var position: Position?

    public init(beacon: RangedBeacon, room: String?, receivers: [String: Double], position: Position? = nil) {
        self.beacon = beacon
        self.room = room
        self.receivers = receivers
        self.position = position
    }
}
