import Foundation

/// The radio of a real place, fitted to a survey (rows of a tag's RSSI at every receiver with its true position), so
/// that simulated walks read like real ones: what the simulator's plain model (log-distance, independent Gaussian
/// noise each reading, independent losses) lacked when it said 91–99 % right room and the real flat said 61 %.
///
/// An RSSI is `receiverPower[r] − 10·n·log10(d) − wallLoss·walls + headingGain·cos(θ) + room + place + fading + noise`:
/// - `receiverPower`: each receiver's RSSI at one metre from this tag (its hardware offset and the tag's power);
/// - `walls`: the room walls the straight line to the receiver crosses;
/// - `θ`: the angle between where the carrier faces and the receiver (a body between tag and receiver costs
///   `2·headingGain` dB front to back);
/// - `room`: what each receiver hears of each room beyond its walls (furniture, the walls' material, the receiver's
///   antenna pattern), one bias per receiver and room (`roomBias` where fitted, else drawn with spread `room`): on
///   the real flat a receiver hears one room 4 dB louder and another 4 dB quieter than distance and walls say, and a
///   room rule lives on exactly that difference;
/// - `place`: shadowing bound to where the tag is (multipath, furniture), the same each time the tag is back at a
///   spot, correlated over `placeScale` metres (a Gaussian kernel);
/// - `fading`: slow change in time at one spot (people, doors), correlated over `fadingTime` seconds;
/// - `noise`: independent each reading.
/// Misses come in runs: a receiver misses a reading with `missRate`, and again right after a miss with `missRepeat`.
public struct SurveyRadio: Hashable, Sendable {
    public var receiverPower: [Double]
    public var pathLossExponent: Double
    public var wallLoss: Double
    public var headingGain: Double
    /// Each receiver's bias per room, dB, where the fit had enough readings to say (nil: drawn from `room`).
    public var roomBias: [[Double?]]
    /// Standard deviations, dB.
    public var room: Double
    public var place: Double
    public var fading: Double
    public var noise: Double
    public var placeScale: Double
    public var fadingTime: Double
    public var missRate: [Double]
    public var missRepeat: [Double]

    public init(
        receiverPower: [Double], pathLossExponent: Double, wallLoss: Double, headingGain: Double, roomBias: [[Double?]],
        room: Double, place: Double, fading: Double, noise: Double, placeScale: Double, fadingTime: Double,
        missRate: [Double], missRepeat: [Double]
    ) {
        self.receiverPower = receiverPower
        self.pathLossExponent = pathLossExponent
        self.wallLoss = wallLoss
        self.headingGain = headingGain
        self.roomBias = roomBias
        self.room = room
        self.place = place
        self.fading = fading
        self.noise = noise
        self.placeScale = placeScale
        self.fadingTime = fadingTime
        self.missRate = missRate
        self.missRepeat = missRepeat
    }

    /// Every residual's standard deviation: `room`, `place`, `fading` and `noise` together.
    public var spread: Double { (room * room + place * place + fading * fading + noise * noise).squareRoot() }

    /// The chance of a miss after a reading that came, so that misses come at `missRate` in runs of `missRepeat`.
    public func missOnset(_ receiver: Int) -> Double {
        let rate = missRate[receiver]
        return rate >= 1 ? 1 : rate * (1 - missRepeat[receiver]) / (1 - rate)
    }

    /// The RSSI the model expects, before the random parts.
    public func expected(receiver: Int, distance: Double, walls: Int, facing: Double) -> Double {
        receiverPower[receiver] - 10 * pathLossExponent * log10(max(distance, 0.1)) - wallLoss * Double(walls)
            + headingGain * facing
    }
}

extension SurveyFlat {
    /// The walls the straight line from (x, y) to `receiver` crosses: each change from one room's box to another's,
    /// sampled every 10 cm; the gaps between boxes (wall thickness, doorways) are not walls of their own.
    public func walls(x: Double, y: Double, to receiver: Int) -> Int {
        let target = receivers[receiver]
        let steps = max(1, Int((((target.x - x) * (target.x - x) + (target.y - y) * (target.y - y)).squareRoot() / 0.1).rounded(.up)))
        var previous = room(x: x, y: y)
        var crossings = 0
        for step in 1...steps {
            let fraction = Double(step) / Double(steps)
            guard let current = room(x: x + (target.x - x) * fraction, y: y + (target.y - y) * fraction) else { continue }
            if let previous, previous != current { crossings += 1 }
            previous = current
        }
        return crossings
    }

    /// The room whose box holds (x, y), or the nearest box from a doorway or wall between boxes.
    public func nearestRoom(x: Double, y: Double) -> Int {
        func apart(_ room: Room) -> Double {
            let dx = max(room.x0 - x, 0, x - room.x1)
            let dy = max(room.y0 - y, 0, y - room.y1)
            return dx * dx + dy * dy
        }
        return rooms.indices.min { apart(rooms[$0]) < apart(rooms[$1]) } ?? 0
    }

    /// cos of the angle between the robot's heading at `row` and the direction to `receiver`: 1 facing it, −1 with
    /// its back to it.
    public func facing(_ row: Row, _ receiver: Int) -> Double {
        let target = receivers[receiver]
        return cos(atan2(target.y - row.y, target.x - row.x) - row.heading)
    }

    /// The radio fitted on the rows `range`: the deterministic part by least squares over every reading, then the
    /// residuals split by where and when they repeat:
    /// - `room`: the spread of each receiver's mean residual per room (rooms it heard at least 50 times there);
    ///   those means are taken out before the rest is split;
    /// - `place`: the correlation of two readings at one spot (within 20 cm) taken over two minutes apart, when
    ///   fading has long forgotten the first; `placeScale` from how that correlation falls at 0.5–1 m apart;
    /// - `noise`: what one row does not share with the next (a third of a second later, a few cm away);
    /// - `fading`: the rest, its time from the correlation at one spot 2–20 s apart.
    public func radio(fittedOn range: some Collection<Int>) -> SurveyRadio {
        let count = receivers.count
        // Per reading: receiver, distance term, walls, facing, rssi.
        var normal = Array(repeating: Array(repeating: 0.0, count: count + 3), count: count + 3)
        var right = Array(repeating: 0.0, count: count + 3)
        var geometry: [[(logDistance: Double, walls: Int, facing: Double)]] = []
        for index in range {
            let row = rows[index]
            var terms: [(Double, Int, Double)] = []
            for receiver in 0..<count {
                let term = (-10 * log10(max(distance(row, to: receiver), 0.1)), walls(x: row.x, y: row.y, to: receiver), facing(row, receiver))
                terms.append(term)
                guard let rssi = row.rssi[receiver] else { continue }
                var design = Array(repeating: 0.0, count: count + 3)
                design[receiver] = 1
                design[count] = term.0
                design[count + 1] = -Double(term.1)
                design[count + 2] = term.2
                for a in design.indices where design[a] != 0 {
                    right[a] += design[a] * rssi
                    for b in design.indices where design[b] != 0 { normal[a][b] += design[a] * design[b] }
                }
            }
            geometry.append(terms)
        }
        let solution = Self.solve(normal, right)
        var radio = SurveyRadio(
            receiverPower: Array(solution[0..<count]), pathLossExponent: solution[count], wallLoss: solution[count + 1],
            headingGain: solution[count + 2], roomBias: [], room: 0, place: 0, fading: 0, noise: 0, placeScale: 1, fadingTime: 10,
            missRate: [], missRepeat: [])
        var residuals: [[Double?]] = range.enumerated().map { offset, index in
            (0..<count).map { receiver in
                guard let rssi = rows[index].rssi[receiver] else { return nil }
                let term = geometry[offset][receiver]
                return rssi
                    - (radio.receiverPower[receiver] + radio.pathLossExponent * term.logDistance - radio.wallLoss * Double(term.walls)
                        + radio.headingGain * term.facing)
            }
        }
        let judged = range.map { rows[$0] }
        // Each receiver's bias per room: the mean residual of the rows whose nearest room it is.
        let roomOf = judged.map { nearestRoom(x: $0.x, y: $0.y) }
        var biases = Array(repeating: Array(repeating: Correlation(), count: rooms.count), count: count)
        for (row, residual) in residuals.enumerated() {
            for (receiver, value) in residual.enumerated() { if let value { biases[receiver][roomOf[row]].add(value, 1) } }
        }
        var roomSpread = Correlation()
        for receiver in 0..<count { for bias in biases[receiver] where bias.count >= 50 { roomSpread.add(bias.mean, bias.mean) } }
        radio.room = roomSpread.mean.squareRoot()
        radio.roomBias = biases.map { $0.map { $0.count >= 50 ? $0.mean : nil } }
        residuals = residuals.enumerated().map { row, residual in
            residual.enumerated().map { receiver, value in
                let bias = biases[receiver][roomOf[row]]
                return value.map { bias.count >= 50 ? $0 - bias.mean : $0 }
            }
        }
        var total = Correlation()
        for residual in residuals { for value in residual { if let value { total.add(value, value) } } }
        let variance = total.mean
        // Pairs of rows by distance apart and time apart, each receiver's residuals multiplied.
        var samePlaceLater = Correlation()
        var nearbyLater = Correlation()
        var samePlaceSoon = Correlation()
        var nextRow = Correlation()
        for a in judged.indices {
            for b in (a + 1)..<judged.count {
                let apart = ((judged[a].x - judged[b].x) * (judged[a].x - judged[b].x) + (judged[a].y - judged[b].y) * (judged[a].y - judged[b].y))
                    .squareRoot()
                guard apart < 1 else { continue }
                let later = judged[b].clock - judged[a].clock
                for receiver in 0..<count {
                    guard let first = residuals[a][receiver], let second = residuals[b][receiver] else { continue }
                    if b == a + 1, later < Self.longestRowGap { nextRow.add(first, second) }
                    if later > 120 {
                        if apart < 0.2 { samePlaceLater.add(first, second) } else if apart >= 0.5 { nearbyLater.add(first, second, weight: apart) }
                    } else if apart < 0.2, later > 2, later < 20 {
                        samePlaceSoon.add(first, second, weight: later)
                    }
                }
            }
        }
        let placeShare = min(max(samePlaceLater.mean / variance, 0), 1)
        let nextShare = min(max(nextRow.mean / variance, placeShare), 1)
        let fadingShare = nextShare - placeShare
        radio.place = (placeShare * variance).squareRoot()
        radio.fading = (fadingShare * variance).squareRoot()
        radio.noise = ((1 - nextShare) * variance).squareRoot()
        // exp(−d²/2ℓ²) of the place correlation at the pairs' mean distance.
        let placeFall = min(max(nearbyLater.mean / max(samePlaceLater.mean, 1e-9), 0.01), 0.99)
        radio.placeScale = nearbyLater.meanWeight / (-2 * log(placeFall)).squareRoot()
        let fadingFall = min(max((samePlaceSoon.mean / variance - placeShare) / max(fadingShare, 1e-9), 0.01), 0.99)
        radio.fadingTime = samePlaceSoon.meanWeight / -log(fadingFall)
        for receiver in 0..<count {
            let missed = judged.map { $0.rssi[receiver] == nil }
            let misses = missed.count { $0 }
            let repeats = zip(missed, missed.dropFirst()).count { $0 && $1 }
            radio.missRate.append(Double(misses) / Double(max(missed.count, 1)))
            radio.missRepeat.append(misses > 0 ? Double(repeats) / Double(misses) : 0)
        }
        return radio
    }

    /// The rows `range` with their RSSIs made by `radio` instead of the receivers: the same drive, positions and
    /// times, read through the model. Seeded: the same radio and seed give the same rows.
    public func simulated(_ range: some Collection<Int>, radio: SurveyRadio, seed: UInt64) -> SurveyFlat {
        var random = SeededRandom(seed: seed)
        var copy = self
        let roomOf = rows.map { nearestRoom(x: $0.x, y: $0.y) }
        for receiver in receivers.indices {
            let biases = rooms.indices.map { room in
                let drawn = random.gaussian() * radio.room
                return radio.roomBias.isEmpty ? drawn : radio.roomBias[receiver][room] ?? drawn
            }
            let place = PlaceShadowing(scale: radio.placeScale, spread: radio.place, random: &random)
            var fading = random.gaussian() * radio.fading
            var missing = false
            var previous: Double?
            for index in range {
                let row = rows[index]
                if let previous {
                    let kept = exp(-(row.time - previous) / radio.fadingTime)
                    fading = fading * kept + random.gaussian() * radio.fading * (1 - kept * kept).squareRoot()
                }
                previous = row.time
                missing = random.uniform(in: 0..<1) < (missing ? radio.missRepeat[receiver] : radio.missOnset(receiver))
                copy.rows[index].rssi[receiver] =
                    missing
                    ? nil
                    : radio.expected(
                        receiver: receiver, distance: distance(row, to: receiver), walls: walls(x: row.x, y: row.y, to: receiver),
                        facing: facing(row, receiver)) + biases[roomOf[index]] + place.value(x: row.x, y: row.y) + fading + random.gaussian()
                        * radio.noise
            }
        }
        return copy
    }

    /// Gaussian elimination with partial pivoting: the normal equations are small (receivers + 3) and well posed
    /// when every receiver heard the tag.
    static func solve(_ matrix: [[Double]], _ vector: [Double]) -> [Double] {
        var a = matrix
        var b = vector
        let n = b.count
        for column in 0..<n {
            let pivot = (column..<n).max { abs(a[$0][column]) < abs(a[$1][column]) } ?? column
            a.swapAt(column, pivot)
            b.swapAt(column, pivot)
            guard abs(a[column][column]) > 1e-12 else { continue }
            for row in (column + 1)..<n {
                let factor = a[row][column] / a[column][column]
                guard factor != 0 else { continue }
                for k in column..<n { a[row][k] -= factor * a[column][k] }
                b[row] -= factor * b[column]
            }
        }
        var x = Array(repeating: 0.0, count: n)
        for row in stride(from: n - 1, through: 0, by: -1) {
            let sum = ((row + 1)..<n).reduce(b[row]) { $0 - a[row][$1] * x[$1] }
            x[row] = abs(a[row][row]) > 1e-12 ? sum / a[row][row] : 0
        }
        return x
    }
}

/// A mean of products, with a weighted mean of what each pair was weighted by (its distance or time apart).
private struct Correlation {
    var sum = 0.0
    var count = 0
    var weights = 0.0

    mutating func add(_ a: Double, _ b: Double, weight: Double = 0) {
        sum += a * b
        count += 1
        weights += weight
    }

    var mean: Double { count > 0 ? sum / Double(count) : 0 }
    var meanWeight: Double { count > 0 ? weights / Double(count) : 0 }
}

/// A Gaussian random field over the floor with covariance `spread²·exp(−d²/2·scale²)`, drawn as a sum of random
/// plane waves (random Fourier features): smooth, the same value each time a spot is visited, seeded.
struct PlaceShadowing {
    static let waves = 128
    var directions: [(x: Double, y: Double, phase: Double)]
    var amplitude: Double

    init(scale: Double, spread: Double, random: inout SeededRandom) {
        directions = (0..<Self.waves).map { _ in
            (random.gaussian() / scale, random.gaussian() / scale, random.uniform(in: 0..<(2 * Double.pi)))
        }
        amplitude = spread * (2 / Double(Self.waves)).squareRoot()
    }

    func value(x: Double, y: Double) -> Double {
        amplitude * directions.reduce(0) { $0 + cos($1.x * x + $1.y * y + $1.phase) }
    }
}
