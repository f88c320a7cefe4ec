/// How a request was answered.
public enum AuthorizationRequestDisposition: Hashable, Sendable {
    /// Answered at once by the `prompt` policy. The status may still be unchanged (an upgrade refused under
    /// `prompt = "deny"` keeps WhenInUse but uses up the one upgrade request).
    case decided
    /// Waits for an administrator (`prompt = "admin"`); `AuthorizationChanged` follows the decision.
    case pending
    /// A no-op: the current status is returned and no `AuthorizationChanged` is sent.
    case ignored(IgnoredReason)

    public enum IgnoredReason: Hashable, Sendable, CaseIterable {
        /// The global switch is off; every app is effectively restricted.
        case locationServicesDisabled
        /// An administrator locked the app; requests do nothing (Core Location).
        case restricted
        /// The app was refused; only an administrator changes that (Core Location: only the Settings app).
        case denied
        /// The status already answers this request (WhenInUse asking WhenInUse, Always asking anything).
        case alreadyDetermined
        /// The one WhenInUse→Always upgrade request was already made.
        case upgradeAlreadyUsed
    }
}

/// The result of `RequestWhenInUseAuthorization` / `RequestAlwaysAuthorization`.
public struct AuthorizationRequestOutcome: Hashable, Sendable {
    /// The app's record to persist (unchanged for an ignored request).
    public let record: AuthorizationRecord
    /// The status to return to the caller: what it may do now.
    public let effectiveStatus: AuthorizationStatus
    public let disposition: AuthorizationRequestDisposition
    /// `AuthorizationChanged` when the effective status changed; never anything to stop (a request only widens).
    public let sideEffects: AuthorizationSideEffects
    /// For a pending or ignored request: why, naming the app and what would change it (for the daemon's log
    /// and the caller). Nil when the request was decided.
    public let note: String?

    /// Whether the effective status changed, i.e. whether `AuthorizationChanged` is due.
    public var changed: Bool { sideEffects.authorizationChanged != nil }
    /// Whether the request now waits for an administrator.
    public var pending: Bool { disposition == .pending }
}

/// The result of an administrator's action on one app.
public struct AuthorizationAdminOutcome: Hashable, Sendable {
    /// The app's record to persist.
    public let record: AuthorizationRecord
    /// The app's effective status after the action.
    public let effectiveStatus: AuthorizationStatus
    /// The request that was waiting and is now answered (or, on reset, dropped); nil when none was waiting.
    public let resolvedRequest: AuthorizationRequest?
    /// What to do for each of the app's clients.
    public let sideEffects: AuthorizationSideEffects
}
