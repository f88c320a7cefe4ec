/// Which authorization an app asks for: `RequestWhenInUseAuthorization` or `RequestAlwaysAuthorization`.
///
/// Ordered by how much they grant, so two requests waiting for an administrator merge into the larger one.
public enum AuthorizationRequest: String, CaseIterable, Codable, Hashable, Comparable, Sendable,
    CustomStringConvertible
{
    case whenInUse
    case always

    /// The method an app calls to make this request (Core Location's `requestWhenInUseAuthorization`
    /// and `requestAlwaysAuthorization`, in the daemon's spelling).
    public var methodName: String {
        switch self {
        case .whenInUse: "RequestWhenInUseAuthorization"
        case .always: "RequestAlwaysAuthorization"
        }
    }

    /// The status this request asks for.
    public var requestedStatus: AuthorizationStatus {
        switch self {
        case .whenInUse: .authorizedWhenInUse
        case .always: .authorizedAlways
        }
    }

    /// The app-declaration key that must hold this request's usage description.
    public var usageDescriptionKey: String {
        switch self {
        case .whenInUse: "when_in_use_usage"
        case .always: "always_usage"
        }
    }

    /// The word `beaconctl auth grant APP …` takes for this request.
    public var grantArgument: String {
        switch self {
        case .whenInUse: "when-in-use"
        case .always: "always"
        }
    }

    public var description: String { methodName }

    public static func < (lhs: AuthorizationRequest, rhs: AuthorizationRequest) -> Bool {
        lhs == .whenInUse && rhs == .always
    }
}

/// An administrator's answer to an app (`beaconctl auth grant APP always|when-in-use`, `beaconctl auth deny APP`).
public enum AuthorizationDecision: String, CaseIterable, Codable, Hashable, Sendable {
    case grantAlways
    case grantWhenInUse
    /// Refuses the waiting request. A refused WhenInUse→Always upgrade keeps WhenInUse (iOS's
    /// "Keep Only While Using"); anything else becomes `denied`.
    case deny
}
