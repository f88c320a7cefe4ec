import BeaconKit
import Testing

private func t(_ seconds: Double) -> Timestamp { RangingFixture.time(seconds) }

@Suite("RSSI filters")
struct RSSIFilterTests {
    // MARK: Running average (AltBeacon RunningAverageRssiFilter)

    @Test func runningAverageDefaultsAreAltBeacons() {
        let filter = RunningAverageRSSIFilter()
        #expect(filter.window == .seconds(20))
        #expect(filter.maximumSampleCount == 200)
        #expect(filter.smoothedRSSI(at: t(0)) == nil)
    }

    @Test func runningAverageDropsSamplesAtTheWindowEdge() {
        var filter = RunningAverageRSSIFilter()
        filter.add(-40, at: t(0))
        filter.add(-60, at: t(10))
        #expect(filter.smoothedRSSI(at: t(15)) == -50)
        #expect(filter.smoothedRSSI(at: t(19.999)) == -50)
        // AltBeacon keeps a sample while now − time < window: at exactly 20 s it is gone.
        #expect(filter.smoothedRSSI(at: t(20)) == -60)
        #expect(filter.smoothedRSSI(at: t(30)) == nil)
    }

    @Test func runningAverageForgetsExpiredSamplesWhenAdding() {
        var filter = RunningAverageRSSIFilter()
        filter.add(-40, at: t(0))
        filter.add(-41, at: t(5))
        filter.add(-70, at: t(25))
        #expect(filter.sampleCount == 1)
        #expect(filter.smoothedRSSI(at: t(25)) == -70)
    }

    @Test(arguments: [
        // One or two samples: the plain mean, nothing trimmed.
        ([-90], -90.0),
        ([-90, -60], -75.0),
        // 3 to 9 samples: one dropped from each end (n / 10 + 1 = 1), so 3 gives the median.
        ([-30, -90, -60], -60.0),
        ([-100, -60, -60, -60, -60, -60, -60, -60, -10], -60.0),
        // 10 to 19 samples: two dropped from each end.
        ([-100, -90, -60, -60, -60, -60, -60, -60, -30, -20], -60.0),
        ([-100, -99, -60, -60, -60, -60, -60, -60, -60, -21, -20], -60.0),
        // 20 samples: three dropped from each end.
        ([-100, -100, -100] + Array(repeating: -60, count: 14) + [-10, -10, -10], -60.0),
    ])
    func runningAverageTrimsLikeAltBeacon(samples: [Int], expected: Double) {
        var filter = RunningAverageRSSIFilter()
        for (offset, rssi) in samples.enumerated() { filter.add(rssi, at: t(Double(offset) * 0.1)) }
        #expect(filter.smoothedRSSI(at: t(2)) == expected)
    }

    @Test func runningAverageTrimmingKeepsTheMiddleNotTheMean() {
        var filter = RunningAverageRSSIFilter()
        for (offset, rssi) in [-50, -52, -54, -56, -58].enumerated() { filter.add(rssi, at: t(Double(offset))) }
        // Sorted −58 … −50, one dropped each side: mean of −56, −54, −52.
        #expect(filter.smoothedRSSI(at: t(5)) == -54)
    }

    @Test func runningAverageCapsItsSamples() {
        var filter = RunningAverageRSSIFilter(maximumSampleCount: 3)
        for (offset, rssi) in [-10, -20, -30, -40].enumerated() { filter.add(rssi, at: t(Double(offset))) }
        #expect(filter.sampleCount == 3)
        #expect(filter.smoothedRSSI(at: t(4)) == -30)
        #expect(RunningAverageRSSIFilter(maximumSampleCount: 0).maximumSampleCount == 1)
    }

    @Test func runningAverageStaysCorrectAcrossBufferCompaction() {
        var filter = RunningAverageRSSIFilter(window: .seconds(1))
        for step in 0..<100 { filter.add(-step, at: t(Double(step) * 0.5)) }
        #expect(filter.sampleCount == 2)
        #expect(filter.smoothedRSSI(at: t(49.5)) == -98.5)
    }

    // MARK: ARMA (AltBeacon ArmaRssiFilter)

    @Test func armaStartsAtTheFirstSample() {
        var filter = ARMARSSIFilter()
        #expect(filter.speed == 0.1)
        #expect(filter.smoothedRSSI(at: t(0)) == nil)
        filter.add(-50, at: t(0))
        #expect(filter.smoothedRSSI(at: t(0)) == -50)
    }

    @Test func armaConvergesGeometrically() {
        var filter = ARMARSSIFilter()
        filter.add(-50, at: t(0))
        var power = 1.0
        for step in 1...60 {
            filter.add(-70, at: t(Double(step)))
            power *= 0.9
            let expected = -70 + 20 * power
            #expect(abs((filter.estimate ?? 0) - expected) < 1e-9)
        }
        #expect(abs((filter.estimate ?? 0) + 70) < 0.05)
    }

    @Test func armaKeepsFractionsWhereAltBeaconTruncates() {
        var filter = ARMARSSIFilter()
        filter.add(-50, at: t(0))
        filter.add(-59, at: t(1))
        #expect(abs((filter.estimate ?? 0) + 50.9) < 1e-9)
    }

    @Test func armaClampsItsSpeed() {
        #expect(ARMARSSIFilter(speed: 5).speed == 1)
        #expect(ARMARSSIFilter(speed: 0).speed > 0)
        #expect(ARMARSSIFilter(speed: .nan).speed == 0.1)
        var jumpy = ARMARSSIFilter(speed: 1)
        jumpy.add(-50, at: t(0))
        jumpy.add(-80, at: t(1))
        #expect(jumpy.estimate == -80)
    }

    // MARK: Latest and the type-erased filter

    @Test func latestReportsTheLastSample() {
        var filter = LatestRSSIFilter()
        #expect(filter.smoothedRSSI(at: t(0)) == nil)
        filter.add(-70, at: t(0))
        filter.add(-65, at: t(1))
        #expect(filter.smoothedRSSI(at: t(100)) == -65)
    }

    @Test(arguments: [
        RSSIFilterKind.latest, .runningAverage, .arma, .arma(speed: 0.5),
        .runningAverage(window: .seconds(3), maximumSampleCount: 4),
    ])
    func anyFilterBehavesAsItsKind(kind: RSSIFilterKind) {
        let samples = [-60, -72, -58, -90, -61, -63, -59, -75, -66]
        var erased = kind.makeFilter()
        var concrete: any RSSIFilter =
            switch kind {
            case .latest: LatestRSSIFilter()
            case .runningAverage(let window, let count): RunningAverageRSSIFilter(window: window, maximumSampleCount: count)
            case .arma(let speed): ARMARSSIFilter(speed: speed)
            }
        for (offset, rssi) in samples.enumerated() {
            erased.add(rssi, at: t(Double(offset)))
            concrete.add(rssi, at: t(Double(offset)))
            #expect(erased.smoothedRSSI(at: t(Double(offset))) == concrete.smoothedRSSI(at: t(Double(offset))))
        }
        #expect(erased.kind == kind)
    }
}
