/// Core Location's `CLProximity`: a coarse reading of the estimated distance.
public enum BeaconProximity: String, Hashable, Sendable, CaseIterable {
    /// Not heard this ranging cycle, or no distance could be estimated.
    case unknown
    /// Very close, about arm's length or less.
    case immediate
    /// Relatively close.
    case near
    /// Further away, or with a weak signal.
    case far
}

/// Where `immediate` ends and `near` ends, in metres of estimated distance.
///
/// Apple documents `CLProximity` only in words ("immediate vicinity", "relatively close", "further
/// away"); the defaults 0.5 m and 3 m approximate the bands commonly reported for iOS and used by
/// other beacon libraries. They are configurable because they are not Apple's exact numbers.
public struct ProximityThresholds: Hashable, Sendable {
    /// Accuracy below this is `immediate`.
    public var immediate: Double
    /// Accuracy below this (and not immediate) is `near`; from here on it is `far`.
    public var near: Double

    public init(immediate: Double = 0.5, near: Double = 3.0) {
        self.immediate = immediate
        self.near = near
    }

    /// 0.5 m and 3 m: an approximation of Core Location's bands (see the type's documentation).
    public static let coreLocationApproximation = ProximityThresholds()

    /// `unknown` for a negative (or NaN) accuracy, Core Location's "unknown".
    public func proximity(forAccuracy accuracy: Double) -> BeaconProximity {
        guard accuracy >= 0 else { return .unknown }
        if accuracy < immediate { return .immediate }
        if accuracy < near { return .near }
        return .far
    }
}
