import BeaconKit
import Foundation
import Testing

@Suite("Distance models")
struct DistanceModelTests {
    // MARK: AltBeacon (ModelSpecificDistanceCalculatorTest, android-beacon-library@42e672e9)

    @Test func altBeaconDefaultIsAboutOneMetreAtMeasuredPower() {
        let distance = DistanceModel.altBeacon.accuracy(rssi: -59, measuredPower: -59)
        #expect(abs(distance - 1.0) <= 0.1)
        #expect(abs(distance - (0.42093 + 0.54992)) < 1e-12)
    }

    @Test func altBeaconMotoXProMatchesItsThreeMetrePoint() {
        let distance = DistanceModel.curveFitted(.motoXPro).accuracy(rssi: -58, measuredPower: -49)
        #expect(abs(distance - 2.661125466) <= 0.1)
    }

    @Test func curveFitUsesTheTenthPowerWhenStrongerThanCalibration() {
        let distance = DistanceModel.altBeacon.accuracy(rssi: -50, measuredPower: -59)
        #expect(abs(distance - pow(50.0 / 59.0, 10)) < 1e-12)
    }

    @Test func curveFitNeverReportsANegativeDistance() {
        let negativeOffset = CurveFitCoefficients(c1: 0.1862616782, c2: 8.235367435, c3: -0.45324519) // XT1092
        #expect(DistanceModel.curveFitted(negativeOffset).accuracy(rssi: -59, measuredPower: -59) == 0)
    }

    // MARK: Home Assistant (Bluetooth-Devices/ibeacon-ble, home-assistant/core)

    /// Reads ibeacon-ble's `calculate_distance_meters(power, rssi)` expectations from the fixture's
    /// comment line 2 and checks every one exactly (`None` is −1 here).
    @Test func homeAssistantMatchesIBeaconBLEExactly() throws {
        let url = RangingFixture.packageRoot
            .appendingPathComponent("Tests/Fixtures/corpus/vectors/vectors-beacontools-ibeaconble.txt")
        let text = try String(contentsOf: url, encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.contains("calculate_distance_meters") })
        var checked = 0
        for match in line.matches(of: #/\((-?\d+),(-?\d+)\)=([0-9.]+|None)/#) {
            let power = try #require(Int(match.output.1))
            let rssi = try #require(Double(match.output.2))
            let expected = match.output.3 == "None" ? -1 : try #require(Double(match.output.3))
            let actual = DistanceModel.homeAssistant.accuracy(rssi: rssi, measuredPower: power)
            #expect(actual == expected, "power \(power) rssi \(rssi)")
            checked += 1
        }
        #expect(checked == 8)
    }

    @Test func homeAssistantSpotValues() {
        let model = DistanceModel.homeAssistant
        #expect(model.accuracy(rssi: -60, measuredPower: -59) == 1.1352362990362899)
        #expect(model.accuracy(rssi: -80, measuredPower: 12) == 400)
        #expect(model.accuracy(rssi: -3, measuredPower: -3) == 1.01076)
        #expect(model.accuracy(rssi: 0, measuredPower: 59) == -1)
    }

    /// home-assistant/core tests/components/ibeacon/test_sensor.py: BlueCharm beacon, power −59,
    /// the estimated-distance sensor shows the rounded distance.
    @Test(arguments: [(-63.0, 2.0), (-53.0, 0.0), (-84.0, 14.0)])
    func homeAssistantSensorRounding(rssi: Double, shown: Double) {
        #expect(DistanceModel.homeAssistant.accuracy(rssi: rssi, measuredPower: -59).rounded() == shown)
    }

    // MARK: Log-distance path loss

    @Test func logDistanceFreeSpace() {
        let model = DistanceModel.freeSpaceLogDistance
        #expect(model == .logDistance(pathLossExponent: 2))
        #expect(model.accuracy(rssi: -59, measuredPower: -59) == 1)
        #expect(abs(model.accuracy(rssi: -79, measuredPower: -59) - 10) < 1e-12)
        #expect(abs(model.accuracy(rssi: -53, measuredPower: -59) - pow(10, -0.3)) < 1e-12)
        #expect(abs(DistanceModel.logDistance(pathLossExponent: 3).accuracy(rssi: -89, measuredPower: -59) - 10) < 1e-12)
    }

    // MARK: Unknown

    @Test(arguments: [DistanceModel.altBeacon, .homeAssistant, .freeSpaceLogDistance, .curveFitted(.motoXPro)])
    func unknownInputsGiveMinusOne(model: DistanceModel) {
        #expect(model.accuracy(rssi: nil, measuredPower: -59) == -1)
        #expect(model.accuracy(rssi: 0, measuredPower: -59) == -1)
        #expect(model.accuracy(rssi: -70, measuredPower: 0) == -1)
        #expect(model.accuracy(rssi: .nan, measuredPower: -59) == -1)
        #expect(model.accuracy(rssi: -70, measuredPower: -59) > 0)
    }

    @Test func degenerateExponentGivesMinusOne() {
        #expect(DistanceModel.logDistance(pathLossExponent: 0).accuracy(rssi: -70, measuredPower: -59) == -1)
    }
}
