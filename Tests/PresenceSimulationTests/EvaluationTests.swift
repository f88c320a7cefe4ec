import PresenceSimulation
import Testing

/// The scores mean what they say: checked with algorithms whose answers are known.
@Suite("presence evaluation")
struct EvaluationTests {
    /// Answers the truth, `lag` seconds late.
    struct Oracle: PresenceAlgorithm {
        let trace: SimulatedTrace
        var lag = 0.0
        var name: String { "oracle" }
        mutating func observe(_ reading: SimulatedReading) {}
        mutating func answer(for beacon: Int, at time: Double) -> PresenceAnswer {
            switch trace.room(of: beacon, at: max(0, time - lag)) {
            case .some(.some(let room)): return .room(room)
            case .some(.none): return .away
            case .none: return .unknown // walking
            }
        }
    }

    /// Always the same room: never gone.
    struct Stubborn: PresenceAlgorithm {
        var name: String { "stubborn" }
        mutating func observe(_ reading: SimulatedReading) {}
        mutating func answer(for beacon: Int, at time: Double) -> PresenceAnswer { .room(0) }
    }

    static let trace: SimulatedTrace = {
        let plan = SimulatedFloor.grid(columns: 3, rows: 2, size: 5)
        let receivers = plan.rooms.map { SimulatedReceiver(name: $0.name, position: $0.centre) }
        // Room 0 for 600 s, walk to room 1, 600 s there, away 300 s, back in room 1 for 300 s, away 300 s.
        let beacon = SimulatedBeacon(
            name: "tag", advertisingInterval: 1,
            stops: [
                .init(room: 0, dwell: 600), .init(room: 1, dwell: 600), .init(room: nil, dwell: 300),
                .init(room: 1, dwell: 300), .init(room: nil, dwell: 300),
            ])
        return Simulator.run(plan: plan, receivers: receivers, beacons: [beacon], radio: RadioEnvironment(), seed: 11)
    }()

    @Test("the truth itself: every room right, its own room changes as flaps, no false exit, exits at once")
    func oracleScoresPerfectly() {
        var oracle = Oracle(trace: Self.trace)
        let score = Evaluation.score(&oracle, on: Self.trace)
        #expect(score.correctRoomRate == 1)
        #expect(score.falseExitsPerHour == 0 && score.missedExits == 0)
        #expect(score.exitDelays == [0, 0])
        #expect(score.flapsPerHour == score.truthRoomChangesPerHour && score.truthRoomChangesPerHour > 0)
    }

    @Test("the truth 20 s late: exits 20 s after each departure, rooms wrong for 20 s after each change")
    func lateOracle() {
        var oracle = Oracle(trace: Self.trace, lag: 20)
        let score = Evaluation.score(&oracle, on: Self.trace)
        #expect(score.exitDelays == [20, 20])
        #expect(score.falseExitsPerHour == 0)
        #expect(score.correctRoomRate < 1 && score.correctRoomRate > 0.9)
    }

    @Test("never gone and never moving: both departures missed, half the room time wrong")
    func stubborn() {
        var stubborn = Stubborn()
        let score = Evaluation.score(&stubborn, on: Self.trace)
        #expect(score.missedExits == 2 && score.exitDelays.isEmpty)
        #expect(score.flapsPerHour == 0 && score.falseExitsPerHour == 0)
        #expect(abs(score.correctRoomRate - 600.0 / 1500.0) < 0.01)
    }
}
