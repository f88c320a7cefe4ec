import ArgumentParser
import BeaconKit
import Foundation
import TestKit

/// `beacond-bench locate`: what the locator costs at a fleet's load. A floor of `width` × `depth` metres with
/// `receivers` on a ring around it; `beacons` beacons each heard by every receiver once a second and located once a
/// second; one simulated minute. CPU time over the minute is the share of one core (target < 5 % for 1,000 beacons and
/// 10 receivers: docs/performance.md).
struct LocateBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "locate", abstract: "The position locator's CPU at a fleet's load (run with -c release).")

    @Option(help: "Beacons, each heard and located once a second.") var beacons = 1_000
    @Option(help: "Receivers, each hearing every beacon.") var receivers = 10
    @Option(help: "Simulated seconds.") var seconds = 60
    @Option(help: "The floor's width and depth, metres.") var width = 20.0
    @Option var depth = 15.0

    func validate() throws {
        guard beacons > 0, receivers > 0, seconds > 0, width > 0, depth > 0 else { throw ValidationError("every option must be positive") }
    }

    func run() throws {
        let floor = LocatorFloor(id: "ground", minimumX: 0, minimumY: 0, maximumX: width, maximumY: depth, tagHeight: 1)
        let placed = (0..<receivers).map { index in
            let angle = Double(index) / Double(receivers) * 2 * Double.pi
            return PlacedReceiver(
                id: ReceiverID(rawValue: UInt32(index + 1)), x: width / 2 + cos(angle) * width * 0.45, y: depth / 2 + sin(angle) * depth * 0.45,
                z: 2.5, calibration: .uncalibrated)
        }
        var locator = PositionLocator<Int>(floors: [floor], receivers: placed)
        var generator = SplitMix64(state: 7)
        // Each beacon at a fixed spot; its readings from the curve plus up to ±6 dB.
        let spots = (0..<beacons).map { _ in (x: Double(generator.next() % 1000) / 1000 * width, y: Double(generator.next() % 1000) / 1000 * depth) }
        let noise = (0..<4096).map { _ in Double(generator.next() % 1201) / 100 - 6 }
        var placedCount = 0
        var totalError = 0.0
        let clock = ContinuousClock()
        var usageBefore = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usageBefore)
        let started = clock.now
        for second in 0..<seconds {
            for beacon in 0..<beacons {
                let now = Timestamp(secondsSinceEpoch: 1_700_000_000 + Double(second) + Double(beacon) / Double(beacons))
                for (index, receiver) in placed.enumerated() {
                    let (dx, dy) = (spots[beacon].x - receiver.x, spots[beacon].y - receiver.y)
                    let distance = max((dx * dx + dy * dy + 2.25).squareRoot(), 0.1)
                    let rssi = (-59 - 27 * log10(distance) + noise[(beacon * 31 + index * 7 + second * 13) & 4095]).rounded()
                    locator.observe(beacon, rssi: rssi, measuredPower: -59, by: receiver.id, at: now)
                }
                if let position = locator.position(of: beacon, at: now) {
                    placedCount += 1
                    let (ex, ey) = (position.x - spots[beacon].x, position.y - spots[beacon].y)
                    totalError += (ex * ex + ey * ey).squareRoot()
                }
            }
        }
        let elapsed = clock.now - started
        var usageAfter = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usageAfter)
        func cpu(_ usage: rusage) -> Double {
            Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec)
                / 1e6
        }
        let used = cpu(usageAfter) - cpu(usageBefore)
        print(
            "locate: \(beacons) beacons × \(receivers) receivers at 1 Hz for \(seconds) simulated s on a \(Int(width)) × \(Int(depth)) m floor "
                + "(\(Int((width / 0.25).rounded(.up)) * Int((depth / 0.25).rounded(.up))) spots)")
        print(
            String(
                format: "  CPU %.2f s (wall %.2f s) for %d s: %.2f %% of one core; %d positions, mean error %.2f m (±6 dB noise)", used,
                Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18, seconds, used / Double(seconds) * 100,
                placedCount, totalError / Double(max(placedCount, 1))))
        if let memory = try? ResidentMemory.sample() {
            print(
                String(format: "  RSS %.1f MB, peak %.1f MB", Double(memory.residentBytes) / 1_048_576, Double(memory.peakResidentBytes) / 1_048_576))
        }
    }
}
