import BeacondCore

/// Which dropped lines of a live feed get a log line: the first `individually` each with its reason, then one
/// line at most every `interval`, with how many were dropped unlogged since. A writer flooding the FIFO with
/// garbage cannot flood the journal; none goes uncounted.
public struct DroppedLineLog: Sendable {
    public let individually: Int
    public let interval: Duration
    public private(set) var dropped = 0
    private var unlogged = 0
    private var lastLogged: ContinuousClock.Instant?

    public init(individually: Int = 20, interval: Duration = .seconds(60)) {
        self.individually = individually
        self.interval = interval
    }

    /// The reason to log for this dropped line, or nil to count it silently.
    public mutating func record(_ reason: String, at now: ContinuousClock.Instant) -> String? {
        dropped += 1
        if dropped <= individually {
            lastLogged = now
            guard dropped == individually else { return reason }
            return reason + " (\(individually) dropped lines logged; further ones are logged at most once a minute, with a count)"
        }
        unlogged += 1
        if let lastLogged, now - lastLogged < interval { return nil }
        let others = unlogged - 1
        unlogged = 0
        lastLogged = now
        return reason + " (and \(others) other dropped line\(others == 1 ? "" : "s") not logged since the last report; "
            + "\(dropped) dropped in all)"
    }
}
