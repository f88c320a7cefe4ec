import Foundation

/// One reading of a reference beacon whose distance from the receiver is known.
public struct CalibrationSample: Hashable, Sendable {
    /// Metres between the reference beacon and the receiver.
    public var distance: Double
    /// What the receiver reported (smoothed), dBm.
    public var rssi: Double
    /// The reference beacon's RSSI at one metre (its measured power, or its override).
    public var measuredPower: Double

    public init(distance: Double, rssi: Double, measuredPower: Double) {
        self.distance = distance
        self.rssi = rssi
        self.measuredPower = measuredPower
    }
}

/// A receiver's calibration fitted to reference beacons, with how well it fits.
public struct CalibrationFit: Hashable, Sendable {
    public var calibration: ReceiverCalibration
    /// Root mean square of (predicted − reported) RSSI over the samples, dB.
    public var residual: Double
    /// Median of |estimated − true distance| / true distance over the samples, with the fit applied.
    public var medianDistanceError: Double
    public var sampleCount: Int

    /// Least squares on the log-distance model: rssi − power = −offset − 10 · n · log10(distance) is linear in
    /// (offset, n), so the fit is exact arithmetic, no iteration. One distance only cannot separate the two: then
    /// the exponent is `fallbackExponent` and only the offset is fitted, unless `requireExponent`, which throws
    /// `oneDistanceOnly` instead.
    public static func fit(
        _ samples: [CalibrationSample], fallbackExponent: Double = ReceiverCalibration.uncalibrated.pathLossExponent,
        requireExponent: Bool = false
    ) throws(CalibrationError) -> CalibrationFit {
        let usable = samples.filter {
            $0.distance.isFinite && $0.distance > 0 && $0.rssi.isFinite && $0.rssi != 0 && $0.measuredPower.isFinite
                && $0.measuredPower != 0
        }
        guard !usable.isEmpty else { throw .tooFewSamples(0) }
        // x = −10 · log10(d), y = rssi − power: y = n · x − offset.
        let xs = usable.map { -10 * log10($0.distance) }
        let ys = usable.map { $0.rssi - $0.measuredPower }
        let meanX = xs.reduce(0, +) / Double(xs.count)
        let meanY = ys.reduce(0, +) / Double(ys.count)
        let spread = zip(xs, xs).map { ($0 - meanX) * ($1 - meanX) }.reduce(0, +)
        let exponent: Double
        // Distances within a factor 1.5 of one another cannot separate the offset from the exponent: at 1 m and
        // 1.2 m the exponent would come from 0.8 dB of difference, under the noise of any reading.
        let distances = usable.map(\.distance)
        if let nearest = distances.min(), let farthest = distances.max(), farthest / nearest < 1.5 {
            if requireExponent { throw .oneDistanceOnly(usable[0].distance) }
            exponent = fallbackExponent
        } else {
            exponent = zip(xs, ys).map { ($0 - meanX) * ($1 - meanY) }.reduce(0, +) / spread
        }
        let offset = exponent * meanX - meanY
        guard ReceiverCalibration.exponentRange.contains(exponent), ReceiverCalibration.offsetRange.contains(offset) else {
            throw .implausibleFit(exponent: exponent, offset: offset)
        }
        let calibration = try ReceiverCalibration(rssiOffset: offset, pathLossExponent: exponent)
        let squares = zip(xs, ys).map { x, y in (exponent * x - offset - y) * (exponent * x - offset - y) }
        let errors = usable.compactMap { sample in
            calibration.distance(rssi: sample.rssi, measuredPower: sample.measuredPower).map { abs($0 - sample.distance) / sample.distance }
        }.sorted()
        return CalibrationFit(
            calibration: calibration, residual: (squares.reduce(0, +) / Double(squares.count)).squareRoot(),
            medianDistanceError: errors.isEmpty ? 0 : errors[errors.count / 2], sampleCount: usable.count)
    }
}

extension CalibrationFit {
    /// Several receivers fitted together: an offset each and one path-loss exponent for all (the within-receiver
    /// regression of the log-distance model). Where each receiver has a few distances only, as receivers hearing
    /// each other do (five others in a flat), a free exponent each follows the noise; one shared by every pair is
    /// steadier (docs/position.md measures both). A receiver with no usable sample gets `tooFewSamples`.
    public static func fitTogether(
        _ samples: [[CalibrationSample]], fallbackExponent: Double = ReceiverCalibration.uncalibrated.pathLossExponent
    ) -> [Result<CalibrationFit, CalibrationError>] {
        let usable = samples.map { group in
            group.filter {
                $0.distance.isFinite && $0.distance > 0 && $0.rssi.isFinite && $0.rssi != 0 && $0.measuredPower.isFinite
                    && $0.measuredPower != 0
            }
        }
        // x = −10 · log10(d), y = rssi − power: y = n · x − offset[receiver].
        let points = usable.map { group in group.map { (x: -10 * log10($0.distance), y: $0.rssi - $0.measuredPower) } }
        let means = points.map { group -> (x: Double, y: Double) in
            group.isEmpty
                ? (0, 0) : (group.map(\.x).reduce(0, +) / Double(group.count), group.map(\.y).reduce(0, +) / Double(group.count))
        }
        var spread = 0.0
        var covariance = 0.0
        for (index, (group, mean)) in zip(points, means).enumerated() {
            // As `fit`: a receiver whose distances lie within a factor 1.5 of each other says nothing of the
            // exponent (its differences are under the noise), only of its offset.
            let distances = usable[index].map(\.distance)
            guard let nearest = distances.min(), let farthest = distances.max(), farthest / nearest >= 1.5 else { continue }
            for point in group {
                spread += (point.x - mean.x) * (point.x - mean.x)
                covariance += (point.x - mean.x) * (point.y - mean.y)
            }
        }
        let exponent = spread > 0 ? covariance / spread : fallbackExponent
        return zip(usable, zip(points, means)).map { group, fitted -> Result<CalibrationFit, CalibrationError> in
            let (points, mean) = fitted
            guard !group.isEmpty else { return .failure(.tooFewSamples(0)) }
            let offset = exponent * mean.x - mean.y
            guard ReceiverCalibration.exponentRange.contains(exponent), ReceiverCalibration.offsetRange.contains(offset) else {
                return .failure(.implausibleFit(exponent: exponent, offset: offset))
            }
            let calibration: ReceiverCalibration
            do throws(CalibrationError) {
                calibration = try ReceiverCalibration(rssiOffset: offset, pathLossExponent: exponent)
            } catch { return .failure(error) }
            let squares = points.map { (exponent * $0.x - offset - $0.y) * (exponent * $0.x - offset - $0.y) }
            let errors = group.compactMap { sample in
                calibration.distance(rssi: sample.rssi, measuredPower: sample.measuredPower).map { abs($0 - sample.distance) / sample.distance }
            }.sorted()
            return .success(
                CalibrationFit(
                    calibration: calibration, residual: (squares.reduce(0, +) / Double(squares.count)).squareRoot(),
                    medianDistanceError: errors.isEmpty ? 0 : errors[errors.count / 2], sampleCount: group.count))
        }
    }
}
