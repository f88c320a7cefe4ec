import Foundation

/// How one receiver turns RSSI into distance: an RSSI offset for its hardware and antenna, and the path-loss exponent
/// of the space around it. Receivers differ by 10–20 dB, and an offset alone is right at one distance only (Bermuda
/// #489): a receiver behind a wall loses more per metre, not a fixed amount, so each gets its own exponent too.
///
/// distance = 10^((measuredPower − (rssi + rssiOffset)) / (10 · pathLossExponent))
public struct ReceiverCalibration: Hashable, Sendable, CustomStringConvertible {
    /// dB added to what this receiver reports.
    public var rssiOffset: Double
    /// The log-distance exponent n: 2 in free space, 2.5–3.5 indoors.
    public var pathLossExponent: Double

    /// The exponents accepted: below 1 a signal would grow stronger with distance than free space allows; above 6
    /// is nothing a building does.
    public static let exponentRange = 1.0...6.0
    /// Offsets accepted, dB: receivers differ by 10–20 dB; beyond ±50 it is a mistake.
    public static let offsetRange = -50.0...50.0

    /// No offset, exponent 2.7: ESPresense's default `absorption`, a furnished room's usual exponent.
    public static let uncalibrated = ReceiverCalibration(checkedOffset: 0, exponent: 2.7)

    public init(rssiOffset: Double, pathLossExponent: Double) throws(CalibrationError) {
        guard rssiOffset.isFinite, Self.offsetRange.contains(rssiOffset) else { throw .offsetOutOfRange(rssiOffset) }
        guard pathLossExponent.isFinite, Self.exponentRange.contains(pathLossExponent) else {
            throw .exponentOutOfRange(pathLossExponent)
        }
        self.rssiOffset = rssiOffset
        self.pathLossExponent = pathLossExponent
    }

    private init(checkedOffset: Double, exponent: Double) {
        rssiOffset = checkedOffset
        pathLossExponent = exponent
    }

    /// Metres from a beacon heard at `rssi` dBm that says it is heard at `measuredPower` dBm at one metre; nil when
    /// either is missing, zero (Core Location's "not heard" and "not calibrated") or not finite.
    public func distance(rssi: Double, measuredPower: Double) -> Double? {
        guard rssi.isFinite, rssi != 0, measuredPower.isFinite, measuredPower != 0 else { return nil }
        let distance = pow(10, (measuredPower - (rssi + rssiOffset)) / (10 * pathLossExponent))
        return distance.isFinite ? distance : nil
    }

    public var description: String {
        String(format: "offset %+.1f dB, exponent %.2f", rssiOffset, pathLossExponent)
    }
}

/// A calibration that cannot be used, with what to give instead.
public enum CalibrationError: Error, Hashable, CustomStringConvertible {
    case offsetOutOfRange(Double)
    case exponentOutOfRange(Double)
    case tooFewSamples(Int)
    case oneDistanceOnly(Double)
    case implausibleFit(exponent: Double, offset: Double)

    public var description: String {
        switch self {
        case .offsetOutOfRange(let offset):
            return "RSSI offset \(offset) dB is out of range: give -50 to 50 dB"
        case .exponentOutOfRange(let exponent):
            return "path-loss exponent \(exponent) is out of range: give 1 to 6 (2 in free space, 2.5-3.5 indoors)"
        case .tooFewSamples(let count):
            return "\(count) usable reading(s): a receiver is fitted from reference beacons it hears (one distance fits its "
                + "offset, two or more its exponent too)"
        case .implausibleFit(let exponent, let offset):
            return String(
                format: "the readings give exponent %.2f and offset %+.1f dB, which no receiver has (1 to 6, -50 to 50 dB): "
                    + "check each reference's distance and that it is in the receiver's room, then calibrate again",
                exponent, offset)
        case .oneDistanceOnly(let distance):
            return "every reading is from \(distance) m: the exponent needs reference beacons at two or more "
                + "distances (e.g. 1 m and 4 m)"
        }
    }
}
