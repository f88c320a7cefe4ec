/// What an app declares about itself in `/etc/beacond/apps.d/APP.toml` that the authorization rules need:
/// its usage descriptions, the Linux analogue of `NSLocationWhenInUseUsageDescription` and
/// `NSLocationAlwaysAndWhenInUseUsageDescription` in an iOS app's Info.plist.
public struct AppDeclaration: Hashable, Sendable {
    public var appID: String
    /// `when_in_use_usage`: why the app needs location while it is in use.
    public var whenInUseUsageDescription: String?
    /// `always_usage`: why the app needs location also in background (monitoring).
    public var alwaysUsageDescription: String?
    /// `users`: the unix user names allowed to register as this app. Empty means nobody: an app
    /// must name who may act as it (a missing list is a configuration error, never "everyone").
    public var users: Set<String>
    /// `executable`: when set, only a process running this executable may register as the app.
    public var executable: String?
    /// The file the declaration came from (or should be written to), named in error messages.
    public var declarationFile: String

    /// The folder of app declarations (docs/authorization.md).
    public static let declarationDirectory = "/etc/beacond/apps.d"

    /// `declarationFile` defaults to `/etc/beacond/apps.d/APP.toml`, where the daemon looks for the app.
    public init(
        appID: String, whenInUseUsageDescription: String? = nil, alwaysUsageDescription: String? = nil,
        users: Set<String> = [], executable: String? = nil, declarationFile: String? = nil
    ) {
        self.appID = appID
        self.whenInUseUsageDescription = whenInUseUsageDescription
        self.alwaysUsageDescription = alwaysUsageDescription
        self.users = users
        self.executable = executable
        self.declarationFile = declarationFile ?? "\(AppDeclaration.declarationDirectory)/\(appID).toml"
    }

    /// The usage description a request needs, or nil when it is absent. A blank string counts as absent:
    /// it explains nothing to the administrator who reads it.
    public func usageDescription(for request: AuthorizationRequest) -> String? {
        let text =
            switch request {
            case .whenInUse: whenInUseUsageDescription
            case .always: alwaysUsageDescription
            }
        guard let text, !text.allSatisfy(\.isWhitespace) else { return nil }
        return text
    }
}
