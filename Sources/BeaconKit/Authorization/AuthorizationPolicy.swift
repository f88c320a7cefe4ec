/// The administrator's global settings that the authorization rules depend on (from `/etc/beacond/beacond.toml`
/// or `beaconctl services on|off`).
public struct AuthorizationPolicy: Hashable, Sendable {
    /// Core Location's global "Location Services" switch. Off makes every app effectively `restricted`
    /// while keeping each app's stored status, which returns when it is switched on again.
    public var locationServicesEnabled: Bool
    /// How requests from undetermined apps are answered.
    public var prompt: AuthorizationPrompt
    /// The daemon configuration file, named in error messages so the fix is exact.
    public var configFile: String

    /// Where the daemon reads its configuration unless told otherwise (docs/daemon.md).
    public static let defaultConfigFile = "/etc/beacond/beacond.toml"

    /// Defaults: services on (as on iOS) and `prompt = "admin"`, the safe
    /// one: nothing is granted until a person decides.
    public init(
        locationServicesEnabled: Bool = true, prompt: AuthorizationPrompt = .admin,
        configFile: String = AuthorizationPolicy.defaultConfigFile
    ) {
        self.locationServicesEnabled = locationServicesEnabled
        self.prompt = prompt
        self.configFile = configFile
    }

    /// This policy with the location-services switch set to `enabled`.
    public func withLocationServices(_ enabled: Bool) -> AuthorizationPolicy {
        var copy = self
        copy.locationServicesEnabled = enabled
        return copy
    }
}
