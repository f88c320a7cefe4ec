/// Why an authorization rule refused something, with a message that says what is missing and how to fix it.
///
/// BeaconKit knows no D-Bus: the daemon maps each `Kind` to one `org.beacond.Error.*` name
/// (the cases correspond one to one) and sends `message` as the error text.
public struct AuthorizationError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: Hashable, Sendable, CaseIterable {
        /// The app's declaration lacks the usage description a request needs (iOS would fail silently).
        case missingUsageDescription
        /// The app's authorization does not allow what it tried.
        case notAuthorized
        /// The global location-services switch is off, so every app is effectively restricted.
        case locationServicesDisabled
        /// The caller's credentials do not match the app's declaration (`users`, `executable`):
        /// it may not act as this app (the daemon's AccessDenied).
        case callerNotPermitted
    }

    public let kind: Kind
    /// The app the refusal is about; every message names it too.
    public let appID: String
    public let message: String

    public init(kind: Kind, appID: String, message: String) {
        self.kind = kind
        self.appID = appID
        self.message = message
    }

    public var description: String { message }
}
