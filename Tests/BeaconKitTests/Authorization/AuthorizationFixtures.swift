import BeaconKit

/// Shared inputs for the authorization tests: every record shape and every declaration shape worth trying.
enum AuthorizationFixtures {
    static let appID = "org.example.cafe"

    /// Absent, blank (counts as absent) and present, for each usage description.
    static let whenInUseTexts: [String?] = [nil, "", "Shows the table you sit at"]
    static let alwaysTexts: [String?] = [nil, "  ", "Tells you about offers when you pass the shop"]

    static var declarations: [AppDeclaration] {
        whenInUseTexts.flatMap { whenInUse in
            alwaysTexts.map { always in
                AppDeclaration(appID: appID, whenInUseUsageDescription: whenInUse, alwaysUsageDescription: always)
            }
        }
    }

    static let fullyDeclared = AppDeclaration(
        appID: appID, whenInUseUsageDescription: "Shows the table you sit at",
        alwaysUsageDescription: "Tells you about offers when you pass the shop")
    static let undeclared = AppDeclaration(appID: appID)

    static let pendings: [AuthorizationRequest?] = [nil, .whenInUse, .always]

    /// Every record the initialiser accepts (some collapse to the same record after normalisation).
    static var records: [AuthorizationRecord] {
        AuthorizationStatus.allCases.flatMap { status in
            [false, true].flatMap { used in
                pendings.map { AuthorizationRecord(status: status, upgradeRequestUsed: used, pendingRequest: $0) }
            }
        }
    }

    static func policy(servicesOn: Bool, prompt: AuthorizationPrompt = .admin) -> AuthorizationPolicy {
        AuthorizationPolicy(locationServicesEnabled: servicesOn, prompt: prompt)
    }

    /// What every refusal must carry: the app, and a "Fix:" that points at something to do.
    static func expectActionable(_ error: AuthorizationError, _ context: String) -> Bool {
        guard error.appID == appID, error.message.contains("'\(appID)'"),
            let fix = error.message.range(of: "Fix: ")
        else { return false }
        let remedy = error.message[fix.upperBound...]
        return ["beaconctl ", "call ", "add "].contains { remedy.contains($0) }
    }
}
