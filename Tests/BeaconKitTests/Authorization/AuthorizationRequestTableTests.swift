import BeaconKit
import Testing

/// Every request against every state, checked against a table written out by hand from the rules in
/// docs/authorization.md (not derived from the code under test).
@Suite struct AuthorizationRequestTableTests {
    /// What a request should do, before the two rules that override the table (missing usage description
    /// → error; location services off → ignored).
    enum Expected: Equatable {
        case ignored(AuthorizationRequestDisposition.IgnoredReason)
        /// Waits with this pending request; `usedAfter` nil means the upgrade flag is unchanged.
        case pending(AuthorizationRequest, usedAfter: Bool?)
        /// Decided at once to this status.
        case decided(AuthorizationStatus, usedAfter: Bool?)
    }

    struct Row {
        let status: AuthorizationStatus
        let used: Bool
        let pending: AuthorizationRequest?
        let request: AuthorizationRequest
        /// Indexed like `prompts`.
        let outcomes: [Expected]
    }

    static let prompts: [AuthorizationPrompt] = [.admin, .deny, .whenInUse, .always]

    // Shorthands so the table reads as a table.
    static let keep = Expected.ignored(.alreadyDetermined)
    static let locked = Expected.ignored(.restricted)
    static let refused = Expected.ignored(.denied)
    static let spent = Expected.ignored(.upgradeAlreadyUsed)
    static func waits(_ request: AuthorizationRequest, used: Bool? = nil) -> Expected { .pending(request, usedAfter: used) }
    static func to(_ status: AuthorizationStatus, used: Bool? = nil) -> Expected { .decided(status, usedAfter: used) }
    static func all(_ expected: Expected) -> [Expected] { Array(repeating: expected, count: 4) }

    static let table: [Row] = {
        var rows: [Row] = []
        func row(
            _ status: AuthorizationStatus, used: Bool, pending: AuthorizationRequest?, _ request: AuthorizationRequest,
            _ outcomes: [Expected]
        ) {
            rows.append(Row(status: status, used: used, pending: pending, request: request, outcomes: outcomes))
        }
        for used in [false, true] {
            //                                                       admin                 deny           when-in-use                  always
            row(
                .notDetermined, used: used, pending: nil, .whenInUse,
                [waits(.whenInUse), to(.denied), to(.authorizedWhenInUse), to(.authorizedWhenInUse)])
            row(.notDetermined, used: used, pending: nil, .always, [waits(.always), to(.denied), to(.authorizedWhenInUse), to(.authorizedAlways)])
            // A waiting request keeps waiting whatever the prompt now says; a larger request widens it.
            row(.notDetermined, used: used, pending: .whenInUse, .whenInUse, all(waits(.whenInUse)))
            row(.notDetermined, used: used, pending: .whenInUse, .always, all(waits(.always)))
            row(.notDetermined, used: used, pending: .always, .whenInUse, all(waits(.always)))
            row(.notDetermined, used: used, pending: .always, .always, all(waits(.always)))
            for request in AuthorizationRequest.allCases {
                row(.restricted, used: used, pending: nil, request, all(locked))
                row(.denied, used: used, pending: nil, request, all(refused))
                row(.authorizedAlways, used: used, pending: nil, request, all(keep))
            }
            row(.authorizedWhenInUse, used: used, pending: nil, .whenInUse, all(keep))
            row(.authorizedWhenInUse, used: used, pending: .always, .whenInUse, all(keep))
            // An upgrade already waiting keeps waiting (record untouched).
            row(.authorizedWhenInUse, used: used, pending: .always, .always, all(waits(.always)))
        }
        // The one upgrade request: spent when made, whatever the answer.
        row(
            .authorizedWhenInUse, used: false, pending: nil, .always,
            [
                waits(.always, used: true), to(.authorizedWhenInUse, used: true), to(.authorizedWhenInUse, used: true),
                to(.authorizedAlways, used: true),
            ])
        row(.authorizedWhenInUse, used: true, pending: nil, .always, all(spent))
        return rows
    }()

    static func lookup(
        _ record: AuthorizationRecord, _ request: AuthorizationRequest,
        _ prompt: AuthorizationPrompt
    ) -> Expected? {
        let matches = table.filter {
            $0.status == record.status && $0.used == record.upgradeRequestUsed
                && $0.pending == record.pendingRequest && $0.request == request
        }
        guard matches.count == 1, let row = matches.first, let index = prompts.firstIndex(of: prompt) else { return nil }
        return row.outcomes[index]
    }

    @Test func tableHasOneRowPerReachableState() {
        let keys = Set(Self.table.map { "\($0.status)/\($0.used)/\(String(describing: $0.pending))/\($0.request)" })
        #expect(keys.count == Self.table.count)
        let reachable = Set(AuthorizationFixtures.records.map { "\($0.status)/\($0.upgradeRequestUsed)" })
        #expect(reachable.count == 10)
        #expect(Self.table.count == 2 * (6 + 3 * 2 + 3) + 2)
    }

    @Test(arguments: AuthorizationPrompt.allCases, AuthorizationStatus.allCases)
    func everyRequest(prompt: AuthorizationPrompt, status: AuthorizationStatus) throws {
        var checked = 0
        for used in [false, true] {
            for pending in AuthorizationFixtures.pendings {
                let record = AuthorizationRecord(status: status, upgradeRequestUsed: used, pendingRequest: pending)
                for request in AuthorizationRequest.allCases {
                    for app in AuthorizationFixtures.declarations {
                        for servicesOn in [true, false] {
                            let policy = AuthorizationFixtures.policy(servicesOn: servicesOn, prompt: prompt)
                            let context = "\(record) \(request) \(prompt) services=\(servicesOn) \(app)"
                            try check(request, app, record, policy, context)
                            checked += 1
                        }
                    }
                }
            }
        }
        #expect(checked == 2 * 3 * 2 * 9 * 2)
    }

    private func check(
        _ request: AuthorizationRequest, _ app: AppDeclaration, _ record: AuthorizationRecord,
        _ policy: AuthorizationPolicy, _ context: String
    ) throws {
        let hasDescription =
            switch request {
            case .whenInUse: app.whenInUseUsageDescription.map { !$0.allSatisfy(\.isWhitespace) } ?? false
            case .always: app.alwaysUsageDescription.map { !$0.allSatisfy(\.isWhitespace) } ?? false
            }
        let result = Result { () throws(AuthorizationError) in
            try AuthorizationRules.request(request, app: app, record: record, policy: policy)
        }
        guard hasDescription else {
            guard case .failure(let error) = result else {
                Issue.record("expected MissingUsageDescription: \(context)")
                return
            }
            #expect(error.kind == .missingUsageDescription, "\(context)")
            let key = request == .whenInUse ? "when_in_use_usage" : "always_usage"
            #expect(error.message.contains(key), "\(context)")
            #expect(error.message.contains("/etc/beacond/apps.d/\(AuthorizationFixtures.appID).toml"), "\(context)")
            #expect(AuthorizationFixtures.expectActionable(error, context), "\(error.message)")
            return
        }
        let outcome = try result.get()
        guard policy.locationServicesEnabled else {
            #expect(outcome.disposition == .ignored(.locationServicesDisabled), "\(context)")
            #expect(outcome.record == record, "\(context)")
            #expect(outcome.effectiveStatus == .restricted, "\(context)")
            #expect(!outcome.changed && !outcome.pending && outcome.sideEffects == .none, "\(context)")
            #expect(outcome.note?.contains("beaconctl services on") == true, "\(context)")
            return
        }
        guard let expected = Self.lookup(record, request, policy.prompt) else {
            Issue.record("no table row for \(context)")
            return
        }
        let expectedRecord: AuthorizationRecord
        switch expected {
        case .ignored(let reason):
            #expect(outcome.disposition == .ignored(reason), "\(context)")
            expectedRecord = record
        case .pending(let waiting, let usedAfter):
            #expect(outcome.disposition == .pending && outcome.pending, "\(context)")
            expectedRecord = AuthorizationRecord(
                status: record.status, upgradeRequestUsed: usedAfter ?? record.upgradeRequestUsed,
                pendingRequest: waiting)
        case .decided(let status, let usedAfter):
            #expect(outcome.disposition == .decided && !outcome.pending, "\(context)")
            expectedRecord = AuthorizationRecord(status: status, upgradeRequestUsed: usedAfter ?? record.upgradeRequestUsed)
        }
        #expect(outcome.record == expectedRecord, "\(context): got \(outcome.record)")
        #expect(outcome.effectiveStatus == expectedRecord.status, "\(context)")
        let changed = expectedRecord.status != record.status
        #expect(outcome.changed == changed, "\(context)")
        #expect(
            outcome.sideEffects == AuthorizationSideEffects(authorizationChanged: changed ? expectedRecord.status : nil),
            "\(context)")
        if outcome.disposition == .decided {
            #expect(outcome.note == nil, "\(context)")
        } else {
            #expect(outcome.note?.contains("'\(AuthorizationFixtures.appID)'") == true, "\(context)")
        }
    }
}

/// What a request that did not act at once tells the daemon's log and the caller.
@Suite struct AuthorizationRequestNoteTests {
    typealias Fixtures = AuthorizationFixtures

    static func note(
        _ request: AuthorizationRequest, _ record: AuthorizationRecord,
        servicesOn: Bool = true, prompt: AuthorizationPrompt = .admin
    ) throws -> String {
        let outcome = try AuthorizationRules.request(
            request, app: Fixtures.fullyDeclared, record: record,
            policy: Fixtures.policy(servicesOn: servicesOn, prompt: prompt))
        return try #require(outcome.note)
    }

    @Test func everyReasonSaysWhyAndWhatWouldChangeIt() throws {
        let id = Fixtures.appID
        let pending = try Self.note(.always, .initial)
        #expect(pending.contains("waits for an administrator") && pending.contains("beaconctl auth deny \(id)"))
        let off = try Self.note(.whenInUse, .initial, servicesOn: false)
        #expect(off.contains("location services are switched off") && off.contains("beaconctl services on"))
        let restricted = try Self.note(.always, AuthorizationRecord(status: .restricted))
        #expect(restricted.contains("restricted") && restricted.contains("beaconctl auth grant \(id) always"))
        let denied = try Self.note(.whenInUse, AuthorizationRecord(status: .denied))
        #expect(denied.contains("denied") && denied.contains("beaconctl auth grant \(id) when-in-use"))
        let spent = try Self.note(.always, AuthorizationRecord(status: .authorizedWhenInUse, upgradeRequestUsed: true))
        #expect(spent.contains("one upgrade request") && spent.contains("beaconctl auth grant \(id) always"))
        let already = try Self.note(.whenInUse, AuthorizationRecord(status: .authorizedAlways))
        #expect(already.contains("already authorizedAlways"))
    }

    /// The iOS 13.4 flow under `prompt = "admin"`: WhenInUse first, then the one upgrade, each waiting for a person.
    @Test func whenInUseThenUpgradeUnderAdminPrompt() throws {
        let app = Fixtures.fullyDeclared
        let policy = Fixtures.policy(servicesOn: true, prompt: .admin)
        let asked = try AuthorizationRules.request(.whenInUse, app: app, record: .initial, policy: policy)
        #expect(asked.pending && !asked.changed && asked.effectiveStatus == .notDetermined)
        let granted = AuthorizationRules.decide(.grantWhenInUse, app: app, record: asked.record, policy: policy)
        #expect(granted.resolvedRequest == .whenInUse)
        #expect(granted.sideEffects == AuthorizationSideEffects(authorizationChanged: .authorizedWhenInUse))
        let upgrade = try AuthorizationRules.request(.always, app: app, record: granted.record, policy: policy)
        #expect(upgrade.pending && upgrade.record.upgradeRequestUsed && upgrade.effectiveStatus == .authorizedWhenInUse)
        let refused = AuthorizationRules.decide(.deny, app: app, record: upgrade.record, policy: policy)
        #expect(refused.record == AuthorizationRecord(status: .authorizedWhenInUse, upgradeRequestUsed: true))
        #expect(refused.sideEffects == .none)
        let again = try AuthorizationRules.request(.always, app: app, record: refused.record, policy: policy)
        #expect(again.disposition == .ignored(.upgradeAlreadyUsed) && again.record == refused.record)
    }
}
