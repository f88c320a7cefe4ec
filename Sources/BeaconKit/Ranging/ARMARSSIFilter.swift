/// An auto-regressive moving average (AltBeacon android-beacon-library's `ArmaRssiFilter`):
/// each sample moves the estimate by `speed` of the way towards it, `x ← x − speed · (x − rssi)`;
/// the first sample initialises it.
///
/// AltBeacon's default speed is 0.1 (`DEFAULT_ARMA_SPEED`), which its documentation recommends for
/// signals arriving at about 1 Hz or faster; slower beacons want 0.25–0.5. After `k` samples of a new
/// level the estimate still carries `(1 − speed)^k` of the old one (about 12 % after 20 samples).
///
/// One deliberate difference: AltBeacon stores the estimate as an `int`, truncating after every
/// sample, which pulls it towards 0 dBm (stronger, nearer) and stalls it up to 9 dB short of a
/// weaker level (−50 − 0.1 · (−50 − −59) = −50.9 → −50). The estimate here stays a `Double`.
/// The filter ignores time: it smooths over samples, not seconds.
public struct ARMARSSIFilter: RSSIFilter, Hashable {
    /// AltBeacon's `DEFAULT_ARMA_SPEED`.
    public static let defaultSpeed = 0.1

    public let speed: Double
    public private(set) var estimate: Double?

    /// `speed` is clamped to (0, 1]: 0 would never move, above 1 would overshoot. A non-finite speed
    /// falls back to the default.
    public init(speed: Double = defaultSpeed) {
        self.speed = speed.isFinite ? min(1, max(.ulpOfOne, speed)) : Self.defaultSpeed
    }

    public mutating func add(_ rssi: Int, at time: Timestamp) {
        let sample = Double(rssi)
        guard let current = estimate else {
            estimate = sample
            return
        }
        estimate = current - speed * (current - sample)
    }

    public func smoothedRSSI(at now: Timestamp) -> Double? { estimate }
}
