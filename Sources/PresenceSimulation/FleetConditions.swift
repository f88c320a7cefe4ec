import Foundation

/// Losses in bursts on each receiver–beacon link (the Gilbert–Elliott model): a link is good or bad (a body between
/// the beacon and the receiver), each for an exponentially distributed time; a bad link loses `lossWhileBad` of the
/// advertisements the trace's independent loss left.
public struct LossBursts: Hashable, Sendable {
    /// Mean seconds a link stays good, and bad.
    public var meanGood: Double
    public var meanBad: Double
    public var lossWhileBad: Double

    public init(meanGood: Double, meanBad: Double, lossWhileBad: Double) {
        self.meanGood = meanGood
        self.meanBad = meanBad
        self.lossWhileBad = lossWhileBad
    }
}

/// A receiver offline for `duration` seconds of every `period`, from `phase` on (it hears nothing then, and says so).
public struct OfflineSchedule: Hashable, Sendable {
    public var receiver: Int
    public var period: Double
    public var duration: Double
    public var phase: Double

    public init(receiver: Int, period: Double, duration: Double, phase: Double) {
        self.receiver = receiver
        self.period = period
        self.duration = duration
        self.phase = phase
    }

    func windows(until end: Double) -> [Range<Double>] {
        stride(from: phase, to: end, by: period).map { $0..<min(end, $0 + duration) }
    }
}

// What a fleet of Wi-Fi receivers does to a trace, applied after it is made so the same trace can be scored with and
// without it: every draw comes from its own seed, never the trace's.
extension SimulatedTrace {
    /// Each reading delivered `latency` seconds (uniform) after its advertisement, as ESPresense nodes deliver them over
    /// MQTT (5–60 ms on Wi-Fi): readings of one advertisement by several receivers arrive spread out, and readings of
    /// different receivers out of advertising order. One receiver's readings keep their order (one TCP connection).
    /// Readings are then in arrival order, stamped with arrival time, as the daemon sees them.
    public func withReadingLatency(_ latency: ClosedRange<Double>, seed: UInt64) -> SimulatedTrace {
        var random = SeededRandom(seed: seed ^ 0x1A7E_0000_0000_0000)
        var lastArrival: [Int: Double] = [:]
        var trace = self
        trace.readings = readings.map { reading in
            var late = reading
            let drawn = reading.advertisedAt + random.uniform(in: latency.lowerBound..<latency.upperBound)
            late.time = max(drawn, lastArrival[reading.receiver] ?? drawn)
            lastArrival[reading.receiver] = late.time
            return late
        }
        // A reading held behind its receiver's previous one arrives with it: advertising order breaks the tie.
        trace.readings.sort { ($0.time, $0.receiver, $0.advertisedAt, $0.beacon) < ($1.time, $1.receiver, $1.advertisedAt, $1.beacon) }
        return trace
    }

    /// The readings a bursty link would also have lost (`LossBursts`), each receiver–beacon link on its own.
    public func withLossBursts(_ bursts: LossBursts, seed: UInt64) -> SimulatedTrace {
        var random = SeededRandom(seed: seed ^ 0xB0B5_0000_0000_0000)
        struct Link: Hashable { var receiver: Int, beacon: Int }
        var links: [Link: (bad: Bool, until: Double)] = [:]
        var trace = self
        trace.readings = readings.filter { reading in
            let key = Link(receiver: reading.receiver, beacon: reading.beacon)
            var link =
                links[key]
                ?? {
                    let bad = random.uniform(in: 0..<1) < bursts.meanBad / (bursts.meanGood + bursts.meanBad)
                    return (bad, reading.advertisedAt + random.exponential(mean: bad ? bursts.meanBad : bursts.meanGood))
                }()
            while link.until <= reading.advertisedAt {
                link.bad.toggle()
                link.until += random.exponential(mean: link.bad ? bursts.meanBad : bursts.meanGood)
            }
            links[key] = link
            return !(link.bad && random.uniform(in: 0..<1) < bursts.lossWhileBad)
        }
        return trace
    }

    /// The trace with `schedule`'s receiver offline: its readings delivered in those windows are gone, and the rules
    /// are told when it goes and comes back.
    public func withReceiverOffline(_ schedule: OfflineSchedule) -> SimulatedTrace {
        let windows = schedule.windows(until: duration)
        var trace = self
        trace.readings = readings.filter { reading in
            reading.receiver != schedule.receiver || !windows.contains { $0.contains(reading.time) }
        }
        trace.receiverOffline[schedule.receiver] += windows
        trace.receiverOffline[schedule.receiver].sort { $0.lowerBound < $1.lowerBound }
        if trace.receivers.indices.contains(schedule.receiver) {
            trace.receivers[schedule.receiver].offline = trace.receiverOffline[schedule.receiver]
        }
        return trace
    }
}

extension SeededRandom {
    /// Exponentially distributed with `mean`.
    mutating func exponential(mean: Double) -> Double {
        -mean * log(max(uniform(in: 0..<1), 1e-300))
    }
}
