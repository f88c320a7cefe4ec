/// How a beacon's room is chosen among receivers: what a challenger room must beat and for how long.
public struct RoomConfiguration: Hashable, Sendable {
    /// How much nearer a challenger room's (smoothed, calibrated) distance must be than the current room's, as a
    /// share: 0.3 means at most 70 % of it. A room not heard within `staleAfter` needs no margin.
    public var margin: Double
    /// How long a challenger must keep that margin before the beacon moves to its room.
    public var dwell: Duration
    /// Readings older than this no longer place a beacon.
    public var staleAfter: Duration
    /// Time constant of each receiver's RSSI smoothing (exponential, in dB).
    public var smoothing: Duration

    public static let marginRange = 0.0...0.9

    /// Defaults chosen by the evaluation in docs/presence.md (`beacond-bench presence`).
    public static let `default` = RoomConfiguration(
        checkedMargin: 0.3, dwell: .seconds(6), staleAfter: .seconds(10),
        smoothing: .seconds(4))

    public init(margin: Double, dwell: Duration, staleAfter: Duration = .seconds(10), smoothing: Duration = .seconds(4))
        throws(RoomConfigurationError)
    {
        guard margin.isFinite, Self.marginRange.contains(margin) else { throw .marginOutOfRange(margin) }
        guard dwell >= .zero, dwell <= .seconds(3600) else { throw .dwellOutOfRange(dwell) }
        guard staleAfter > .zero, staleAfter <= .seconds(3600) else { throw .staleAfterOutOfRange(staleAfter) }
        guard smoothing >= .zero, smoothing <= .seconds(600) else { throw .smoothingOutOfRange(smoothing) }
        self.init(checkedMargin: margin, dwell: dwell, staleAfter: staleAfter, smoothing: smoothing)
    }

    private init(checkedMargin: Double, dwell: Duration, staleAfter: Duration, smoothing: Duration) {
        margin = checkedMargin
        self.dwell = dwell
        self.staleAfter = staleAfter
        self.smoothing = smoothing
    }
}

public enum RoomConfigurationError: Error, Hashable, CustomStringConvertible {
    case marginOutOfRange(Double)
    case dwellOutOfRange(Duration)
    case staleAfterOutOfRange(Duration)
    case smoothingOutOfRange(Duration)

    public var description: String {
        switch self {
        case .marginOutOfRange(let margin):
            return "room margin \(margin) is out of range: give 0 to 0.9 (0.3: a room must be 30 % nearer to take a beacon)"
        case .dwellOutOfRange(let dwell): return "room dwell \(dwell) is out of range: give 0 to 3600 seconds"
        case .staleAfterOutOfRange(let stale): return "room stale-after \(stale) is out of range: give more than 0 and at most 3600 seconds"
        case .smoothingOutOfRange(let smoothing): return "room smoothing \(smoothing) is out of range: give 0 to 600 seconds"
        }
    }
}
