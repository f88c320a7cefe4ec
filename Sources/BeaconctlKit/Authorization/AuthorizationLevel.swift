import BeacondAPI

/// The authorization an administrator grants, as `beaconctl auth grant APP always|when-in-use` spells it.
public enum AuthorizationLevel: String, CaseIterable, Sendable {
    case always
    case whenInUse = "when-in-use"

    /// The status string `SetAuthorization` takes.
    public var status: String {
        switch self {
        case .always: return BeacondStatus.authorizedAlways
        case .whenInUse: return BeacondStatus.authorizedWhenInUse
        }
    }

    /// The level a pending request (`Request` value) asks for.
    public init(request: String) {
        self = request == BeacondRequestKind.always ? .always : .whenInUse
    }
}
