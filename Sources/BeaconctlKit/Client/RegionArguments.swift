public import BeaconKit
import BeacondAPI

/// The `a{sv}` dictionaries `StartMonitoring` and `StartRanging` take, from a parsed constraint.
public enum RegionArguments {
    /// `{UUID, Major?, Minor?}` (major and minor as `q`, as the API says).
    public static func constraint(_ constraint: BeaconIdentityConstraint) -> VarDict {
        var dictionary: VarDict = [BeacondKey.uuid: .string(constraint.uuid.uuidString)]
        if let major = constraint.major { dictionary[BeacondKey.major] = .uint16(major) }
        if let minor = constraint.minor { dictionary[BeacondKey.minor] = .uint16(minor) }
        return dictionary
    }

    /// `{Identifier, UUID, Major?, Minor?, Room?, EntryDelay?, ExitDelay?}`; entry and exit notifications are left at
    /// their default (on).
    public static func region(
        _ constraint: BeaconIdentityConstraint, identifier: String, room: String? = nil,
        entryDelay: Double? = nil, exitDelay: Double? = nil
    ) -> VarDict {
        var dictionary = Self.constraint(constraint)
        dictionary[BeacondKey.identifier] = .string(identifier)
        if let room { dictionary[BeacondKey.room] = .string(room) }
        if let entryDelay { dictionary[BeacondKey.entryDelay] = .double(entryDelay) }
        if let exitDelay { dictionary[BeacondKey.exitDelay] = .double(exitDelay) }
        return dictionary
    }
}

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
