import PresenceSimulation
import Testing

/// Each written rule does what its system's source says, on a beacon that stays in room 2 for 10 minutes, then
/// leaves for 10 minutes (1 s adverts, little noise).
@Suite("peer presence rules")
struct PeerAlgorithmTests {
    static let trace: SimulatedTrace = {
        let plan = SimulatedFloor.grid(columns: 3, rows: 2, size: 5)
        let receivers = plan.rooms.map { SimulatedReceiver(name: $0.name, position: $0.centre) }
        let beacon = SimulatedBeacon(name: "tag", advertisingInterval: 1, stops: [.init(room: 2, dwell: 600), .init(room: nil, dwell: 600)])
        return Simulator.run(
            plan: plan, receivers: receivers, beacons: [beacon],
            radio: RadioEnvironment(shadowing: 2, packetLoss: 0.1), seed: 5)
    }()

    static func score<A: PresenceAlgorithm>(_ algorithm: A) -> PresenceScore {
        var algorithm = algorithm
        return Evaluation.score(&algorithm, on: trace)
    }

    static let rooms = Array(0..<6)

    @Test("right room nearly always; exits after each system's own delay")
    func delays() throws {
        let expected: [(PresenceScore, ClosedRange<Double>?)] = [
            (Self.score(AltBeaconRule(rooms: Self.rooms)), 9...11), // 10 s exit period
            (Self.score(BermudaRule(rooms: Self.rooms)), 29...31), // 30 s device-tracker timeout
            (Self.score(BeacondTodayRule(rooms: Self.rooms)), 29...31), // exit_timeout 30 s
            (Self.score(RoomAssistantRule(rooms: Self.rooms)), 59...121), // 60 s timeout, rechecked every 60 s
            (Self.score(HomeAssistantRule(rooms: Self.rooms)), 5...300), // stale (interval + 5 s), checked every 300 s
            (Self.score(ESPresenceMQTTRoomRule(rooms: Self.rooms)), nil), // away_timeout 0: never away
        ]
        for (score, delay) in expected {
            #expect(score.correctRoomRate > 0.98)
            #expect(score.falseExitsPerHour == 0)
            if let delay {
                let median = try #require(score.exitDelay(quantile: 0.5))
                #expect(delay.contains(median), "exit after \(median) s")
            } else {
                #expect(score.exitDelays.isEmpty && score.missedExits == 1)
            }
        }
    }
}
