public import BeacondAPI
public import BeaconKit

/// A refusal the daemon sends as `org.beacond.Error.*`: the name says what kind, the message what is wrong
/// and how to fix it. Every refusal goes through here, so none is silent.
public struct BeacondError: Error, Hashable, Sendable, CustomStringConvertible {
    public var name: BeacondErrorName
    public var message: String

    public init(_ name: BeacondErrorName, _ message: String) {
        self.name = name
        self.message = message
    }

    public var description: String { "\(name.rawValue): \(message)" }

    /// BeaconKit's authorization refusals map one to one onto error names.
    public init(_ error: AuthorizationError) {
        let name: BeacondErrorName =
            switch error.kind {
            case .missingUsageDescription: .missingUsageDescription
            case .notAuthorized: .notAuthorized
            case .locationServicesDisabled: .locationServicesDisabled
            case .callerNotPermitted: .accessDenied
            }
        self.init(name, error.message)
    }
}
