import Foundation

/// Order statistics for the evaluation reports.
enum Statistics {
    /// The `p` quantiles (0…1) of values given in groups (one group per recording): the smallest
    /// value whose cumulative weight reaches `p` of the total (the inverse of the weighted empirical
    /// distribution). With `equalGroups` every non-empty group weighs the same in total, so a long
    /// recording does not drown short ones; otherwise every value weighs the same.
    static func quantiles(_ groups: [[Double]], _ ps: [Double], equalGroups: Bool) -> [Double]? {
        var weighted: [(value: Double, weight: Double)] = []
        for group in groups where !group.isEmpty {
            let weight = equalGroups ? 1 / Double(group.count) : 1
            for value in group { weighted.append((value, weight)) }
        }
        guard let largest = weighted.max(by: { $0.value < $1.value })?.value else { return nil }
        weighted.sort { $0.value < $1.value }
        let total = weighted.reduce(0) { $0 + $1.weight }
        return ps.map { p in
            let target = p * total * (1 - 1e-12)
            var cumulative = 0.0
            for entry in weighted {
                cumulative += entry.weight
                if cumulative >= target { return entry.value }
            }
            return largest
        }
    }

    /// `median / p90` of the absolute values, two decimals, or `–` for none.
    static func absoluteMedianAndP90(_ groups: [[Double]], equalGroups: Bool) -> String {
        guard let q = quantiles(groups.map { $0.map(abs) }, [0.5, 0.9], equalGroups: equalGroups) else { return "–" }
        return "\(format(q[0])) / \(format(q[1]))"
    }

    /// The median, two decimals, or `–` for none.
    static func median(_ groups: [[Double]], equalGroups: Bool) -> String {
        quantiles(groups, [0.5], equalGroups: equalGroups).map { format($0[0]) } ?? "–"
    }

    static func format(_ value: Double, decimals: Int = 2) -> String {
        String(format: "%.\(decimals)f", value)
    }
}
