/// Times repeated rounds of the same work with `ContinuousClock` and summarises them.
struct RoundTimer {
    /// Rounds run until this much time has been spent (and at least `minimumRounds` ran).
    var budget: Duration
    var minimumRounds = 5
    var maximumRounds = 1_000

    /// Runs one untimed warm-up round (caches, page faults), then the timed rounds.
    func measure(_ round: () throws -> Void) rethrows -> RoundTimes {
        let clock = ContinuousClock()
        try round()
        var times: [Duration] = []
        let start = clock.now
        while times.count < minimumRounds || (clock.now - start < budget && times.count < maximumRounds) {
            let roundStart = clock.now
            try round()
            times.append(clock.now - roundStart)
        }
        return RoundTimes(seconds: times.map(\.seconds))
    }
}

/// Per-round durations and the rates they give for a known amount of work per round.
struct RoundTimes {
    var seconds: [Double]

    var rounds: Int { seconds.count }
    var fastest: Double { seconds.min() ?? .nan }
    var slowest: Double { seconds.max() ?? .nan }
    var median: Double {
        let sorted = seconds.sorted()
        guard !sorted.isEmpty else { return .nan }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    /// Items per second in the slowest, median and fastest round.
    func rates(perRound items: Int) -> Rates {
        Rates(min: Double(items) / slowest, median: Double(items) / median, max: Double(items) / fastest)
    }
}

struct Rates: Codable {
    var min: Double
    var median: Double
    var max: Double
}

extension Duration {
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }
}
