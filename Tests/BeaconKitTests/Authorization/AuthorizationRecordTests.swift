import BeaconKit
import Foundation
import Testing

/// The persisted record and the fixed strings clients and configuration depend on.
@Suite struct AuthorizationRecordTests {
    @Test func statusStringsAreCoreLocationsNames() {
        #expect(
            AuthorizationStatus.allCases.map(\.rawValue)
                == ["notDetermined", "restricted", "denied", "authorizedWhenInUse", "authorizedAlways"])
        #expect(AuthorizationPrompt.allCases.map(\.rawValue) == ["admin", "deny", "when-in-use", "always"])
        #expect(
            AuthorizationRequest.allCases.map(\.methodName)
                == ["RequestWhenInUseAuthorization", "RequestAlwaysAuthorization"])
        #expect(AuthorizationRequest.allCases.map(\.usageDescriptionKey) == ["when_in_use_usage", "always_usage"])
        #expect(AuthorizationRequest.whenInUse < .always && !(AuthorizationRequest.always < .always))
    }

    /// A request can wait only while notDetermined (either kind) or as the upgrade while WhenInUse.
    @Test func pendingRequestIsKeptOnlyWhereItCanWait() {
        let kept: [(AuthorizationStatus, AuthorizationRequest)] = [
            (.notDetermined, .whenInUse), (.notDetermined, .always), (.authorizedWhenInUse, .always),
        ]
        for status in AuthorizationStatus.allCases {
            for request in AuthorizationRequest.allCases {
                let record = AuthorizationRecord(status: status, pendingRequest: request)
                let expected = kept.contains { $0 == (status, request) } ? request : nil
                #expect(record.pendingRequest == expected, "\(status) \(request)")
                #expect(record.hasPendingUpgrade == (status == .authorizedWhenInUse && expected == .always))
            }
        }
    }

    @Test func roundTripsThroughJSON() throws {
        for record in AuthorizationFixtures.records {
            let data = try JSONEncoder().encode(record)
            #expect(try JSONDecoder().decode(AuthorizationRecord.self, from: data) == record)
        }
    }

    @Test func decodingNormalisesAndDefaults() throws {
        let json = Data(#"{"status":"denied","pendingRequest":"always"}"#.utf8)
        #expect(try JSONDecoder().decode(AuthorizationRecord.self, from: json) == AuthorizationRecord(status: .denied))
        let bad = Data(#"{"status":"allowed"}"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(AuthorizationRecord.self, from: bad) }
    }

    @Test func blankUsageDescriptionCountsAsMissing() {
        let app = AppDeclaration(appID: "a", whenInUseUsageDescription: " \n\t", alwaysUsageDescription: "why")
        #expect(app.usageDescription(for: .whenInUse) == nil)
        #expect(app.usageDescription(for: .always) == "why")
    }

    @Test func defaultsAreServicesOnAndAdminPrompt() {
        let policy = AuthorizationPolicy()
        #expect(policy.locationServicesEnabled && policy.prompt == .admin)
        #expect(policy.configFile == "/etc/beacond/beacond.toml")
        #expect(AuthorizationRecord.initial == AuthorizationRecord(status: .notDetermined))
    }
}
