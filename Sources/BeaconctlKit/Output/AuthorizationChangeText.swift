public import DBus
import BeacondAPI

/// What an administrator's `auth grant|deny|reset` did, read from the app's stored status and pending request
/// before and after the call: `denied` with a WhenInUse→Always request pending answers the request ("keep
/// WhenInUse") and leaves the app authorizedWhenInUse, so printing "denied" would be false.
public struct AppAuthorization: Sendable, Equatable {
    public var status: String
    /// `""`, `whenInUse` or `always`.
    public var pendingRequest: String

    public init(status: String, pendingRequest: String) {
        self.status = status
        self.pendingRequest = pendingRequest
    }

    /// The app's entry in `ListApps`; nil when the app is not declared.
    public init?(app: String, apps: [VarDict]) {
        guard let entry = apps.first(where: { $0.string(BeacondAppKey.appID) == app }),
            let stored = entry.string(BeacondAppKey.authorizationStatus)
        else { return nil }
        self.init(status: stored, pendingRequest: entry.string(BeacondAppKey.pendingRequest) ?? "")
    }

    static func requestName(_ request: String) -> String {
        request == "always" ? "Always" : request == "whenInUse" ? "WhenInUse" : request
    }

    /// One line: the app, what it is now and what it was, and which request the change answered.
    public static func change(app: String, before: AppAuthorization?, after: AppAuthorization?) -> String {
        guard let after else { return "\(app): done" }
        guard let before else { return "\(app): \(after.status)" }
        var line = "\(app): "
        if after.status == before.status {
            if !before.pendingRequest.isEmpty, after.pendingRequest.isEmpty {
                line += "declined its request for \(requestName(before.pendingRequest)); it stays \(after.status)"
            } else {
                line += "already \(after.status); nothing changed"
            }
        } else {
            line += "\(after.status) (was \(before.status))"
            if !before.pendingRequest.isEmpty, after.pendingRequest.isEmpty {
                line += ", answering its request for \(requestName(before.pendingRequest))"
            }
        }
        return line
    }
}
