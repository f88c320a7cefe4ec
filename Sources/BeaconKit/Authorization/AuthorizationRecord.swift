/// One app's stored authorization, the state the daemon persists per app id.
///
/// The status here is what the administrator or a request decided; what a client sees also depends
/// on the global switch (see `AuthorizationRules.effectiveStatus`).
public struct AuthorizationRecord: Hashable, Sendable, Codable {
    public private(set) var status: AuthorizationStatus
    /// Whether the app already made its one WhenInUse→Always upgrade request (iOS 13.4+ allows one).
    /// Only a reset gives it back.
    public private(set) var upgradeRequestUsed: Bool
    /// A request waiting for an administrator (`prompt = "admin"`), or nil.
    public private(set) var pendingRequest: AuthorizationRequest?

    /// A new app: not determined, upgrade unused, nothing pending.
    public static let initial = AuthorizationRecord(status: .notDetermined)

    /// A pending request is kept only where one can wait: any request while `notDetermined`, or the Always
    /// upgrade while `authorizedWhenInUse`. Anything else (say, a hand-edited state file) is dropped, so
    /// the rules never see a request that could not have been made.
    public init(
        status: AuthorizationStatus, upgradeRequestUsed: Bool = false,
        pendingRequest: AuthorizationRequest? = nil
    ) {
        self.status = status
        self.upgradeRequestUsed = upgradeRequestUsed
        self.pendingRequest =
            switch (status, pendingRequest) {
            case (.notDetermined, let request): request
            case (.authorizedWhenInUse, .always): .always
            default: nil
            }
    }

    /// Decoding goes through the normalising initialiser.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            status: try container.decode(AuthorizationStatus.self, forKey: .status),
            upgradeRequestUsed: try container.decodeIfPresent(Bool.self, forKey: .upgradeRequestUsed) ?? false,
            pendingRequest: try container.decodeIfPresent(AuthorizationRequest.self, forKey: .pendingRequest))
    }

    private enum CodingKeys: String, CodingKey {
        case status, upgradeRequestUsed, pendingRequest
    }

    /// Whether the waiting request is the WhenInUse→Always upgrade.
    public var hasPendingUpgrade: Bool { status == .authorizedWhenInUse && pendingRequest == .always }
}
