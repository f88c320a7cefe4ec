import Foundation
import PresenceSimulation
import Testing

/// The baselines a locator must beat on the real flat (docs/position.md): each checked on rows whose answer is
/// known, then held on the survey as they stand.
@Suite("position baselines on the real flat")
struct PositionBaselineTests {
    static let flat = Result { try SurveyFlat.load(directory: SurveyFlatTests.directory) }

    @Test("multilateration finds a spot from the RSSIs its own curves give there, within 5 cm")
    func multilaterationFindsTheSpot() throws {
        let flat = try Self.flat.get()
        let curves = flat.receivers.indices.map { (power: -45.0 - Double($0), exponent: 2.0 + 0.1 * Double($0)) }
        for spot in [(x: 1.2, y: 4.0), (x: 4.5, y: 5.5), (x: 7.5, y: 6.0), (x: 2.0, y: 1.0), (x: 5.0, y: 1.0)] {
            let rssi: [Double?] = flat.receivers.indices.map { index in
                let place = flat.receivers[index]
                let distance = ((spot.x - place.x) * (spot.x - place.x) + (spot.y - place.y) * (spot.y - place.y) + place.z * place.z).squareRoot()
                return curves[index].power - 10 * curves[index].exponent * log10(distance)
            }
            let found = flat.multilaterate(rssi, curves: curves)
            #expect(abs(found.x - spot.x) < 0.05 && abs(found.y - spot.y) < 0.05, "\(found) for \(spot)")
        }
    }

    @Test("the strongest receiver's place; the fingerprint map leaves out rows within 15 s of a judged one")
    func strongestAndGuard() throws {
        let flat = try Self.flat.get()
        let row = 100
        let loudest = try #require(flat.rows[row].rssi.indices.max { (flat.rows[row].rssi[$0] ?? -200) < (flat.rows[row].rssi[$1] ?? -200) })
        let strongest = flat.locate([row], by: .strongestReceiver, fittedOn: [])
        #expect(strongest.estimates[0].x == flat.receivers[loudest].x && strongest.estimates[0].y == flat.receivers[loudest].y)
        // The next row (a third of a second later) is left out of the map; a row minutes away is what it holds.
        let far = try #require(flat.rows.indices.first { abs(flat.rows[$0].time - flat.rows[row].time) > 120 })
        let found = flat.locate([row], by: .fingerprint, fittedOn: [row + 1, far])
        #expect(found.estimates[0].x == flat.rows[far].x && found.estimates[0].y == flat.rows[far].y)
    }

    /// Held as they stand (`beacond-bench position`), so a change cannot make them worse unseen.
    @Test("on the survey, each fold judged by the other: kNN-5 1.1 m median, multilateration 1.7 m, right room 78 % and 71 %")
    func asTheyStand() throws {
        let flat = try Self.flat.get()
        let (even, odd) = flat.folds
        func drive(_ method: PositionBaseline) -> PositionScore {
            flat.score(flat.locate(even, by: method, fittedOn: odd), method: method.rawValue)
                + flat.score(flat.locate(odd, by: method, fittedOn: even), method: method.rawValue)
        }
        let fingerprint = drive(.fingerprint)
        let multilateration = drive(.multilateration)
        let strongest = drive(.strongestReceiver)
        #expect(fingerprint.median < 1.15 && fingerprint.p95 < 3.5 && fingerprint.rightRoomRate > 0.77)
        #expect(multilateration.median < 1.8 && multilateration.p95 < 5.1 && multilateration.rightRoomRate > 0.70)
        #expect(strongest.median > 2 && strongest.rightRoomRate > 0.69)
        #expect(fingerprint.errors.count == flat.rows.count)
    }

    /// The fingerprint target: with the survey as the map, better than kNN-5 on both error and room.
    @Test("the fingerprint mode (kNN-5 on 4 s smoothed RSSIs) beats kNN-5 on error and room: 0.92 m against 1.10 m, 86.6 % against 77.8 %")
    func smoothedFingerprint() throws {
        let flat = try Self.flat.get()
        let (even, odd) = flat.folds
        let mode =
            flat.score(flat.locateBySmoothedFingerprint(even, fittedOn: odd), method: "")
            + flat.score(flat.locateBySmoothedFingerprint(odd, fittedOn: even), method: "")
        let knn =
            flat.score(flat.locate(even, by: .fingerprint, fittedOn: odd), method: "")
            + flat.score(flat.locate(odd, by: .fingerprint, fittedOn: even), method: "")
        #expect(mode.median < 0.95 && mode.p95 < 2.7 && mode.rightRoomRate > 0.86, "\(mode.median) \(mode.p95) \(mode.rightRoomRate)")
        #expect(mode.median < knn.median && mode.rightRoomRate > knn.rightRoomRate)
        // The map keeps no row within 15 s of a judged one: with the next row and one minutes away given, only the
        // far one is the map.
        let far = try #require(flat.rows.indices.first { abs(flat.rows[$0].time - flat.rows[100].time) > 120 })
        let found = flat.locateBySmoothedFingerprint([100], fittedOn: [101, far])
        #expect(found.estimates[0].x == flat.rows[far].x && found.estimates[0].y == flat.rows[far].y)
    }

    @Test("calibration spots: up to two stretches of 10 s in each room, the robot within a metre, among the rows given only")
    func calibrationSpots() throws {
        let flat = try Self.flat.get()
        let (even, odd) = flat.folds
        let spots = flat.calibrationSpots(among: odd)
        #expect(Set(spots).isSubset(of: Set(odd)))
        // 33 rows a spot; on the odd minutes one room has a single stretch where the robot stayed.
        #expect(spots.count % 33 == 0 && spots.count >= 9 * 33 && spots.count <= 10 * 33, "\(spots.count) rows")
        let rooms = Dictionary(grouping: spots) { flat.room(x: flat.rows[$0].x, y: flat.rows[$0].y) ?? -1 }
        #expect(
            rooms.keys.sorted() == [0, 1, 2, 3, 4] && rooms.values.allSatisfy { $0.count == 33 || $0.count == 66 }, "\(rooms.mapValues(\.count))")
        #expect(Set(flat.calibrationSpots(among: even)).isDisjoint(with: spots))
    }

    /// beacond's locator, calibrated at two spots a room of the other fold (`beaconctl calibrate --at` as a user
    /// would), held as it stands.: better than every baseline's p95 and
    /// right room, the stated accuracy holding at least 68 % of the time, at most one flap per true room change. The
    /// issue's targets for error and room (1.0 m, 2.2 m, 92 %) are not met yet: docs/position.md.
    @Test("beacond's locator calibrated at two spots a room: 1.23 m median, 2.63 m p95, 82 % right room, the stated accuracy held")
    func locatorAsItStands() throws {
        let flat = try Self.flat.get()
        let (even, odd) = flat.folds
        let (onEven, accuraciesEven) = flat.locate(even, fittedOn: flat.calibrationSpots(among: odd))
        let (onOdd, accuraciesOdd) = flat.locate(odd, fittedOn: flat.calibrationSpots(among: even))
        let score = flat.score(onEven, method: "locator") + flat.score(onOdd, method: "locator")
        let accuracies = accuraciesEven + accuraciesOdd
        #expect(score.errors.count == flat.rows.count && accuracies.count == flat.rows.count)
        #expect(score.median < 1.3 && score.p95 < 2.7 && score.rightRoomRate > 0.81, "\(score.median) \(score.p95) \(score.rightRoomRate)")
        // Sampled once a second, as the room rules are: at most one flap per true room change.
        #expect(score.changesPerTrueChange <= 2, "\(score.changesPerTrueChange) room changes per true change")
        let held = Double(zip(score.errors, accuracies).count { $0 <= $1 }) / Double(accuracies.count)
        #expect(held >= 0.68, "the true position within the stated accuracy \(held)")
        let fingerprint =
            flat.score(flat.locate(even, by: .fingerprint, fittedOn: odd), method: "")
            + flat.score(flat.locate(odd, by: .fingerprint, fittedOn: even), method: "")
        #expect(score.p95 < fingerprint.p95 && score.rightRoomRate > fingerprint.rightRoomRate)
    }
}
