import Foundation
import PresenceSimulation
import Testing

@Suite("presence simulator")
struct SimulatorTests {
    /// Six 5 m rooms (3 × 2), a receiver in the middle of each.
    static let plan = SimulatedFloor.grid(columns: 3, rows: 2, size: 5, wallLoss: 5)
    static func receivers(offsets: [Double] = Array(repeating: 0, count: 6), offline: [Int: [Range<Double>]] = [:]) -> [SimulatedReceiver] {
        plan.rooms.indices.map {
            SimulatedReceiver(
                name: plan.rooms[$0].name, position: plan.rooms[$0].centre, rssiOffset: offsets[$0],
                offline: offline[$0] ?? [])
        }
    }

    @Test("rooms, walls and positions")
    func floorPlan() {
        let plan = Self.plan
        #expect(plan.rooms.count == 6)
        #expect(plan.room(at: Point(x: 7, y: 2)) == 1 && plan.room(at: Point(x: 2, y: 7)) == 3 && plan.room(at: Point(x: 20, y: 1)) == nil)
        #expect(plan.walls(from: plan.rooms[0].centre, to: plan.rooms[0].centre) == 0)
        #expect(plan.walls(from: plan.rooms[0].centre, to: plan.rooms[1].centre) == 1)
        #expect(plan.walls(from: plan.rooms[0].centre, to: plan.rooms[2].centre) == 2)
        #expect(plan.walls(from: plan.rooms[0].centre, to: plan.rooms[5].centre) >= 2)
    }

    @Test("the same seed gives the same trace; another seed another")
    func deterministic() {
        let beacon = SimulatedBeacon(name: "tag", advertisingInterval: 0.5, stops: [.init(room: 0, dwell: 30), .init(room: 2, dwell: 30)])
        let first = Simulator.run(plan: Self.plan, receivers: Self.receivers(), beacons: [beacon], radio: RadioEnvironment(), seed: 7)
        let again = Simulator.run(plan: Self.plan, receivers: Self.receivers(), beacons: [beacon], radio: RadioEnvironment(), seed: 7)
        let other = Simulator.run(plan: Self.plan, receivers: Self.receivers(), beacons: [beacon], radio: RadioEnvironment(), seed: 8)
        #expect(first.readings == again.readings && !first.readings.isEmpty)
        #expect(first.readings != other.readings)
    }

    @Test("the receiver in the beacon's room hears it loudest on average; loss, offsets and offline windows apply")
    func radio() {
        let beacon = SimulatedBeacon(name: "tag", advertisingInterval: 0.1, stops: [.init(room: 4, dwell: 600)])
        let radio = RadioEnvironment(shadowing: 4, packetLoss: 0.3)
        let trace = Simulator.run(
            plan: Self.plan, receivers: Self.receivers(offsets: [0, 0, 0, 0, 0, -12], offline: [1: [0..<300]]),
            beacons: [beacon], radio: radio, seed: 1)
        func mean(_ receiver: Int) -> Double {
            let values = trace.readings.filter { $0.receiver == receiver }.map { Double($0.rssi) }
            return values.reduce(0, +) / Double(max(1, values.count))
        }
        #expect(mean(4) > mean(3) + 8 && mean(4) > mean(1) + 8)
        // 600 s at 100 ms plus BLE's 0–10 ms delay: about 5,714 advertisements; 30 % lost: 4,000 ± 3 σ (σ ≈ 35).
        let heard = trace.readings.filter { $0.receiver == 4 }.count
        #expect((3_895...4_105).contains(heard))
        // Receiver 5 reads 12 dB low: weaker than its twin across the same wall, receiver 3.
        #expect(mean(5) < mean(3) - 8)
        #expect(!trace.readings.contains { $0.receiver == 1 && $0.time < 300 })
        #expect(trace.readings.contains { $0.receiver == 1 && $0.time >= 300 })
    }

    @Test("the truth: stops, walks between them, away")
    func truth() {
        let beacon = SimulatedBeacon(
            name: "tag", advertisingInterval: 1,
            stops: [
                .init(room: 0, dwell: 10), .init(room: 1, dwell: 10),
                .init(room: nil, dwell: 20), .init(room: 1, dwell: 5),
            ])
        let trace = Simulator.run(plan: Self.plan, receivers: Self.receivers(), beacons: [beacon], radio: RadioEnvironment(), seed: 3)
        // 10 s in room 0, a 5 m walk (about 4.2 s) to room 1, 10 s there, 20 s away, 5 s in room 1.
        #expect(trace.room(of: 0, at: 5) == .some(0))
        #expect(trace.room(of: 0, at: 12) == nil)
        #expect(trace.room(of: 0, at: 20) == .some(1))
        #expect(trace.room(of: 0, at: 30) == .some(nil))
        #expect(!trace.readings.contains { $0.time > 24.3 && $0.time < 44.1 })
        #expect(abs(trace.duration - (10 + 5 / 1.2 + 10 + 20 + 5)) < 1e-9)
    }

    @Test("Wi-Fi latency: one advertisement's readings arrive 5–60 ms late and spread out, out of advertising order, each receiver's in order")
    func latency() {
        let beacons = [
            SimulatedBeacon(name: "fast", advertisingInterval: 0.1, stops: [.init(room: 4, dwell: 120)]),
            SimulatedBeacon(name: "slow", advertisingInterval: 1, stops: [.init(room: 1, dwell: 120)]),
        ]
        let timely = Simulator.run(plan: Self.plan, receivers: Self.receivers(), beacons: beacons, radio: RadioEnvironment(), seed: 5)
        let late = timely.withReadingLatency(0.005...0.060, seed: 5)
        #expect(late.readings.count == timely.readings.count)
        // Kept in order per receiver, a reading waits at most for its predecessor, which arrived within 60 ms of an
        // earlier advertisement: still 5–60 ms.
        #expect(late.readings.allSatisfy { ($0.time - $0.advertisedAt) >= 0.005 - 1e-9 && ($0.time - $0.advertisedAt) <= 0.060 + 1e-9 })
        #expect(zip(late.readings, late.readings.dropFirst()).allSatisfy { $0.time <= $1.time })
        // Every receiver hears each advertisement on its own, at one advertising time; with latency they spread out.
        let byAdvertisement = Dictionary(grouping: late.readings) { "\($0.beacon) \($0.advertisedAt)" }
        let shared = byAdvertisement.values.filter { $0.count >= 3 }
        #expect(shared.count > 500)
        let spreads = shared.map { group in group.map(\.time).max()! - group.map(\.time).min()! }
        #expect(spreads.filter { $0 > 0.020 }.count > shared.count / 2)
        #expect(zip(late.readings, late.readings.dropFirst()).contains { $0.advertisedAt > $1.advertisedAt })
        for receiver in 0..<6 {
            let own = late.readings.filter { $0.receiver == receiver }
            #expect(zip(own, own.dropFirst()).allSatisfy { $0.advertisedAt <= $1.advertisedAt })
        }
        // The same trace: without latency again, readings are the original ones.
        #expect(
            Set(late.readings.map { SimulatedReading(time: $0.advertisedAt, receiver: $0.receiver, beacon: $0.beacon, rssi: $0.rssi) })
                == Set(timely.readings))
    }

    @Test("loss bursts drop whole stretches of one link; a receiver offline hears nothing in its windows")
    func burstsAndOffline() {
        let beacon = SimulatedBeacon(name: "tag", advertisingInterval: 0.1, stops: [.init(room: 4, dwell: 1200)])
        let timely = Simulator.run(plan: Self.plan, receivers: Self.receivers(), beacons: [beacon], radio: RadioEnvironment(), seed: 9)
        let bursty = timely.withLossBursts(LossBursts(meanGood: 30, meanBad: 5, lossWhileBad: 1), seed: 9)
        // 5 s bad in every 35: about 14 % more lost, in stretches: some gap of receiver 4 lasts several seconds.
        let kept = Double(bursty.readings.count) / Double(timely.readings.count)
        #expect(kept > 0.78 && kept < 0.93)
        let own = bursty.readings.filter { $0.receiver == 4 }.map(\.time)
        #expect((zip(own, own.dropFirst()).map { $1 - $0 }.max() ?? 0) > 5)
        let offline = timely.withReceiverOffline(OfflineSchedule(receiver: 4, period: 600, duration: 300, phase: 120))
        #expect(offline.receiverOffline[4] == [120..<420, 720..<1020])
        #expect(!offline.readings.contains { $0.receiver == 4 && ((120..<420).contains($0.time) || (720..<1020).contains($0.time)) })
        #expect(offline.readings.count { $0.receiver != 4 } == timely.readings.count { $0.receiver != 4 })
    }

    @Test("room departures: at the wall crossed walking to the next room, at the end of the stay going away")
    func departures() {
        let beacon = SimulatedBeacon(
            name: "tag", advertisingInterval: 1,
            stops: [
                .init(room: 0, dwell: 10), .init(room: 1, dwell: 10),
                .init(room: nil, dwell: 20), .init(room: 1, dwell: 5),
            ])
        let trace = Simulator.run(plan: Self.plan, receivers: Self.receivers(), beacons: [beacon], radio: RadioEnvironment(), seed: 3)
        // Centre of room 0 (2.5 m) to the wall at 5 m at 1.2 m/s: about 2.1 s into the walk.
        let left = trace.roomDepartures[0]
        #expect(left.count == 2)
        #expect(left.first?.room == 0 && left.first?.to == 1 && abs((left.first?.time ?? 0) - (10 + 2.5 / 1.2)) < 0.06)
        #expect(left.last?.room == 1 && left.last?.to == nil && abs((left.last?.time ?? 0) - (10 + 5 / 1.2 + 10)) < 1e-9)
    }
}

/// The structured radio the real flat showed (`RadioEnvironment.realFlat`): each part on its own, measured on a
/// beacon that stays put, so nothing but that part moves the readings.
@Suite("presence simulator: the real flat's radio parts")
struct StructuredRadioTests {
    static let plan = SimulatorTests.plan

    /// A beacon in room 0's centre for `seconds`, advertising every second, heard by room 0's receiver only.
    static func readings(_ radio: RadioEnvironment, seconds: Double = 10_000, stops: [SimulatedBeacon.Stop]? = nil, seed: UInt64 = 1)
        -> [SimulatedReading]
    {
        let beacon = SimulatedBeacon(name: "tag", advertisingInterval: 1, stops: stops ?? [.init(room: 0, dwell: seconds)])
        return Simulator.run(plan: plan, receivers: [SimulatorTests.receivers()[0]], beacons: [beacon], radio: radio, seed: seed).readings
    }

    static func quiet() -> RadioEnvironment {
        var radio = RadioEnvironment(shadowing: 0, packetLoss: 0)
        radio.missRepeat = 0
        return radio
    }

    @Test("misses come at the rate asked, in runs: a miss follows a miss at missRepeat")
    func missesInRuns() {
        var radio = Self.quiet()
        radio.packetLoss = 0.2
        radio.missRepeat = 0.5
        let heard = Set(Self.readings(radio).map { Int($0.advertisedAt) })
        let advertised = 10_000
        let missed = (0..<advertised).map { !heard.contains($0) }
        let rate = Double(missed.count { $0 }) / Double(advertised)
        let again = Double(zip(missed, missed.dropFirst()).count { $0 && $1 }) / Double(missed.count { $0 })
        // 10,000 draws: the rate within ±0.02, the repeat within ±0.05 (about 4 σ each).
        #expect(abs(rate - 0.2) < 0.02, "miss rate \(rate)")
        #expect(abs(again - 0.5) < 0.05, "a miss after a miss \(again)")
        // Plain misses (no missRepeat) do not come in runs.
        radio.missRepeat = nil
        let plain = Set(Self.readings(radio).map { Int($0.advertisedAt) })
        let plainMissed = (0..<advertised).map { !plain.contains($0) }
        let plainAgain = Double(zip(plainMissed, plainMissed.dropFirst()).count { $0 && $1 }) / Double(plainMissed.count { $0 })
        #expect(abs(plainAgain - 0.2) < 0.05, "independent misses repeat at their rate, \(plainAgain)")
    }

    @Test("fading holds over its time: readings a second apart nearly alike, a minute apart unrelated")
    func fadingHoldsOverItsTime() {
        var radio = Self.quiet()
        radio.fading = 6
        radio.fadingTime = 10
        let values = Self.readings(radio).map { Double($0.rssi) }
        let mean = values.reduce(0, +) / Double(values.count)
        let centred = values.map { $0 - mean }
        let variance = centred.map { $0 * $0 }.reduce(0, +) / Double(values.count)
        func correlation(_ lag: Int) -> Double {
            zip(centred, centred.dropFirst(lag)).map { $0 * $1 }.reduce(0, +) / Double(values.count - lag) / variance
        }
        #expect(abs(variance.squareRoot() - 6) < 1, "spread \(variance.squareRoot())")
        #expect(correlation(1) > 0.85, "exp(−0.1) = 0.90, \(correlation(1))")
        #expect(abs(correlation(10) - exp(-1)) < 0.15, "\(correlation(10))")
        #expect(abs(correlation(60)) < 0.15, "\(correlation(60))")
    }

    @Test("a room's bias and a spot's shadowing stay while the beacon stays, and come back with it")
    func placeAndRoomStay() {
        var radio = Self.quiet()
        radio.roomShadowing = 6
        radio.placeShadowing = 6
        radio.placeScale = 0.5
        // 1.5 m one side of room 0's receiver, 1.5 m the other side (as far from it: the same path loss), then back.
        let stops: [SimulatedBeacon.Stop] = [
            .init(room: 0, dwell: 20, offset: Point(x: -1.5, y: 0)), .init(room: 0, dwell: 20, offset: Point(x: 1.5, y: 0)),
            .init(room: 0, dwell: 20, offset: Point(x: -1.5, y: 0)),
        ]
        let readings = Self.readings(radio, stops: stops)
        func at(_ range: Range<Double>) -> Set<Int> { Set(readings.filter { range.contains($0.time) }.map(\.rssi)) }
        // No noise and no fading: one value while it stays, the same value when it is back.
        #expect(at(1..<19).count == 1 && at(41..<59).count == 1)
        #expect(at(1..<19) == at(41..<59))
        // Over many seeds, two spots 3 m apart (six place scales) differ by the place part's spread: a room bias
        // alone would give them one value.
        var differences: [Double] = []
        for seed in UInt64(1)...40 {
            let run = Self.readings(radio, stops: stops, seed: seed)
            guard let centre = run.first(where: { $0.time > 1 && $0.time < 19 }), let spot = run.first(where: { $0.time > 21 && $0.time < 39 })
            else { continue }
            differences.append(Double(centre.rssi - spot.rssi))
        }
        let spread = (differences.map { $0 * $0 }.reduce(0, +) / Double(differences.count)).squareRoot()
        // Two independent draws of σ 6: a difference of σ 8.5.
        #expect(spread > 6 && spread < 11, "\(spread)")
        // The room bias alone: both spots alike, every seed.
        radio.placeShadowing = 0
        for seed in UInt64(1)...10 {
            let run = Self.readings(radio, stops: stops, seed: seed)
            #expect(Set(run.filter { $0.time > 1 && $0.time < 59 }.map(\.rssi)).count == 1)
        }
    }
}
