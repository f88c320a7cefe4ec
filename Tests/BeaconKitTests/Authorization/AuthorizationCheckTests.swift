import BeaconKit
import Testing

/// What each status allows, against the table in docs/authorization.md, and what the refusals say.
@Suite struct AuthorizationCheckTests {
    typealias Fixtures = AuthorizationFixtures

    /// nil = allowed; otherwise the error kind. Ranging: [in use, background].
    static let ranging: [AuthorizationStatus: [AuthorizationError.Kind?]] = [
        .notDetermined: [.notAuthorized, .notAuthorized],
        .restricted: [.notAuthorized, .notAuthorized],
        .denied: [.notAuthorized, .notAuthorized],
        .authorizedWhenInUse: [nil, .notAuthorized],
        .authorizedAlways: [nil, nil],
    ]
    static let monitoring: [AuthorizationStatus: AuthorizationError.Kind?] = [
        .notDetermined: .notAuthorized,
        .restricted: .notAuthorized,
        .denied: .notAuthorized,
        .authorizedWhenInUse: .notAuthorized,
        .authorizedAlways: nil,
    ]

    static func rangingError(
        _ app: AppDeclaration, _ record: AuthorizationRecord, _ policy: AuthorizationPolicy,
        inUse: Bool
    ) -> AuthorizationError? {
        do throws(AuthorizationError) {
            try AuthorizationRules.checkRanging(app: app, record: record, policy: policy, inUse: inUse)
            return nil
        } catch {
            return error
        }
    }

    static func monitoringError(
        _ app: AppDeclaration, _ record: AuthorizationRecord,
        _ policy: AuthorizationPolicy
    ) -> AuthorizationError? {
        do throws(AuthorizationError) {
            try AuthorizationRules.checkMonitoring(app: app, record: record, policy: policy)
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [true, false])
    func everyCheck(servicesOn: Bool) {
        let policy = Fixtures.policy(servicesOn: servicesOn)
        for record in Fixtures.records {
            for app in Fixtures.declarations {
                let context = "\(record) \(app) services=\(servicesOn)"
                for (index, inUse) in [true, false].enumerated() {
                    let error = Self.rangingError(app, record, policy, inUse: inUse)
                    let expected = servicesOn ? Self.ranging[record.status]?[index] : .locationServicesDisabled
                    #expect(error?.kind == expected, "ranging inUse=\(inUse) \(context)")
                    if let error { #expect(Fixtures.expectActionable(error, context), "\(error.message)") }
                }
                let error = Self.monitoringError(app, record, policy)
                let expected = servicesOn ? Self.monitoring[record.status] ?? nil : .locationServicesDisabled
                #expect(error?.kind == expected, "monitoring \(context)")
                if let error { #expect(Fixtures.expectActionable(error, context), "\(error.message)") }
                #expect(AuthorizationRules.effectiveStatus(record, policy) == (servicesOn ? record.status : .restricted))
            }
        }
    }

    @Test func rangingPermissionMatchesChecks() {
        #expect(RangingPermission.refused.allows(inUse: true) == false)
        #expect(RangingPermission.whileInUse.allows(inUse: true) && !RangingPermission.whileInUse.allows(inUse: false))
        #expect(RangingPermission.always.allows(inUse: false))
        for record in Fixtures.records {
            for servicesOn in [true, false] {
                let policy = Fixtures.policy(servicesOn: servicesOn)
                let permission = AuthorizationRules.rangingPermission(record, policy)
                for inUse in [true, false] {
                    let allowed = Self.rangingError(Fixtures.fullyDeclared, record, policy, inUse: inUse) == nil
                    #expect(permission.allows(inUse: inUse) == allowed, "\(record) services=\(servicesOn) inUse=\(inUse)")
                }
            }
        }
    }

    // MARK: what the messages say

    static let app = Fixtures.fullyDeclared
    static let on = Fixtures.policy(servicesOn: true)

    @Test func whenInUseMonitoringNamesTheUpgradeAndTheAdminCommand() {
        let record = AuthorizationRecord(status: .authorizedWhenInUse)
        #expect(
            Self.monitoringError(Self.app, record, Self.on)?.message
                == "monitoring needs authorizedAlways; app 'org.example.cafe' is authorizedWhenInUse. Fix: call "
                + "RequestAlwaysAuthorization (one upgrade request is allowed), or ask an administrator: "
                + "beaconctl auth grant org.example.cafe always")
    }

    @Test func spentUpgradeLeavesOnlyTheAdmin() throws {
        let record = AuthorizationRecord(status: .authorizedWhenInUse, upgradeRequestUsed: true)
        let message = try #require(Self.monitoringError(Self.app, record, Self.on)?.message)
        #expect(message.contains("used its one upgrade request"))
        #expect(message.contains("beaconctl auth grant org.example.cafe always"))
        #expect(!message.contains("call RequestAlwaysAuthorization"))
    }

    @Test func waitingUpgradeSaysSo() throws {
        let record = AuthorizationRecord(status: .authorizedWhenInUse, upgradeRequestUsed: true, pendingRequest: .always)
        let message = try #require(Self.monitoringError(Self.app, record, Self.on)?.message)
        #expect(message.contains("RequestAlwaysAuthorization waits for an administrator"))
        #expect(message.contains("AuthorizationChanged"))
    }

    @Test func missingAlwaysDescriptionIsNamedBeforeTheUpgrade() throws {
        let app = AppDeclaration(appID: Fixtures.appID, whenInUseUsageDescription: "table")
        let message = try #require(Self.monitoringError(app, AuthorizationRecord(status: .authorizedWhenInUse), Self.on)?.message)
        #expect(
            message.contains(
                "add always_usage = \"<why org.example.cafe needs location>\" to "
                    + "/etc/beacond/apps.d/org.example.cafe.toml, reload beacond (systemctl reload beacond, or kill -HUP "
                    + "a beacond run by hand), then call "
                    + "RequestAlwaysAuthorization"))
    }

    @Test func notDeterminedSaysWhichMethodToCall() throws {
        let record = AuthorizationRecord.initial
        let ranging = try #require(Self.rangingError(Self.app, record, Self.on, inUse: true)?.message)
        #expect(ranging.contains("request authorization first"))
        #expect(ranging.contains("call RequestWhenInUseAuthorization"))
        #expect(ranging.contains("beaconctl auth grant org.example.cafe when-in-use"))
        let monitoring = try #require(Self.monitoringError(Self.app, record, Self.on)?.message)
        #expect(monitoring.contains("call RequestAlwaysAuthorization"))
        #expect(monitoring.contains("beaconctl auth grant org.example.cafe always"))
    }

    @Test func notDeterminedRangingPrefersTheDeclaredRequest() throws {
        let alwaysOnly = AppDeclaration(appID: Fixtures.appID, alwaysUsageDescription: "offers")
        let message = try #require(Self.rangingError(alwaysOnly, .initial, Self.on, inUse: true)?.message)
        #expect(message.contains("call RequestAlwaysAuthorization"))
        #expect(!message.contains("add "))
        let neither = try #require(Self.rangingError(Fixtures.undeclared, .initial, Self.on, inUse: true)?.message)
        #expect(neither.contains("add when_in_use_usage"))
        #expect(neither.contains("then call RequestWhenInUseAuthorization"))
    }

    @Test func pendingRequestTooSmallForMonitoringSaysToWidenIt() throws {
        let record = AuthorizationRecord(status: .notDetermined, pendingRequest: .whenInUse)
        let monitoring = try #require(Self.monitoringError(Self.app, record, Self.on)?.message)
        #expect(monitoring.contains("would not allow monitoring"))
        #expect(monitoring.contains("call RequestAlwaysAuthorization (it widens the waiting request)"))
        let ranging = try #require(Self.rangingError(Self.app, record, Self.on, inUse: true)?.message)
        #expect(ranging.contains("waits for an administrator"))
        #expect(ranging.contains("beaconctl auth grant org.example.cafe when-in-use"))
    }

    @Test(arguments: [AuthorizationStatus.restricted, .denied])
    func lockedStatusesPointAtTheAdmin(status: AuthorizationStatus) throws {
        let record = AuthorizationRecord(status: status)
        let message = try #require(Self.monitoringError(Self.app, record, Self.on)?.message)
        #expect(message.contains("is \(status)"))
        #expect(message.contains("requests do nothing"))
        #expect(message.contains("beaconctl auth grant org.example.cafe always"))
        #expect(message.contains("beaconctl auth reset org.example.cafe"))
    }

    @Test func backgroundRangingWithWhenInUseSaysHowToRangeInBackground() throws {
        let record = AuthorizationRecord(status: .authorizedWhenInUse)
        let message = try #require(Self.rangingError(Self.app, record, Self.on, inUse: false)?.message)
        #expect(message.contains("SetInUse(false)"))
        #expect(message.contains("call SetInUse(true)"))
        #expect(message.contains("RequestAlwaysAuthorization (one upgrade request is allowed)"))
    }

    @Test func servicesOffNamesTheSwitchAndTheConfigFile() throws {
        let policy = AuthorizationPolicy(locationServicesEnabled: false, prompt: .admin, configFile: "/tmp/test/beacond.toml")
        let record = AuthorizationRecord(status: .authorizedAlways)
        let error = try #require(Self.monitoringError(Self.app, record, policy))
        #expect(error.kind == .locationServicesDisabled)
        #expect(
            error.message == "monitoring is refused: location services are switched off for every app, so app "
                + "'org.example.cafe' is effectively restricted (its own status, authorizedAlways, returns when they are "
                + "switched on). Fix: beaconctl services on, or set location_services = true in /tmp/test/beacond.toml "
                + "and reload beacond (systemctl reload beacond, or kill -HUP a beacond run by hand).")
    }

    @Test func declarationFileIsNamedAsGiven() throws {
        let app = AppDeclaration(appID: "x", declarationFile: "/srv/apps/x.toml")
        #expect(app.declarationFile == "/srv/apps/x.toml")
        #expect(AppDeclaration(appID: "y").declarationFile == "/etc/beacond/apps.d/y.toml")
        let result = Result { () throws(AuthorizationError) in
            try AuthorizationRules.request(.whenInUse, app: app, record: .initial, policy: Self.on)
        }
        guard case .failure(let error) = result else {
            Issue.record("expected MissingUsageDescription")
            return
        }
        #expect(
            error.message == "RequestWhenInUseAuthorization needs a when-in-use usage description, and app 'x' "
                + "declares none. Fix: add when_in_use_usage = \"<why x needs location>\" to /srv/apps/x.toml and reload "
                + "beacond (systemctl reload beacond, or kill -HUP a beacond run by hand), then call RequestWhenInUseAuthorization again.")
    }
}
