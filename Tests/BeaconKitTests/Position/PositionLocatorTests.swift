import BeaconKit
import Foundation
import Testing

/// The locator on plans whose answers are known: readings made from each receiver's own curve at a spot.
@Suite("PositionLocator: a position on the plan from every receiver's readings")
struct PositionLocatorTests {
    static func at(_ seconds: Double) -> Timestamp { Timestamp(secondsSinceEpoch: 1_700_000_000 + seconds) }

    /// A 10 × 8 m floor, four receivers at 2.5 m in its corners, one calibrated differently.
    static let ground = LocatorFloor(id: "ground", minimumX: 0, minimumY: 0, maximumX: 10, maximumY: 8, tagHeight: 1)
    static let receivers: [PlacedReceiver] = [
        (1, 0.5, 0.5, ReceiverCalibration.uncalibrated), (2, 9.5, 0.5, .uncalibrated), (3, 0.5, 7.5, .uncalibrated),
        (4, 9.5, 7.5, try! ReceiverCalibration(rssiOffset: 6, pathLossExponent: 2.2)),
    ].map { PlacedReceiver(id: ReceiverID(rawValue: $0.0), x: $0.1, y: $0.2, z: 2.5, calibration: $0.3) }

    /// What `receiver` reads of a beacon of measured power −59 at (x, y, z): its own curve, no noise.
    static func rssi(_ receiver: PlacedReceiver, x: Double, y: Double, z: Double = 1) -> Double {
        let distance = ((x - receiver.x) * (x - receiver.x) + (y - receiver.y) * (y - receiver.y) + (z - receiver.z) * (z - receiver.z)).squareRoot()
        return -59 - 10 * receiver.calibration.pathLossExponent * log10(distance) - receiver.calibration.rssiOffset
    }

    @Test("readings from a spot put the beacon there, within the grid's step; its accuracy is the radio's, not the readings'")
    func findsTheSpot() {
        for spot in [(x: 2.0, y: 3.0), (x: 7.3, y: 6.1), (x: 5.0, y: 4.0), (x: 9.0, y: 1.2)] {
            var locator = PositionLocator<String>(floors: [Self.ground], receivers: Self.receivers)
            for receiver in Self.receivers {
                locator.observe("tag", rssi: Self.rssi(receiver, x: spot.x, y: spot.y), measuredPower: -59, by: receiver.id, at: Self.at(0))
            }
            let position = locator.position(of: "tag", at: Self.at(0.5))
            #expect(position.map { abs($0.x - spot.x) <= 0.13 && abs($0.y - spot.y) <= 0.13 } == true, "\(String(describing: position)) for \(spot)")
            #expect(position?.fixes == 4 && position?.floor == "ground" && position?.z == 1)
            // Four receivers at 5.5 dB of spread hold a beacon to a few metres, however exact these readings are.
            #expect((position?.accuracy ?? .infinity) < 4.5, "\(String(describing: position))")
        }
    }

    @Test("fewer receivers, a larger accuracy; none fresh, no position; an offline receiver places nothing")
    func accuracyGrowsAndStaleEnds() {
        var all = PositionLocator<String>(floors: [Self.ground], receivers: Self.receivers)
        var two = PositionLocator<String>(floors: [Self.ground], receivers: Self.receivers)
        for receiver in Self.receivers {
            all.observe("tag", rssi: Self.rssi(receiver, x: 3, y: 3), measuredPower: -59, by: receiver.id, at: Self.at(0))
        }
        for receiver in Self.receivers.prefix(2) {
            two.observe("tag", rssi: Self.rssi(receiver, x: 3, y: 3), measuredPower: -59, by: receiver.id, at: Self.at(0))
        }
        let (many, few) = (all.position(of: "tag", at: Self.at(1)), two.position(of: "tag", at: Self.at(1)))
        #expect(few?.fixes == 2 && many?.fixes == 4)
        #expect((few?.accuracy ?? 0) > (many?.accuracy ?? .infinity), "\(String(describing: few)) against \(String(describing: many))")
        // Ten seconds without a reading: not placed, never a stale confident answer.
        #expect(all.position(of: "tag", at: Self.at(10.5)) == nil)
        #expect(all.position(of: "elsewhere", at: Self.at(1)) == nil)
        // Offline: receiver 4's readings no longer count; back online, only its new readings do.
        all.receiverWentOffline(ReceiverID(rawValue: 4))
        #expect(all.position(of: "tag", at: Self.at(1))?.fixes == 3)
        all.receiverCameOnline(ReceiverID(rawValue: 4))
        #expect(all.position(of: "tag", at: Self.at(1))?.fixes == 3)
        all.observe("tag", rssi: -70, measuredPower: -59, by: ReceiverID(rawValue: 4), at: Self.at(2))
        #expect(all.position(of: "tag", at: Self.at(2))?.fixes == 4)
        // A receiver not on the plan is not used.
        all.observe("tag", rssi: -40, measuredPower: -59, by: ReceiverID(rawValue: 99), at: Self.at(2))
        #expect(all.position(of: "tag", at: Self.at(2))?.fixes == 4)
        // What an offline receiver says is not kept for when it is back.
        all.receiverWentOffline(ReceiverID(rawValue: 4))
        all.observe("tag", rssi: -40, measuredPower: -59, by: ReceiverID(rawValue: 4), at: Self.at(3))
        all.receiverCameOnline(ReceiverID(rawValue: 4))
        #expect(all.position(of: "tag", at: Self.at(3))?.fixes == 3)
    }

    @Test("readings are smoothed over the configured time: one stray reading moves the beacon little")
    func smoothing() {
        var locator = PositionLocator<String>(floors: [Self.ground], receivers: Self.receivers)
        for second in 0..<20 {
            for receiver in Self.receivers {
                locator.observe("tag", rssi: Self.rssi(receiver, x: 2, y: 2), measuredPower: -59, by: receiver.id, at: Self.at(Double(second)))
            }
        }
        // Receiver 4 (far corner) reads 20 dB high once, as if the beacon were next to it.
        locator.observe("tag", rssi: Self.rssi(Self.receivers[3], x: 2, y: 2) + 20, measuredPower: -59, by: Self.receivers[3].id, at: Self.at(20))
        let position = locator.position(of: "tag", at: Self.at(20))
        #expect(position.map { abs($0.x - 2) < 2 && abs($0.y - 2) < 2 } == true, "\(String(describing: position))")
    }

    @Test("a reading delivered late (older than the receiver's last) is dropped, never moving the clock back")
    func lateReading() {
        var locator = PositionLocator<String>(floors: [Self.ground], receivers: Self.receivers)
        for receiver in Self.receivers {
            locator.observe("tag", rssi: Self.rssi(receiver, x: 2, y: 2), measuredPower: -59, by: receiver.id, at: Self.at(10))
        }
        let before = locator.position(of: "tag", at: Self.at(10))
        // Receiver 4 reports, late, a reading from 9.5 s that says the beacon is beside it.
        locator.observe("tag", rssi: -50, measuredPower: -59, by: Self.receivers[3].id, at: Self.at(9.5))
        #expect(locator.position(of: "tag", at: Self.at(10)) == before)
        // Its readings still go stale from its last one (10 s), not from the late one.
        #expect(locator.position(of: "tag", at: Self.at(19.9))?.fixes == 4)
    }

    @Test("two floors: the beacon is put on the floor whose receivers' readings fit it")
    func floorChoice() {
        let upstairs = LocatorFloor(id: "upstairs", minimumX: 0, minimumY: 0, maximumX: 10, maximumY: 8, tagHeight: 4)
        let upper = Self.receivers.map {
            PlacedReceiver(id: ReceiverID(rawValue: $0.id.rawValue + 10), x: $0.x, y: $0.y, z: 5.5, calibration: $0.calibration)
        }
        let everyone = Self.receivers + upper
        for (floor, height) in [("ground", 1.0), ("upstairs", 4.0)] {
            var locator = PositionLocator<String>(floors: [Self.ground, upstairs], receivers: everyone)
            for receiver in everyone {
                locator.observe("tag", rssi: Self.rssi(receiver, x: 6, y: 3, z: height), measuredPower: -59, by: receiver.id, at: Self.at(0))
            }
            let position = locator.position(of: "tag", at: Self.at(0.5))
            #expect(position?.floor == floor && position?.z == height, "\(String(describing: position))")
        }
    }

    @Test("a floor between receiver and beacon costs floorLoss dB: readings through it place the beacon where it is")
    func floorLoss() {
        let upstairs = LocatorFloor(id: "upstairs", minimumX: 0, minimumY: 0, maximumX: 10, maximumY: 8, tagHeight: 4)
        let lower = Self.receivers.map { PlacedReceiver(id: $0.id, x: $0.x, y: $0.y, z: $0.z, calibration: $0.calibration, floor: "ground") }
        let upper = Self.receivers.map {
            PlacedReceiver(id: ReceiverID(rawValue: $0.id.rawValue + 10), x: $0.x, y: $0.y, z: 5.5, calibration: $0.calibration, floor: "upstairs")
        }
        let everyone = lower + upper
        func located(_ configuration: PositionConfiguration, spot: (x: Double, y: Double)) -> Position? {
            var locator = PositionLocator<String>(floors: [Self.ground, upstairs], receivers: everyone, configuration: configuration)
            for receiver in everyone {
                // The ceiling costs what the locator counts: this checks the term is applied. How a floor that costs
                // more or less places is measured (`beacond-bench floors`, floors of 6-20 dB), not tested.
                let through = receiver.floor == "upstairs" ? PositionConfiguration.default.floorLoss : 0
                locator.observe("tag", rssi: Self.rssi(receiver, x: spot.x, y: spot.y) - through, measuredPower: -59, by: receiver.id, at: Self.at(0))
            }
            return locator.position(of: "tag", at: Self.at(0.5))
        }
        #expect(PositionConfiguration.default.floorLoss == 16)
        var blind = PositionConfiguration.default
        blind.floorLoss = 0
        func error(_ position: Position?, _ spot: (x: Double, y: Double)) -> Double {
            guard let position, position.floor == "ground" else { return .infinity }
            return ((position.x - spot.x) * (position.x - spot.x) + (position.y - spot.y) * (position.y - spot.y)).squareRoot()
        }
        var counted: [Double] = []
        var uncounted: [Double] = []
        for spot in [(x: 2.0, y: 3.0), (x: 7.3, y: 6.1), (x: 5.0, y: 4.0)] {
            counted.append(error(located(.default, spot: spot), spot))
            // Counting no floor, the weak readings from above pull it off the spot (or off the floor).
            uncounted.append(error(located(blind, spot: spot), spot))
        }
        #expect(counted.allSatisfy { $0 < 0.2 }, "counting 16 dB a floor: \(counted)")
        #expect(zip(counted, uncounted).allSatisfy { $0 <= $1 } && uncounted.max()! > 1.5, "\(counted) against \(uncounted) counting none")
    }

    @Test("floors between are counted by distinct heights: two wings at one height have none between them")
    func floorRanks() {
        let upstairs = LocatorFloor(id: "upstairs", minimumX: 0, minimumY: 0, maximumX: 10, maximumY: 8, tagHeight: 4)
        let wing = LocatorFloor(id: "wing", minimumX: 20, minimumY: 0, maximumX: 30, maximumY: 8, tagHeight: 1)
        let attic = LocatorFloor(id: "attic", minimumX: 0, minimumY: 0, maximumX: 10, maximumY: 8, tagHeight: 7)
        #expect(PositionLocator<String>.floorRanks([attic, Self.ground, wing, upstairs]) == ["ground": 0, "wing": 0, "upstairs": 1, "attic": 2])
    }

    @Test("a flood of beacons stops at the capacity; forgotten beacons make room")
    func capacity() {
        var locator = PositionLocator<Int>(floors: [Self.ground], receivers: Self.receivers, capacity: 10)
        for beacon in 0..<20 {
            locator.observe(beacon, rssi: -70, measuredPower: -59, by: Self.receivers[0].id, at: Self.at(Double(beacon)))
        }
        #expect(locator.count == 10)
        locator.forget(notHeardSince: Self.at(5))
        #expect(locator.count == 5)
    }
}
