/// An app's location authorization, in Core Location's words (`CLAuthorizationStatus`).
///
/// The raw values are the strings the daemon exposes (property `AuthorizationStatus`, signal
/// `AuthorizationChanged`) and persists, so they must never change.
public enum AuthorizationStatus: String, CaseIterable, Codable, Hashable, Sendable, CustomStringConvertible {
    /// The app has not asked yet, or its request waits for an administrator.
    case notDetermined
    /// An administrator (or the location-services switch) locked location access; requests do nothing.
    case restricted
    /// Location access was refused; requests do nothing until an administrator changes it.
    case denied
    /// Ranging while the client is in use; no monitoring.
    case authorizedWhenInUse
    /// Ranging also in background, and monitoring.
    case authorizedAlways

    public var description: String { rawValue }

    /// What this status lets a client range.
    public var rangingPermission: RangingPermission {
        switch self {
        case .notDetermined, .restricted, .denied: .refused
        case .authorizedWhenInUse: .whileInUse
        case .authorizedAlways: .always
        }
    }

    /// Whether this status lets a client monitor regions: only Always does (Core Location since iOS 8).
    public var allowsMonitoring: Bool { self == .authorizedAlways }
}

/// How far an effective status lets a client range beacons.
public enum RangingPermission: Hashable, Sendable, CaseIterable {
    case refused
    /// Only while the client is in use: its connection is alive and it has not called `SetInUse(false)`.
    case whileInUse
    /// Also while the client is in background.
    case always

    /// Whether ranging results may be delivered to a client that is (or is not) in use.
    public func allows(inUse: Bool) -> Bool {
        switch self {
        case .refused: false
        case .whileInUse: inUse
        case .always: true
        }
    }
}
