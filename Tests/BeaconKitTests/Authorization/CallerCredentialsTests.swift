import BeaconKit
import Testing

@Suite("Caller credentials against the app declaration")
struct CallerCredentialsTests {
    static let app = AppDeclaration(
        appID: "org.example.Shop", whenInUseUsageDescription: "table service",
        users: ["shop", "kiosk"], executable: "/usr/bin/shop-client")

    @Test func listedUserRunningTheDeclaredExecutableIsAllowed() throws {
        try AuthorizationRules.checkCaller(
            CallerCredentials(userName: "kiosk", userID: 1001, executable: "/usr/bin/shop-client"), app: Self.app)
    }

    @Test func unlistedUserIsRefusedWithTheFix() {
        let caller = CallerCredentials(userName: "mallory", userID: 1666, executable: "/usr/bin/shop-client")
        #expect {
            try AuthorizationRules.checkCaller(caller, app: Self.app)
        } throws: { error in
            guard let error = error as? AuthorizationError else { return false }
            return error.kind == .callerNotPermitted && error.appID == "org.example.Shop"
                && error.message.contains("mallory") && error.message.contains("is not in users")
                // The app's other users are none of the caller's business.
                && !error.message.contains("kiosk")
                && error.message.contains("/etc/beacond/apps.d/org.example.Shop.toml")
                && error.message.contains("Fix:")
        }
    }

    /// Root is not exempt: administrators use Admin1, not an app's identity.
    @Test func rootIsNotExempt() {
        #expect(throws: AuthorizationError.self) {
            try AuthorizationRules.checkCaller(
                CallerCredentials(userName: "root", userID: 0, executable: "/usr/bin/shop-client"), app: Self.app)
        }
    }

    @Test func wrongOrUnknownExecutableIsRefused() {
        for executable in ["/usr/bin/python3", nil] {
            let caller = CallerCredentials(userName: "shop", userID: 1000, executable: executable)
            #expect {
                try AuthorizationRules.checkCaller(caller, app: Self.app)
            } throws: { error in
                guard let error = error as? AuthorizationError else { return false }
                return error.kind == .callerNotPermitted && error.message.contains("/usr/bin/shop-client")
                    && error.message.contains("Fix:")
            }
        }
    }

    @Test func withoutDeclaredExecutableAnyProcessOfAListedUserIsAllowed() throws {
        let app = AppDeclaration(appID: "org.example.Any", users: ["alice"])
        try AuthorizationRules.checkCaller(CallerCredentials(userName: "alice", userID: 1000, executable: nil), app: app)
    }

    /// An empty users list allows nobody (never "everyone").
    @Test func emptyUsersAllowsNobody() {
        let app = AppDeclaration(appID: "org.example.Nobody")
        #expect {
            try AuthorizationRules.checkCaller(CallerCredentials(userName: "alice", userID: 1000, executable: nil), app: app)
        } throws: { error in
            (error as? AuthorizationError)?.message.contains("alice (uid 1000) may not act as app org.example.Nobody") == true
        }
    }
}
