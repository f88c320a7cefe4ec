import BeacondAPI
public import BeaconKit

/// One registered client: a `CLLocationManager` on the bus, at `/org/beacond/client/N`.
public struct ClientSession: Sendable {
    public let number: Int
    public let appID: String
    /// The unique bus name that registered it; nil once that connection closed (an Always client's
    /// monitoring goes on without it: docs/dbus-api.md, "Background delivery").
    public var sender: String?
    /// Nil for a client put back after a restart (its registration's credentials were not saved).
    public let userID: UInt32?
    public let processID: UInt32?
    /// Who registered it, as checked against the app's declaration then; checked again when the declaration
    /// changes (a user removed from `users` loses its clients). Nil for a client put back after a restart.
    public var caller: CallerCredentials?
    /// Core Location's "in use": connected and not marked background with `SetInUse(false)`.
    public var inUse = true
    /// Monitored regions by identifier, and their order of addition (for stable listings).
    public var regions: [String: BeaconRegion] = [:]
    public var regionOrder: [String] = []
    public var rangedConstraints: [BeaconIdentityConstraint] = []
    /// Whether its ranging is in the engine now (paused while a WhenInUse client is not in use).
    public var rangingActive = false

    public var path: String { BeacondBus.clientPathPrefix + String(number) }
    public var isConnected: Bool { sender != nil }

    public var orderedRegions: [BeaconRegion] { regionOrder.compactMap { regions[$0] } }

    package mutating func addRegion(_ region: BeaconRegion) {
        if regions.updateValue(region, forKey: region.identifier) == nil { regionOrder.append(region.identifier) }
    }

    package mutating func removeRegion(_ identifier: String) {
        regions[identifier] = nil
        regionOrder.removeAll { $0 == identifier }
    }
}
