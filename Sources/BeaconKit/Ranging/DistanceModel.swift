import Foundation

/// Turns a (smoothed) RSSI and the beacon's measured power (its calibrated RSSI at 1 m) into
/// Core Location's `accuracy`: an estimated distance in metres, −1 when it cannot be estimated.
///
/// Every model answers −1 when the RSSI is missing or 0 (Core Location's "not heard"), when the
/// measured power is 0 (the beacon did not calibrate itself; Home Assistant's ibeacon-ble also
/// refuses it), or when the arithmetic gives no finite number.
public enum DistanceModel: Hashable, Sendable, CustomStringConvertible {
    /// AltBeacon android-beacon-library's `CurveFittedDistanceCalculator`: with `ratio = rssi / power`,
    /// `d = ratio^10` when `ratio < 1`, else `d = c1 · ratio^c2 + c3` (coefficients fitted per
    /// phone model). A negative result (only coefficients with a negative `c3` can give one) is
    /// reported as 0 m: "closer than the fit can tell", not "unknown".
    case curveFitted(CurveFitCoefficients)

    /// Home Assistant's iBeacon integration (Bluetooth-Devices/ibeacon-ble
    /// `calculate_distance_meters`): the curve fit with ``CurveFitCoefficients/homeAssistant``,
    /// capped at its `MAX_THEORETICAL_DISTANCE` of 400 m. A positive measured power is used as
    /// given, as upstream does (power 59, RSSI −60 gives 1.183 m).
    case homeAssistant

    /// Log-distance path loss: `d = 10^((power − rssi) / (10 · n))`, the free-space law for n = 2
    /// (AltBeacon's `PathLossDistanceCalculator` uses the same formula and n = 2 by default).
    case logDistance(pathLossExponent: Double)

    /// AltBeacon's default model (its `model-distance-calculations.json` marks Nexus 5 as default).
    public static let altBeacon = DistanceModel.curveFitted(.nexus5)

    /// n = 2, free space: AltBeacon `PathLossDistanceCalculator.environmentalConstant`'s default.
    public static let defaultPathLossExponent = 2.0

    /// Log-distance with ``defaultPathLossExponent``.
    public static let freeSpaceLogDistance = DistanceModel.logDistance(pathLossExponent: defaultPathLossExponent)

    /// ibeacon-ble's `MAX_THEORETICAL_DISTANCE`.
    public static let homeAssistantMaximumDistance = 400.0

    /// The estimated distance in metres, or −1 when unknown.
    public func accuracy(rssi: Double?, measuredPower: Int) -> Double {
        guard let rssi, rssi != 0, rssi.isFinite, measuredPower != 0 else { return -1 }
        let power = Double(measuredPower)
        let distance: Double
        switch self {
        case .curveFitted(let coefficients):
            distance = max(0, coefficients.distance(ratio: rssi / power))
        case .homeAssistant:
            distance = min(
                CurveFitCoefficients.homeAssistant.distance(ratio: rssi / power),
                Self.homeAssistantMaximumDistance)
        case .logDistance(let exponent):
            distance = pow(10, (power - rssi) / (10 * exponent))
        }
        return distance.isFinite && distance >= 0 ? distance : -1
    }

    public var description: String {
        switch self {
        case .curveFitted(let coefficients): return "curve fit \(coefficients)"
        case .homeAssistant: return "Home Assistant"
        case .logDistance(let exponent): return "log-distance n=\(exponent)"
        }
    }
}

/// The three coefficients of a curve-fitted distance model, measured per receiving phone model.
public struct CurveFitCoefficients: Hashable, Sendable, CustomStringConvertible {
    public var c1: Double
    public var c2: Double
    public var c3: Double

    public init(c1: Double, c2: Double, c3: Double) {
        self.c1 = c1
        self.c2 = c2
        self.c3 = c3
    }

    /// Nexus 4/5, the default entry of AltBeacon's `model-distance-calculations.json`
    /// (android-beacon-library@42e672e9).
    public static let nexus5 = CurveFitCoefficients(c1: 0.42093, c2: 6.9476, c3: 0.54992)
    /// Moto X Pro, from the same file (upstream tests it at 3 m: power −49, RSSI −58 → 2.661 m).
    public static let motoXPro = CurveFitCoefficients(c1: 0.9401940951, c2: 6.170094565, c3: 0)
    /// The coefficients Home Assistant's ibeacon-ble uses (the widely copied iPhone-era fit).
    public static let homeAssistant = CurveFitCoefficients(c1: 0.89976, c2: 7.7095, c3: 0.111)

    /// `ratio^10` below 1 (stronger than the 1 m calibration), `c1 · ratio^c2 + c3` from 1.
    public func distance(ratio: Double) -> Double {
        ratio < 1 ? pow(ratio, 10) : c1 * pow(ratio, c2) + c3
    }

    public var description: String { "\(c1)/\(c2)/\(c3)" }
}
