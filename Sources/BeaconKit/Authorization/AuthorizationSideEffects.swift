/// What the daemon must do for one client after its authorization changed, so every path (registration,
/// requests, administrator actions, the location-services switch) applies changes the same way.
public struct AuthorizationSideEffects: Hashable, Sendable {
    /// The effective status to send in `AuthorizationChanged`; nil when the effective status did not change
    /// (no signal then).
    public var authorizationChanged: AuthorizationStatus?
    /// Non-nil when monitoring is no longer allowed (Always revoked, or services switched off): stop all of the
    /// client's monitoring and send `MonitoringDidFail` with this error for each region.
    public var monitoringFailure: AuthorizationError?
    /// Non-nil when ranging is no longer allowed at all: stop all of the client's ranging and send
    /// `RangingDidFail` with this error for each constraint.
    public var rangingFailure: AuthorizationError?
    /// True when ranging went from "also in background" (Always) to "only while in use" (WhenInUse): ranging
    /// of a client that is not in use pauses, without an error, until it is in use again (as on iOS).
    public var rangingRestrictedToInUse: Bool

    public init(
        authorizationChanged: AuthorizationStatus? = nil, monitoringFailure: AuthorizationError? = nil,
        rangingFailure: AuthorizationError? = nil, rangingRestrictedToInUse: Bool = false
    ) {
        self.authorizationChanged = authorizationChanged
        self.monitoringFailure = monitoringFailure
        self.rangingFailure = rangingFailure
        self.rangingRestrictedToInUse = rangingRestrictedToInUse
    }

    /// Nothing to do.
    public static let none = AuthorizationSideEffects()
}
