import Foundation

/// Positions on the real flat from the survey's rows, by the methods a locator must beat (issue 41, "Where on the
/// floor plan"): each judged row's position from that row's RSSIs alone, by a model fitted on other rows.
public enum PositionBaseline: String, CaseIterable, Sendable {
    /// The loudest receiver's own place.
    case strongestReceiver = "strongest receiver (its place)"
    /// Log-distance distances (each receiver's RSSI at 1 m and one exponent, fitted on the other rows), then the
    /// point whose distances fit them best in log terms, by least squares.
    case multilateration = "least-squares multilateration (log-distance fitted)"
    /// The mean position of the five fitted rows whose RSSIs are nearest (a miss counts as −100 dBm).
    case fingerprint = "kNN-5 fingerprint (other rows, 15 s apart, as the map)"
}

/// Where each judged row was put, against where the robot was.
public struct PositionTrack: Sendable {
    public var rows: [Int]
    public var estimates: [(x: Double, y: Double)]

    /// Metres from each estimate to the robot.
    public func errors(on survey: SurveyFlat) -> [Double] {
        zip(rows, estimates).map { row, estimate in
            let truth = survey.rows[row]
            return ((truth.x - estimate.x) * (truth.x - estimate.x) + (truth.y - estimate.y) * (truth.y - estimate.y)).squareRoot()
        }
    }
}

/// Error and room figures of one method on one set of judged rows.
public struct PositionScore: Sendable {
    public var method: String
    public var errors: [Double]
    /// Judged rows in a room's box, and of those the ones whose estimate is in that room.
    public var inRoom: Int
    public var rightRoom: Int
    /// Changes of the estimated room and of the true room between consecutive judged rows of one stretch.
    public var roomChanges: Int
    public var trueRoomChanges: Int

    public var median: Double { PresenceScore.quantile(0.5, of: errors) ?? .nan }
    public var p95: Double { PresenceScore.quantile(0.95, of: errors) ?? .nan }
    public var rightRoomRate: Double { inRoom == 0 ? 0 : Double(rightRoom) / Double(inRoom) }
    /// Room changes per true room change: 1 follows every change once; more is flapping.
    public var changesPerTrueChange: Double { trueRoomChanges == 0 ? .nan : Double(roomChanges) / Double(trueRoomChanges) }

    /// Two scores' rows together.
    public static func + (a: PositionScore, b: PositionScore) -> PositionScore {
        PositionScore(
            method: a.method, errors: a.errors + b.errors, inRoom: a.inRoom + b.inRoom, rightRoom: a.rightRoom + b.rightRoom,
            roomChanges: a.roomChanges + b.roomChanges, trueRoomChanges: a.trueRoomChanges + b.trueRoomChanges)
    }
}

extension SurveyFlat {
    /// Where `method`, fitted on the rows `fitted`, puts each of the rows `judged`.
    public func locate(_ judged: [Int], by method: PositionBaseline, fittedOn fitted: [Int]) -> PositionTrack {
        switch method {
        case .strongestReceiver:
            return PositionTrack(
                rows: judged,
                estimates: judged.map { row in
                    let loudest = rows[row].rssi.indices.max { (rows[row].rssi[$0] ?? -200) < (rows[row].rssi[$1] ?? -200) } ?? 0
                    return (receivers[loudest].x, receivers[loudest].y)
                })
        case .multilateration:
            let curves = distanceCurves(fittedOn: fitted)
            return PositionTrack(rows: judged, estimates: judged.map { multilaterate(rows[$0].rssi, curves: curves) })
        case .fingerprint:
            // Rows next in time to a judged one share its spot and its fading: the map keeps none within
            // `fingerprintGuard` seconds of a judged row, as a map made on another day would.
            let map = mapRows(fitted, awayFrom: judged).map { (vector: fingerprint(rows[$0].rssi), x: rows[$0].x, y: rows[$0].y) }
            return PositionTrack(rows: judged, estimates: judged.map { Self.nearestMean(fingerprint(rows[$0].rssi), in: map, count: 5) })
        }
    }

    /// The rows of `fitted` no closer than `fingerprintGuard` seconds to any of `judged`.
    func mapRows(_ fitted: [Int], awayFrom judged: [Int]) -> [Int] {
        let judgedTimes = judged.map { rows[$0].time }.sorted()
        return fitted.filter { row in
            let time = rows[row].time
            let after = judgedTimes.partitionPoint { $0 < time }
            let nearest = [after - 1, after].filter { judgedTimes.indices.contains($0) }.map { abs(judgedTimes[$0] - time) }.min()
            return (nearest ?? .infinity) > Self.fingerprintGuard
        }
    }

    /// The mean place of the `count` map entries nearest `vector` by RSSI (kept sorted in a short list: the map has a
    /// few thousand rows).
    static func nearestMean(_ vector: [Double], in map: [(vector: [Double], x: Double, y: Double)], count: Int) -> (x: Double, y: Double) {
        var nearest: [(distance: Double, x: Double, y: Double)] = []
        for entry in map {
            var distance = 0.0
            for (a, b) in zip(vector, entry.vector) { distance += (a - b) * (a - b) }
            guard nearest.count < count || distance < nearest[count - 1].distance else { continue }
            nearest.append((distance, entry.x, entry.y))
            nearest.sort { $0.distance < $1.distance }
            if nearest.count > count { nearest.removeLast() }
        }
        let found = Double(max(nearest.count, 1))
        return (nearest.reduce(0) { $0 + $1.x } / found, nearest.reduce(0) { $0 + $1.y } / found)
    }

    /// The fingerprint mode tried for a survey: every row's RSSIs smoothed over `smoothing` seconds as the locator
    /// smooths them (exponential in dB; a receiver unheard for 10 s reads −100), and kNN-`count` over the map's
    /// smoothed rows. The map is the fitted rows `fingerprintGuard` seconds from every judged row.
    public func locateBySmoothedFingerprint(_ judged: [Int], fittedOn fitted: [Int], smoothing: Double = 4, count: Int = 5) -> PositionTrack {
        var smoothed: [[Double]] = []
        var state = receivers.map { _ in (rssi: -100.0, time: -Double.infinity) }
        for row in rows {
            for (receiver, reading) in row.rssi.enumerated() {
                guard let reading else { continue }
                let elapsed = row.time - state[receiver].time
                if elapsed > 10 {
                    state[receiver] = (reading, row.time)
                } else {
                    let weight = 1 - exp(-max(elapsed, 0) / smoothing)
                    state[receiver] = (state[receiver].rssi + weight * (reading - state[receiver].rssi), row.time)
                }
            }
            smoothed.append(state.map { row.time - $0.time > 10 ? -100 : $0.rssi })
        }
        let map = mapRows(fitted, awayFrom: judged).map { (vector: smoothed[$0], x: rows[$0].x, y: rows[$0].y) }
        return PositionTrack(rows: judged, estimates: judged.map { Self.nearestMean(smoothed[$0], in: map, count: count) })
    }

    func fingerprint(_ rssi: [Double?]) -> [Double] { rssi.map { $0 ?? -100 } }

    /// Seconds of the drive around each judged row that the fingerprint map leaves out.
    public static let fingerprintGuard = 15.0

    /// Each receiver's log-distance curve, RSSI = power − 10·exponent·log10(d), fitted by least squares on the rows
    /// `fitted` against the robot's true distance; a receiver whose own exponent comes out below 1 (RSSI that barely
    /// falls with distance) takes the exponent of all receivers together, with its own power.
    public func distanceCurves(fittedOn fitted: [Int]) -> [(power: Double, exponent: Double)] {
        func line(_ points: [(x: Double, y: Double)]) -> (intercept: Double, slope: Double) {
            let count = Double(max(points.count, 1))
            let (meanX, meanY) = (points.reduce(0) { $0 + $1.x } / count, points.reduce(0) { $0 + $1.y } / count)
            let sxx = points.reduce(0) { $0 + ($1.x - meanX) * ($1.x - meanX) }
            let sxy = points.reduce(0) { $0 + ($1.x - meanX) * ($1.y - meanY) }
            let slope = sxx > 0 ? sxy / sxx : 0
            return (meanY - slope * meanX, slope)
        }
        let points = receivers.indices.map { receiver in
            fitted.compactMap { row -> (x: Double, y: Double)? in
                rows[row].rssi[receiver].map { (-10 * log10(max(distance(rows[row], to: receiver), 0.1)), $0) }
            }
        }
        let shared = radio(fittedOn: fitted).pathLossExponent
        return points.map { points in
            let own = line(points)
            guard own.slope < 1 else { return (own.intercept, own.slope) }
            let count = Double(max(points.count, 1))
            return (points.reduce(0) { $0 + $1.y - shared * $1.x } / count, shared)
        }
    }

    /// The point of the flat whose distances to the receivers best fit those the RSSIs say (least squares on the
    /// logarithm of distance, which is what RSSI measures): a 0.25 m grid over the rooms, then Gauss–Newton, kept
    /// within the rooms' span.
    public func multilaterate(_ rssi: [Double?], curves: [(power: Double, exponent: Double)]) -> (x: Double, y: Double) {
        let heard: [(x: Double, y: Double, z: Double, logDistance: Double)] = rssi.indices.compactMap { index in
            guard let value = rssi[index] else { return nil }
            let logDistance = (curves[index].power - value) / (10 * curves[index].exponent) * log(10)
            let place = receivers[index]
            return (place.x, place.y, place.z - Self.tagHeight, logDistance)
        }
        guard !heard.isEmpty else {
            return (receivers.map(\.x).reduce(0, +) / Double(receivers.count), receivers.map(\.y).reduce(0, +) / Double(receivers.count))
        }
        func cost(_ x: Double, _ y: Double) -> Double {
            heard.reduce(0) { total, receiver in
                let apart = log(
                    max(((x - receiver.x) * (x - receiver.x) + (y - receiver.y) * (y - receiver.y) + receiver.z * receiver.z).squareRoot(), 0.1))
                return total + (apart - receiver.logDistance) * (apart - receiver.logDistance)
            }
        }
        let (minX, maxX) = (rooms.map(\.x0).min() ?? 0, rooms.map(\.x1).max() ?? 0)
        let (minY, maxY) = (rooms.map(\.y0).min() ?? 0, rooms.map(\.y1).max() ?? 0)
        var best = (x: minX, y: minY, cost: Double.infinity)
        var x = minX
        while x <= maxX {
            var y = minY
            while y <= maxY {
                let value = cost(x, y)
                if value < best.cost { best = (x, y, value) }
                y += 0.25
            }
            x += 0.25
        }
        // Gauss–Newton from the grid's best point; a step that does not lower the cost ends it.
        var point = (x: best.x, y: best.y)
        var current = best.cost
        for _ in 0..<10 {
            var (a11, a12, a22, b1, b2) = (0.0, 0.0, 0.0, 0.0, 0.0)
            for receiver in heard {
                let (dx, dy) = (point.x - receiver.x, point.y - receiver.y)
                let squared = max(dx * dx + dy * dy + receiver.z * receiver.z, 0.01)
                let residual = 0.5 * log(squared) - receiver.logDistance
                let (gx, gy) = (dx / squared, dy / squared)
                a11 += gx * gx
                a12 += gx * gy
                a22 += gy * gy
                b1 += gx * residual
                b2 += gy * residual
            }
            let determinant = a11 * a22 - a12 * a12
            guard abs(determinant) > 1e-12 else { break }
            let step = (x: (a22 * b1 - a12 * b2) / determinant, y: (a11 * b2 - a12 * b1) / determinant)
            let next = (x: min(max(point.x - step.x, minX), maxX), y: min(max(point.y - step.y, minY), maxY))
            let value = cost(next.x, next.y)
            guard value < current else { break }
            point = next
            current = value
        }
        return point
    }

    /// `track` scored: errors, right room (the room whose box holds the estimate, or the nearest box) on the rows in
    /// a room's box, and room changes between samples once a second (the first row of each second of the drive, as
    /// `Evaluation` samples the room rules) within a stretch (samples less than two seconds apart).
    /// With `rooms` (one per row of the track; nil: no room), those are the estimated rooms instead.
    public func score(_ track: PositionTrack, method: String, rooms placed: [Int?]? = nil) -> PositionScore {
        var score = PositionScore(method: method, errors: track.errors(on: self), inRoom: 0, rightRoom: 0, roomChanges: 0, trueRoomChanges: 0)
        var previous: (row: Int, estimated: Int?, truth: Int?)?
        for (index, (row, estimate)) in zip(track.rows, track.estimates).enumerated() {
            let estimated = placed.map { $0[index] } ?? nearestRoom(x: estimate.x, y: estimate.y)
            let truth = room(x: rows[row].x, y: rows[row].y)
            if let truth {
                score.inRoom += 1
                if truth == estimated { score.rightRoom += 1 }
            }
            // One sample a second.
            if let last = previous, floor(rows[row].time) == floor(rows[last.row].time) { continue }
            if let last = previous, rows[row].time - rows[last.row].time < 2 {
                if estimated != last.estimated { score.roomChanges += 1 }
                if let truth, let before = last.truth, truth != before { score.trueRoomChanges += 1 }
            }
            previous = (row, estimated, truth ?? previous?.truth)
        }
        return score
    }
}

extension Array {
    /// The first index whose element is not `belongs` (the array partitioned: every `belongs` element first).
    func partitionPoint(_ belongs: (Element) -> Bool) -> Int {
        var (low, high) = (0, count)
        while low < high {
            let middle = (low + high) / 2
            if belongs(self[middle]) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
