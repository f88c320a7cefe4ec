import BeaconKit
import Testing

/// Administrator actions and the location-services switch: the resulting record and every side effect.
@Suite struct AuthorizationAdminTests {
    typealias Fixtures = AuthorizationFixtures

    /// Side effects of an effective-status change, written out by hand. C = AuthorizationChanged,
    /// M = monitoring stops (MonitoringDidFail), R = ranging stops (RangingDidFail),
    /// B = ranging drops to "only while in use".
    static let order: [AuthorizationStatus] = [.notDetermined, .restricted, .denied, .authorizedWhenInUse, .authorizedAlways]
    static let matrix: [[String]] = [
        //  to: nD     R      D      W      A          from:
        ["", "C", "C", "C", "C"], //                   notDetermined
        ["C", "", "C", "C", "C"], //                   restricted
        ["C", "C", "", "C", "C"], //                   denied
        ["CR", "CR", "CR", "", "C"], //                authorizedWhenInUse
        ["CMR", "CMR", "CMR", "CMB", ""], //           authorizedAlways
    ]

    static func codes(from: AuthorizationStatus, to: AuthorizationStatus) -> String {
        guard let row = order.firstIndex(of: from), let column = order.firstIndex(of: to) else { return "?" }
        return matrix[row][column]
    }

    /// Checks side effects against the matrix; `kind` is the error the failures must carry.
    static func expectEffects(
        _ effects: AuthorizationSideEffects, from: AuthorizationStatus, to: AuthorizationStatus,
        kind: AuthorizationError.Kind, _ context: String
    ) {
        let codes = codes(from: from, to: to)
        #expect(effects.authorizationChanged == (codes.contains("C") ? to : nil), "\(context)")
        #expect(effects.monitoringFailure?.kind == (codes.contains("M") ? kind : nil), "\(context)")
        #expect(effects.rangingFailure?.kind == (codes.contains("R") ? kind : nil), "\(context)")
        #expect(effects.rangingRestrictedToInUse == codes.contains("B"), "\(context)")
        for error in [effects.monitoringFailure, effects.rangingFailure].compactMap({ $0 }) {
            #expect(Fixtures.expectActionable(error, context), "\(error.message)")
        }
    }

    @Test(arguments: AuthorizationStatus.allCases, [true, false])
    func setStatusFromEveryRecord(to target: AuthorizationStatus, servicesOn: Bool) {
        let policy = Fixtures.policy(servicesOn: servicesOn)
        for record in Fixtures.records {
            let context = "\(record) → \(target) services=\(servicesOn)"
            let outcome = AuthorizationRules.setStatus(target, app: Fixtures.fullyDeclared, record: record, policy: policy)
            #expect(outcome.record.status == target, "\(context)")
            #expect(outcome.record.pendingRequest == nil, "\(context)")
            let usedAfter = target == .notDetermined ? false : record.upgradeRequestUsed || record.hasPendingUpgrade
            #expect(outcome.record.upgradeRequestUsed == usedAfter, "\(context)")
            #expect(outcome.resolvedRequest == record.pendingRequest, "\(context)")
            #expect(outcome.effectiveStatus == (servicesOn ? target : .restricted), "\(context)")
            if servicesOn {
                Self.expectEffects(outcome.sideEffects, from: record.status, to: target, kind: .notAuthorized, context)
            } else {
                #expect(outcome.sideEffects == .none, "stored change under services off is invisible: \(context)")
            }
        }
    }

    @Test func resetGivesBackTheUpgradeAndDropsTheWaitingRequest() {
        for record in Fixtures.records {
            let outcome = AuthorizationRules.reset(app: Fixtures.fullyDeclared, record: record, policy: Fixtures.policy(servicesOn: true))
            #expect(outcome.record == .initial)
            #expect(outcome.resolvedRequest == record.pendingRequest)
            Self.expectEffects(outcome.sideEffects, from: record.status, to: .notDetermined, kind: .notAuthorized, "\(record)")
            #expect(
                outcome
                    == AuthorizationRules.setStatus(
                        .notDetermined, app: Fixtures.fullyDeclared, record: record,
                        policy: Fixtures.policy(servicesOn: true)))
        }
        // After a reset the app may make its upgrade request again.
        let spent = AuthorizationRecord(status: .authorizedWhenInUse, upgradeRequestUsed: true)
        let policy = Fixtures.policy(servicesOn: true, prompt: .always)
        let reset = AuthorizationRules.reset(app: Fixtures.fullyDeclared, record: spent, policy: policy).record
        let first = try? AuthorizationRules.request(.whenInUse, app: Fixtures.fullyDeclared, record: reset, policy: policy)
        let upgrade = first.flatMap {
            try? AuthorizationRules.request(.always, app: Fixtures.fullyDeclared, record: $0.record, policy: policy)
        }
        #expect(upgrade?.record == AuthorizationRecord(status: .authorizedAlways, upgradeRequestUsed: true))
    }

    /// status, used, pending → (grantAlways, grantWhenInUse, deny) resulting status and upgrade flag.
    struct DecisionRow {
        let record: AuthorizationRecord
        let results: [(AuthorizationStatus, Bool)]
    }

    static let decisions: [DecisionRow] = [
        DecisionRow(
            record: AuthorizationRecord(status: .notDetermined, pendingRequest: .whenInUse),
            results: [(.authorizedAlways, false), (.authorizedWhenInUse, false), (.denied, false)]),
        DecisionRow(
            record: AuthorizationRecord(status: .notDetermined, pendingRequest: .always),
            results: [(.authorizedAlways, false), (.authorizedWhenInUse, false), (.denied, false)]),
        // The waiting upgrade: deny keeps WhenInUse ("Keep Only While Using").
        DecisionRow(
            record: AuthorizationRecord(status: .authorizedWhenInUse, upgradeRequestUsed: true, pendingRequest: .always),
            results: [(.authorizedAlways, true), (.authorizedWhenInUse, true), (.authorizedWhenInUse, true)]),
        // Nothing waiting: grant and deny set the status (the Settings app).
        DecisionRow(
            record: AuthorizationRecord(status: .notDetermined),
            results: [(.authorizedAlways, false), (.authorizedWhenInUse, false), (.denied, false)]),
        DecisionRow(
            record: AuthorizationRecord(status: .authorizedWhenInUse),
            results: [(.authorizedAlways, false), (.authorizedWhenInUse, false), (.denied, false)]),
        DecisionRow(
            record: AuthorizationRecord(status: .authorizedAlways, upgradeRequestUsed: true),
            results: [(.authorizedAlways, true), (.authorizedWhenInUse, true), (.denied, true)]),
        DecisionRow(
            record: AuthorizationRecord(status: .restricted),
            results: [(.authorizedAlways, false), (.authorizedWhenInUse, false), (.denied, false)]),
        DecisionRow(
            record: AuthorizationRecord(status: .denied),
            results: [(.authorizedAlways, false), (.authorizedWhenInUse, false), (.denied, false)]),
    ]

    @Test func everyDecision() {
        let policy = Fixtures.policy(servicesOn: true)
        let kinds: [AuthorizationDecision] = [.grantAlways, .grantWhenInUse, .deny]
        #expect(Set(kinds) == Set(AuthorizationDecision.allCases))
        for row in Self.decisions {
            for (decision, (status, used)) in zip(kinds, row.results) {
                let context = "\(row.record) \(decision)"
                let outcome = AuthorizationRules.decide(decision, app: Fixtures.fullyDeclared, record: row.record, policy: policy)
                #expect(outcome.record == AuthorizationRecord(status: status, upgradeRequestUsed: used), "\(context)")
                #expect(outcome.resolvedRequest == row.record.pendingRequest, "\(context)")
                Self.expectEffects(outcome.sideEffects, from: row.record.status, to: status, kind: .notAuthorized, context)
            }
        }
    }

    @Test(arguments: AuthorizationStatus.allCases)
    func locationServicesSwitch(stored: AuthorizationStatus) {
        let on = Fixtures.policy(servicesOn: true)
        let off = on.withLocationServices(false)
        let record = AuthorizationRecord(status: stored)
        let app = Fixtures.fullyDeclared
        // Off: every client drops to restricted; failures name the switch.
        let switchedOff = AuthorizationRules.policyChanged(app: app, record: record, from: on, to: off)
        Self.expectEffects(switchedOff, from: stored, to: .restricted, kind: .locationServicesDisabled, "off \(stored)")
        // On: the stored status comes back; nothing can be lost from restricted.
        let switchedOn = AuthorizationRules.policyChanged(app: app, record: record, from: off, to: on)
        Self.expectEffects(switchedOn, from: .restricted, to: stored, kind: .notAuthorized, "on \(stored)")
        // The switch never touches the stored record: nothing to persist.
        #expect(AuthorizationRules.effectiveStatus(record, on) == stored)
        #expect(AuthorizationRules.policyChanged(app: app, record: record, from: off, to: off) == .none)
    }

    @Test func changingThePromptAloneChangesNothing() {
        for record in Fixtures.records {
            for old in AuthorizationPrompt.allCases {
                for new in AuthorizationPrompt.allCases {
                    let effects = AuthorizationRules.policyChanged(
                        app: Fixtures.fullyDeclared, record: record,
                        from: Fixtures.policy(servicesOn: true, prompt: old), to: Fixtures.policy(servicesOn: true, prompt: new))
                    #expect(effects == .none)
                }
            }
        }
    }

    @Test func registrationSendsTheEffectiveStatusAndNothingElse() {
        for record in Fixtures.records {
            for servicesOn in [true, false] {
                let effects = AuthorizationRules.registration(
                    app: Fixtures.fullyDeclared, record: record,
                    policy: Fixtures.policy(servicesOn: servicesOn))
                #expect(effects == AuthorizationSideEffects(authorizationChanged: servicesOn ? record.status : .restricted))
            }
        }
    }

    @Test func adminDecisionWhileServicesOffIsStoredAndAppearsWhenSwitchedOn() {
        let off = Fixtures.policy(servicesOn: false)
        let waiting = AuthorizationRecord(status: .notDetermined, pendingRequest: .always)
        let granted = AuthorizationRules.decide(.grantAlways, app: Fixtures.fullyDeclared, record: waiting, policy: off)
        #expect(granted.record.status == .authorizedAlways)
        #expect(granted.effectiveStatus == .restricted)
        #expect(granted.sideEffects == .none)
        let on = AuthorizationRules.policyChanged(
            app: Fixtures.fullyDeclared, record: granted.record, from: off,
            to: off.withLocationServices(true))
        #expect(on == AuthorizationSideEffects(authorizationChanged: .authorizedAlways))
    }
}
