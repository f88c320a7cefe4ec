/// The mean of the samples heard within a time window, trimmed of its extremes
/// (AltBeacon android-beacon-library's `RunningAverageRssiFilter`, its default filter).
///
/// What AltBeacon does, and so what this does:
/// - a sample counts while `now − sampleTime < window`; the default window is 20 s
///   (`DEFAULT_SAMPLE_EXPIRATION_MILLISECONDS = 20000`);
/// - with more than two samples, the samples are sorted and `n / 10 + 1` are dropped from each end
///   (so "the top and bottom 10 %", rounded up to at least one sample each side: 3–9 samples lose
///   one each side, 10–19 lose two); with one or two samples the plain mean is used.
///
/// One addition for memory: at most `maximumSampleCount` samples are kept (the oldest go first).
/// The default 200 is the 20 s window at a 100 ms advertising interval, the interval Apple recommends
/// for iBeacons ("Getting Started with iBeacon"), so it only bites on beacons advertising faster than
/// that, and bounds a tracked beacon to about 3 KB of samples.
public struct RunningAverageRSSIFilter: RSSIFilter, Hashable {
    /// AltBeacon's `DEFAULT_SAMPLE_EXPIRATION_MILLISECONDS` (20 000 ms).
    public static let defaultWindow: Duration = .seconds(20)
    /// 20 s at 10 advertisements per second; see the type's documentation.
    public static let defaultMaximumSampleCount = 200

    struct Sample: Hashable, Sendable {
        var time: Timestamp
        var rssi: Int
    }

    public let window: Duration
    public let maximumSampleCount: Int
    private let windowMicroseconds: Int64
    /// Samples in arrival order; the live ones start at `start` (a head index makes dropping the
    /// oldest O(1); the dead prefix is compacted once it is half the buffer).
    private var samples: [Sample] = []
    private var start = 0

    /// `maximumSampleCount` below 1 is taken as 1.
    public init(window: Duration = defaultWindow, maximumSampleCount: Int = defaultMaximumSampleCount) {
        self.window = window
        self.maximumSampleCount = max(1, maximumSampleCount)
        self.windowMicroseconds = window.wholeMicroseconds
    }

    /// Samples currently held (some may already be outside the window at a later `now`).
    public var sampleCount: Int { samples.count - start }

    public mutating func add(_ rssi: Int, at time: Timestamp) {
        samples.append(Sample(time: time, rssi: rssi))
        while start < samples.count,
            samples.count - start > maximumSampleCount || !isLive(samples[start], at: time)
        {
            start += 1
        }
        if start >= 16 && start * 2 >= samples.count {
            samples.removeFirst(start)
            start = 0
        }
    }

    public func smoothedRSSI(at now: Timestamp) -> Double? {
        var live: [Int] = []
        live.reserveCapacity(sampleCount)
        for sample in samples[start...] where isLive(sample, at: now) {
            live.append(sample.rssi)
        }
        guard !live.isEmpty else { return nil }
        live.sort()
        let count = live.count
        let trimmed = count > 2 ? count / 10 + 1 : 0
        let kept = live[trimmed..<(count - trimmed)]
        var sum = 0.0
        for rssi in kept { sum += Double(rssi) }
        return sum / Double(kept.count)
    }

    private func isLive(_ sample: Sample, at now: Timestamp) -> Bool {
        (now - sample.time).wholeMicroseconds < windowMicroseconds
    }
}
