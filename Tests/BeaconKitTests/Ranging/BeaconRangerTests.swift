import BeaconKit
import Foundation
import Testing

private typealias Fixture = RangingFixture
private func t(_ seconds: Double) -> Timestamp { RangingFixture.time(seconds) }
private func minor(_ minor: UInt16, _ uuid: UUID = RangingFixture.uuidA, major: UInt16 = 1) -> BeaconIdentity {
    RangingFixture.identity(uuid, major: major, minor: minor)
}

@Suite("Beacon ranger")
struct BeaconRangerTests {
    /// Unsmoothed RSSI and free-space log-distance, so expected numbers are easy to write:
    /// power −59 dBm → RSSI −59 is 1 m (near), −52 is 0.45 m (immediate), −69 is 3.16 m (far).
    let plain = RangingConfiguration(filter: .latest, distanceModel: .freeSpaceLogDistance)

    private func uuidConstraint(_ uuid: UUID = Fixture.uuidA) throws -> BeaconIdentityConstraint {
        try BeaconIdentityConstraint(uuid: uuid)
    }

    @Test func defaults() {
        let configuration = RangingConfiguration()
        #expect(configuration.filter == .runningAverage(window: .seconds(20), maximumSampleCount: 200))
        #expect(configuration.distanceModel == .curveFitted(CurveFitCoefficients(c1: 0.42093, c2: 6.9476, c3: 0.54992)))
        #expect(configuration.beaconExpiry == .seconds(10))
        #expect(configuration.maxTrackedBeacons == 10_000)
        #expect(configuration.proximityThresholds == ProximityThresholds(immediate: 0.5, near: 3))
    }

    @Test func tracksOnlyBeaconsMatchingARangedConstraint() throws {
        var ranger = BeaconRanger<String>(configuration: plain)
        ranger.observe(Fixture.observation(minor(1), rssi: -60, at: 0))
        #expect(ranger.trackedBeaconCount == 0)

        ranger.startRanging(try uuidConstraint(), key: "a")
        ranger.observe(Fixture.observation(minor(1), rssi: -59, at: 1))
        ranger.observe(Fixture.observation(minor(1, Fixture.uuidB), rssi: -59, at: 1))
        #expect(ranger.trackedBeaconCount == 1)

        let results = ranger.rangeBeacons(at: t(1.5))
        #expect(results.count == 1)
        #expect(results.first?.key == "a")
        #expect(results.first?.constraint == (try uuidConstraint()))
        #expect(
            results.first?.beacons == [
                RangedBeacon(identity: minor(1), rssi: -59, accuracy: 1, proximity: .near, measuredPower: -59, timestamp: t(1))
            ])
    }

    @Test func tracksByIdentityNeverByAddress() throws {
        var ranger = BeaconRanger<String>(configuration: plain)
        ranger.startRanging(try uuidConstraint(), key: "a")
        ranger.observe(Fixture.observation(minor(1), rssi: -60, at: 0, address: 1))
        ranger.observe(Fixture.observation(minor(1), rssi: -62, at: 0.1, address: 2))
        ranger.observe(Fixture.observation(minor(2), rssi: -62, at: 0.2, address: 2))
        #expect(ranger.trackedBeaconCount == 2)
        #expect(ranger.rangeBeacons(at: t(1)).first?.beacons.map(\.identity) == [minor(1), minor(2)])
    }

    @Test func beaconsNotHeardThisCycleReportZeros() throws {
        var ranger = BeaconRanger<String>(configuration: plain)
        ranger.startRanging(try uuidConstraint(), key: "a")
        ranger.observe(Fixture.observation(minor(1), rssi: -69, at: 1))
        #expect(ranger.rangeBeacons(at: t(1.5)).first?.beacons.first?.proximity == .far)

        let silent = ranger.rangeBeacons(at: t(2.5)).first?.beacons
        #expect(
            silent == [
                RangedBeacon(identity: minor(1), rssi: 0, accuracy: -1, proximity: .unknown, measuredPower: -59, timestamp: t(1))
            ])

        ranger.observe(Fixture.observation(minor(1), rssi: -52, at: 3))
        let heard = ranger.rangeBeacons(at: t(3.5)).first?.beacons.first
        #expect(heard?.rssi == -52)
        #expect(heard?.proximity == .immediate)
        #expect(heard?.timestamp == t(3))
    }

    /// With rooms, beacons only other receivers hear are ranged from the nearest one and sorted with this adapter's:
    /// minor 1 heard here at −69 dBm (3.16 m), minor 2 only by kitchen at −59 (1 m, uncalibrated), minor 3 here at −75
    /// (6.3 m) and by kitchen at −55: this adapter's own measurement stays. Without rooms a remote-only beacon is
    /// reported as not heard.
    @Test func fleetMeasurementsAreRangedWithThisAdaptersOwn() throws {
        var ranger = BeaconRanger<String>(configuration: plain)
        ranger.startRanging(try uuidConstraint(), key: "a")
        var fleet = RoomPresence(localRoom: "hall")
        let kitchen = ReceiverID(rawValue: 1)
        func local(_ number: UInt16, _ rssi: Int8) {
            ranger.observe(Fixture.observation(minor(number), rssi: rssi, at: 1))
            _ = fleet.place(minor(number), rssi: Double(rssi), advertisedPower: -59, by: .local, in: "hall", at: t(1))
        }
        func remote(_ number: UInt16, _ rssi: Double) {
            _ = fleet.place(minor(number), rssi: rssi, advertisedPower: -59, by: kitchen, in: "kitchen", at: t(1))
            ranger.observeRemotely(minor(number), measuredPower: -59, at: t(1))
        }
        local(1, -69)
        remote(2, -59)
        local(3, -75)
        remote(3, -55)
        let beacons = ranger.rangeBeacons(at: t(1.5), fleet: fleet).first?.beacons ?? []
        #expect(beacons.map(\.identity.minor) == [2, 1, 3])
        #expect(beacons.map(\.receiver) == ["kitchen", "hall", "hall"])
        #expect(beacons.map(\.rssi) == [-59, -69, -75])
        #expect(beacons.map { ($0.accuracy * 100).rounded() } == [100, 316, 631])
        remote(2, -59)
        #expect(
            ranger.rangeBeacons(at: t(2.5)).first?.beacons.first { $0.identity.minor == 2 }
                == RangedBeacon(identity: minor(2), rssi: 0, accuracy: -1, proximity: .unknown, measuredPower: -59, timestamp: t(1)))
    }

    @Test func smoothsWithTheConfiguredFilterAcrossCycles() throws {
        var ranger = BeaconRanger<String>(configuration: RangingConfiguration(distanceModel: .freeSpaceLogDistance))
        ranger.startRanging(try uuidConstraint(), key: "a")
        ranger.observe(Fixture.observation(minor(1), rssi: -60, at: 0))
        ranger.observe(Fixture.observation(minor(1), rssi: -70, at: 0.5))
        let first = ranger.rangeBeacons(at: t(1)).first?.beacons.first
        #expect(first?.rssi == -65)
        #expect(abs((first?.accuracy ?? 0) - pow(10, 6.0 / 20)) < 1e-12)

        ranger.observe(Fixture.observation(minor(1), rssi: -90, at: 1.5))
        // Three samples: the trimmed running average is their median.
        #expect(ranger.rangeBeacons(at: t(2)).first?.beacons.first?.rssi == -70)
    }

    @Test func defaultConfigurationUsesTheAltBeaconCurve() throws {
        var ranger = BeaconRanger<String>()
        ranger.startRanging(try uuidConstraint(), key: "a")
        ranger.observe(Fixture.observation(minor(1), rssi: -70, at: 0))
        let expected = 0.42093 * pow(70.0 / 59.0, 6.9476) + 0.54992
        #expect(ranger.rangeBeacons(at: t(1)).first?.beacons.first?.accuracy == expected)
    }

    @Test func observationsWithoutRSSICountAsHeard() throws {
        var ranger = BeaconRanger<String>(configuration: plain)
        ranger.startRanging(try uuidConstraint(), key: "a")
        ranger.observe(Fixture.observation(minor(1), rssi: nil, at: 1))
        #expect(ranger.trackedBeaconCount == 1)
        let unknown = ranger.rangeBeacons(at: t(1.5)).first?.beacons.first
        #expect(unknown?.rssi == 0)
        #expect(unknown?.accuracy == -1)
        #expect(unknown?.timestamp == t(1))

        ranger.observe(Fixture.observation(minor(1), rssi: -59, at: 2))
        ranger.observe(Fixture.observation(minor(1), rssi: nil, at: 3))
        let known = ranger.rangeBeacons(at: t(3.5)).first?.beacons.first
        #expect(known?.rssi == -59)
        #expect(known?.timestamp == t(3))
    }

    @Test func measuredPowerFollowsTheLatestAdvertisement() throws {
        var ranger = BeaconRanger<String>(configuration: plain)
        ranger.startRanging(try uuidConstraint(), key: "a")
        ranger.observe(Fixture.observation(minor(1), rssi: -65, at: 0, measuredPower: -59))
        ranger.observe(Fixture.observation(minor(1), rssi: -65, at: 0.5, measuredPower: -65))
        let beacon = ranger.rangeBeacons(at: t(1)).first?.beacons.first
        #expect(beacon?.measuredPower == -65)
        #expect(beacon?.accuracy == 1)
    }

    @Test func unheardBeaconsExpire() throws {
        var ranger = BeaconRanger<String>(configuration: plain)
        ranger.startRanging(try uuidConstraint(), key: "a")
        ranger.observe(Fixture.observation(minor(1), rssi: -59, at: 0))
        ranger.observe(Fixture.observation(minor(2), rssi: -59, at: 5))
        #expect(ranger.rangeBeacons(at: t(9.9)).first?.beacons.count == 2)
        #expect(ranger.rangeBeacons(at: t(10)).first?.beacons.map(\.identity) == [minor(2)])
        #expect(ranger.trackedBeaconCount == 1)
        #expect(ranger.rangeBeacons(at: t(15)).first?.beacons == [])
        #expect(ranger.trackedBeaconCount == 0)

        var quick = BeaconRanger<String>(configuration: RangingConfiguration(beaconExpiry: .seconds(2)))
        quick.startRanging(try uuidConstraint(), key: "a")
        quick.observe(Fixture.observation(minor(1), rssi: -59, at: 0))
        #expect(quick.rangeBeacons(at: t(1.9)).first?.beacons.count == 1)
        #expect(quick.rangeBeacons(at: t(2)).first?.beacons.count == 0)
    }

    @Test func sortsNearestFirstUnknownLastTiesByIdentity() throws {
        var ranger = BeaconRanger<String>(configuration: plain)
        ranger.startRanging(try uuidConstraint(), key: "a")
        ranger.observe(Fixture.observation(minor(5), rssi: -60, at: 0))
        ranger.observe(Fixture.observation(minor(0), rssi: -60, at: 0))
        _ = ranger.rangeBeacons(at: t(0.5))
        ranger.observe(Fixture.observation(minor(1), rssi: -70, at: 1))
        ranger.observe(Fixture.observation(minor(4), rssi: -60, at: 1))
        ranger.observe(Fixture.observation(minor(2), rssi: -52, at: 1))
        ranger.observe(Fixture.observation(minor(3), rssi: -60, at: 1))
        ranger.observe(Fixture.observation(minor(3, major: 0), rssi: -60, at: 1))
        let beacons = ranger.rangeBeacons(at: t(1.5)).first?.beacons ?? []
        #expect(beacons.map(\.identity) == [minor(2), minor(3, major: 0), minor(3), minor(4), minor(1), minor(0), minor(5)])
        #expect(beacons.map(\.proximity) == [.immediate, .near, .near, .near, .far, .unknown, .unknown])
    }

    @Test func aFullTableEvictsTheStalestBeacon() throws {
        var ranger = BeaconRanger<String>(configuration: RangingConfiguration(filter: .latest, maxTrackedBeacons: 2))
        ranger.startRanging(try uuidConstraint(), key: "a")
        ranger.observe(Fixture.observation(minor(1), rssi: -60, at: 0))
        ranger.observe(Fixture.observation(minor(2), rssi: -60, at: 1))
        ranger.observe(Fixture.observation(minor(1), rssi: -60, at: 2))
        ranger.observe(Fixture.observation(minor(3), rssi: -60, at: 3))
        #expect(ranger.trackedBeaconCount == 2)
        #expect(Set(ranger.rangeBeacons(at: t(3.5)).first?.beacons.map(\.identity) ?? []) == [minor(1), minor(3)])
        ranger.observe(Fixture.observation(minor(2), rssi: -60, at: 4))
        #expect(Set(ranger.rangeBeacons(at: t(4.5)).first?.beacons.map(\.identity) ?? []) == [minor(2), minor(3)])

        var closed = BeaconRanger<String>(configuration: RangingConfiguration(maxTrackedBeacons: 0))
        closed.startRanging(try uuidConstraint(), key: "a")
        closed.observe(Fixture.observation(minor(1), rssi: -60, at: 0))
        #expect(closed.trackedBeaconCount == 0)
    }

    @Test func aFloodOfIdentitiesStaysBounded() throws {
        var ranger = BeaconRanger<String>(configuration: RangingConfiguration(maxTrackedBeacons: 100))
        ranger.startRanging(try uuidConstraint(), key: "a")
        for index in 0..<10_000 {
            let identity = minor(UInt16(index % 65_536), major: UInt16(index / 65_536))
            ranger.observe(Fixture.observation(identity, rssi: -80, at: Double(index) * 0.0001))
        }
        #expect(ranger.trackedBeaconCount == 100)
        let kept = ranger.rangeBeacons(at: t(1.5)).first?.beacons.map(\.identity.minor) ?? []
        #expect(kept == Array(9_900..<10_000))
    }

    @Test func keysSharingAConstraintEachGetTheBeacons() throws {
        var ranger = BeaconRanger<String>(configuration: plain)
        let constraint = try BeaconIdentityConstraint(uuid: Fixture.uuidA, major: 1)
        ranger.startRanging(constraint, key: "x")
        ranger.startRanging(constraint, key: "y")
        ranger.observe(Fixture.observation(minor(1), rssi: -59, at: 0))
        let both = ranger.rangeBeacons(at: t(0.5))
        #expect(both.map(\.key) == ["x", "y"])
        #expect(both.map(\.beacons.count) == [1, 1])

        #expect(ranger.stopRanging("x") == constraint)
        #expect(ranger.trackedBeaconCount == 1)
        ranger.observe(Fixture.observation(minor(1), rssi: -59, at: 1))
        #expect(ranger.rangeBeacons(at: t(1.5)).map(\.key) == ["y"])

        ranger.stopRanging("y")
        #expect(ranger.trackedBeaconCount == 0)
        ranger.observe(Fixture.observation(minor(1), rssi: -59, at: 2))
        #expect(ranger.trackedBeaconCount == 0)
        #expect(ranger.rangeBeacons(at: t(2.5)).isEmpty)
        #expect(ranger.stopRanging("y") == nil)
    }

    @Test func constraintsOfEveryShapeShareTheTable() throws {
        var ranger = BeaconRanger<String>(configuration: plain)
        ranger.startRanging(try uuidConstraint(), key: "uuid")
        ranger.startRanging(try BeaconIdentityConstraint(uuid: Fixture.uuidA, major: 1), key: "major")
        ranger.startRanging(BeaconIdentityConstraint(minor(2)), key: "exact")
        ranger.observe(Fixture.observation(minor(2), rssi: -59, at: 0))
        ranger.observe(Fixture.observation(minor(3), rssi: -60, at: 0))
        ranger.observe(Fixture.observation(minor(2, major: 2), rssi: -61, at: 0))
        let results = ranger.rangeBeacons(at: t(0.5))
        #expect(results.map(\.key) == ["uuid", "major", "exact"])
        #expect(
            results.map { $0.beacons.map(\.identity) } == [
                [minor(2), minor(3), minor(2, major: 2)], [minor(2), minor(3)], [minor(2)],
            ])

        ranger.stopRanging("uuid")
        #expect(ranger.trackedBeaconCount == 2)
        ranger.stopRanging("major")
        #expect(ranger.trackedBeaconCount == 1)
        #expect(ranger.rangedKeys == ["exact"])
    }

    @Test func restartingAKeyKeepsItsPlaceAndForgetsOldBeacons() throws {
        var ranger = BeaconRanger<String>(configuration: plain)
        ranger.startRanging(try uuidConstraint(), key: "b")
        ranger.startRanging(try uuidConstraint(Fixture.uuidB), key: "a")
        #expect(ranger.rangeBeacons(at: t(0)).map(\.key) == ["b", "a"])
        #expect(ranger.rangeBeacons(at: t(0)).allSatisfy { $0.beacons.isEmpty })

        ranger.observe(Fixture.observation(minor(1), rssi: -59, at: 1))
        #expect(ranger.trackedBeaconCount == 1)
        ranger.startRanging(try uuidConstraint(Fixture.uuidB), key: "b")
        #expect(ranger.trackedBeaconCount == 0)
        #expect(ranger.rangedKeys == ["b", "a"])
        #expect(ranger.constraint(for: "b") == (try uuidConstraint(Fixture.uuidB)))
    }

    @Test func proximityUsesTheConfiguredThresholds() throws {
        var configuration = plain
        configuration.proximityThresholds = ProximityThresholds(immediate: 2, near: 10)
        var ranger = BeaconRanger<String>(configuration: configuration)
        ranger.startRanging(try uuidConstraint(), key: "a")
        ranger.observe(Fixture.observation(minor(1), rssi: -59, at: 0))
        ranger.observe(Fixture.observation(minor(2), rssi: -69, at: 0))
        ranger.observe(Fixture.observation(minor(3), rssi: -80, at: 0))
        #expect(ranger.rangeBeacons(at: t(0.5)).first?.beacons.map(\.proximity) == [.immediate, .near, .far])
    }
}
