import BeaconKit
import Testing

@Suite("Proximity bands")
struct BeaconProximityTests {
    @Test(arguments: [
        (-1.0, BeaconProximity.unknown), (Double.nan, .unknown), (-0.001, .unknown),
        (0.0, .immediate), (0.49, .immediate), (0.5, .near), (2.99, .near), (3.0, .far), (400.0, .far),
    ])
    func defaultBands(accuracy: Double, proximity: BeaconProximity) {
        #expect(ProximityThresholds.coreLocationApproximation.proximity(forAccuracy: accuracy) == proximity)
    }

    @Test func thresholdsAreConfigurable() {
        let thresholds = ProximityThresholds(immediate: 1, near: 5)
        #expect(thresholds.proximity(forAccuracy: 0.9) == .immediate)
        #expect(thresholds.proximity(forAccuracy: 4) == .near)
        #expect(thresholds.proximity(forAccuracy: 5) == .far)
        #expect(ProximityThresholds() == ProximityThresholds(immediate: 0.5, near: 3))
    }
}
