import BeaconKit
import BeaconctlKit
import BeacondAPI
import DBus
import Foundation
import Testing

/// `beaconctl calibrate --tag --at`: spots on the plan the daemon gives, the tag's readings at each, a fit per receiver.
@Suite("calibration at spots of the floor plan")
struct SpotCalibrationTests {
    typealias Key = BeacondFloorPlanKey
    static func tag() throws -> BeaconIdentityConstraint {
        try BeaconIdentityConstraint(parsing: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:9:1")
    }

    /// `GetFloorPlan`'s reply: one 10 × 8 m floor (tags at 1 m), receivers r1 and r2 at 2.5 m in opposite corners.
    static let plan: VarDict = [
        Key.floors: .array(
            elementSignature: "a{sv}",
            [
                .vardict([
                    Key.id: .string("flat"), Key.tagHeight: .double(1),
                    Key.bounds: .array(elementSignature: "d", [0, 0, 10, 8].map { .double($0) }),
                ])
            ]),
        Key.receivers: .array(
            elementSignature: "a{sv}",
            [
                .vardict([Key.id: .string("r1"), Key.floor: .string("flat"), Key.x: .double(0.5), Key.y: .double(0.5), Key.z: .double(2.5)]),
                .vardict([
                    Key.id: .string("r2"), Key.floor: .string("flat"), Key.x: .double(9.5), Key.y: .double(7.5), Key.z: .double(2.5),
                    Key.rssiOffset: .double(3),
                ]),
            ]),
    ]

    static func reading(_ receiver: String, rssi: Double, at time: UInt64, minor: UInt16 = 1) -> VarDict {
        [
            BeacondReadingKey.uuid: .string("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"), BeacondReadingKey.major: .uint16(9),
            BeacondReadingKey.minor: .uint16(minor), BeacondReadingKey.receiver: .string(receiver), BeacondReadingKey.rssi: .double(rssi),
            BeacondReadingKey.measuredPower: .int16(-59), BeacondReadingKey.timestamp: .uint64(time),
        ]
    }

    @Test("spots parse as X,Y or X,Y@FLOOR; anything else says the form")
    func spots() throws {
        #expect(try CalibrationSpot(parsing: "2.5,4") == CalibrationSpot(parsing: " 2.5 , 4 "))
        #expect(try CalibrationSpot(parsing: "1,2@upstairs").floor == "upstairs")
        for bad in ["2.5", "a,b", "1,2,3", "nan,1", ""] {
            #expect(throws: CalibrationReferenceError.self) { try CalibrationSpot(parsing: bad) }
        }
    }

    @Test("the tag's readings at two spots fit each receiver's offset and exponent against the plan's distances")
    func fits() throws {
        var session = try SpotCalibration(
            tag: try Self.tag(), spots: [try CalibrationSpot(parsing: "2,3"), try CalibrationSpot(parsing: "8,2")], plan: Self.plan)
        let r1 = try #require(session.receivers.first { $0.id == "r1" })
        #expect(abs(session.distance(from: session.spots[0], to: r1) - (1.5 * 1.5 + 2.5 * 2.5 + 1.5 * 1.5).squareRoot()) < 1e-9)
        #expect(session.receivers.map(\.calibratedInPlan) == [false, true])
        for (index, spot) in session.spots.enumerated() {
            let start = UInt64(1_000_000 * (index + 1))
            var entries: [VarDict] = []
            for receiver in session.receivers {
                let offset = receiver.id == "r1" ? 6.0 : 0
                let rssi = -59 - 27 * log10(session.distance(from: spot, to: receiver)) - offset
                entries.append(Self.reading(receiver.id, rssi: rssi, at: start))
                // Before the spot's start, another beacon, a receiver not on the plan: none counts.
                entries.append(Self.reading(receiver.id, rssi: -30, at: start - 1))
                entries.append(Self.reading(receiver.id, rssi: -30, at: start, minor: 2))
            }
            entries.append(Self.reading("attic", rssi: -30, at: start))
            session.add(entries, spot: index, since: start)
            #expect(session.count(at: index) == 2)
        }
        let fits = Dictionary(uniqueKeysWithValues: session.fits().map { ($0.receiver, try? $0.result.get()) })
        let one = try #require(fits["r1"] ?? nil)
        #expect(abs(one.calibration.rssiOffset - 6) < 0.01 && abs(one.calibration.pathLossExponent - 2.7) < 0.01, "\(one)")
        let two = try #require(fits["r2"] ?? nil)
        #expect(abs(two.calibration.rssiOffset) < 0.01, "\(two)")
    }

    @Test("no plan, a floor the plan lacks, or a spot outside the floor: refused with the fix")
    func refusals() throws {
        func message(_ spots: [String], plan: VarDict = Self.plan) -> String {
            do {
                _ = try SpotCalibration(tag: try Self.tag(), spots: try spots.map { try CalibrationSpot(parsing: $0) }, plan: plan)
                return "accepted"
            } catch let error as BeaconctlError {
                return error.message
            } catch {
                return "\(error)"
            }
        }
        #expect(message(["1,1"], plan: [:]).contains("beacond has no floor plan"))
        #expect(message(["1,1@cellar"]).contains("the plan has no floor cellar: write --at X,Y@FLOOR with one of flat"))
        #expect(message(["11,1"]).contains("is outside floor flat (0, 0 to 10, 8)"))
        #expect(message(["1,1@flat", "2,2"]) == "accepted")
    }
}
