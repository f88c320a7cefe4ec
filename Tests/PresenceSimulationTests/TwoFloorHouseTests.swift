import BeaconKit
import Foundation
import PresenceSimulation
import Testing

/// The two-storey house the floor figures come from (docs/position.md, "Several floors, simulated").
@Suite("two-storey house: walks that take the stairs, through the flat's radio and a floor loss")
struct TwoFloorHouseTests {
    @Test("a walk climbs, the other floor reads weaker, and placement finds the floor away from the stairs")
    func walkAndFloors() throws {
        let flat = try SurveyFlat.load(directory: SurveyFlatTests.directory)
        let radio = flat.radio(fittedOn: Array(flat.rows.indices))
        let house = TwoFloorHouse(radio: radio, floorLoss: 15, minutes: 8, house: 1, seed: 1)
        let floors = house.seconds.compactMap(\.floor)
        #expect(Set(floors) == [0, 1], "the walk never took the stairs")
        #expect(house.seconds.contains { $0.floor == nil }, "no second mid-climb")
        // Downstairs, the receivers upstairs hear the tag weaker than those beside it.
        var same: [Double] = []
        var other: [Double] = []
        for second in house.seconds where second.floor == 0 {
            for (index, rssi) in second.rssi.enumerated() {
                guard let rssi else { continue }
                if house.receivers[index].floor == 0 { same.append(rssi) } else { other.append(rssi) }
            }
        }
        let mean = { (values: [Double]) in values.reduce(0, +) / Double(max(values.count, 1)) }
        #expect(mean(same) - mean(other) > 10, "\(mean(same)) against \(mean(other))")
        // The daemon's placement, calibrated on another walk through the same house.
        let survey = TwoFloorHouse(radio: radio, floorLoss: 15, minutes: 10, house: 1, seed: 1001)
        var placement = PlanPlacement<Int>(plan: house.floorPlan(calibrations: survey.surveyCalibrations()))
        var judged = 0
        var right = 0
        var lastClimb = -100
        var lastFloor: Int?
        for (index, second) in house.seconds.enumerated() {
            let now = Timestamp(secondsSinceEpoch: 1_700_000_000 + Double(index))
            for (receiver, rssi) in second.rssi.enumerated() {
                if let rssi { placement.observe(0, rssi: rssi, measuredPower: -59, by: "r\(receiver + 1)", at: now) }
            }
            placement.update(0, at: now)
            guard let floor = second.floor else { continue }
            if let lastFloor, lastFloor != floor { lastClimb = index }
            lastFloor = floor
            guard index - lastClimb > 5 else { continue }
            judged += 1
            if placement.position(of: 0)?.floor == TwoFloorHouse.floorIDs[floor] { right += 1 }
        }
        #expect(judged > 300 && Double(right) / Double(judged) > 0.97, "\(right) of \(judged) on the right floor")
    }
}
