public import BeaconKit

/// One app from `apps.d/*.toml`: what the authorization rules need (`declaration`) plus what only the daemon uses.
public struct AppConfiguration: Hashable, Sendable {
    /// App id, users, executable, usage descriptions and the file they came from.
    public var declaration: AppDeclaration
    /// `dbus_name`: the well-known name the app's D-Bus activation file provides, so queued events can start it.
    public var dbusName: String?
    /// `[devices]`: this app's private devices by name, never visible to other apps.
    public var devices: [String: IdentityResolvingKey]

    public init(declaration: AppDeclaration, dbusName: String? = nil, devices: [String: IdentityResolvingKey] = [:]) {
        self.declaration = declaration
        self.dbusName = dbusName
        self.devices = devices
    }
}
