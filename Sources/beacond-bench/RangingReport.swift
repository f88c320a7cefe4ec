import BeaconKit

/// The markdown report of `ranging-eval`: calibration, then error tables.
extension RangingEvaluation {
    static func markdown(
        recordings: [HeraldRecording], powers: [Int], fittedExponents: [Double],
        scores: Scores
    ) -> String {
        var lines: [String] = []
        lines.append("### Recordings and calibration")
        lines.append("")
        lines.append(
            "| recording | receiver | transmitter | rows | stops | distances | "
                + "measured power (median RSSI at 100 cm) | fitted n (from the other recordings) |"
        )
        lines.append("|---|---|---|---:|---:|---|---:|---:|")
        for (index, recording) in recordings.enumerated() {
            let distances = recording.rows.map(\.distance)
            let range = "\(Statistics.format(distances.min() ?? 0))–\(Statistics.format(distances.max() ?? 0)) m"
            lines.append(
                "| \(recording.file) | \(recording.receiver) | \(recording.transmitter) | \(recording.rows.count) "
                    + "| \(recording.stops.count) | \(range) | \(powers[index]) dBm | \(Statistics.format(fittedExponents[index])) |")
        }
        let allBands = Array(bandNames.indices)
        let bandColumns = bandNames + ["all"]
        let bandSets = allBands.map { [$0] } + [allBands]

        for (weighting, equalGroups) in [("each recording weighted equally", true), ("samples pooled", false)] {
            lines.append("")
            lines.append("### Absolute error (m), median / 90th percentile, \(weighting)")
            lines.append("")
            lines += table(columns: bandColumns) { model, filter in
                bandSets.map {
                    Statistics.absoluteMedianAndP90(
                        scores.errors(model: model, filter: filter, bands: $0),
                        equalGroups: equalGroups)
                }
            }
            let counts = bandSets.map { bands in
                scores.errors(model: 0, filter: 0, bands: bands).map { "\($0.count)" }.joined(separator: "+")
            }
            lines.append("| *samples per recording* | | " + counts.joined(separator: " | ") + " |")
        }

        lines.append("")
        lines.append("### Bias: median signed error (estimate − truth, m), each recording weighted equally")
        lines.append("")
        lines += table(columns: bandColumns) { model, filter in
            bandSets.map { Statistics.median(scores.errors(model: model, filter: filter, bands: $0), equalGroups: true) }
        }

        lines.append("")
        lines.append(
            "### Proximity agreement: estimated band = true band (immediate < 0.5 m ≤ near < 3 m ≤ far), "
                + "each recording weighted equally")
        lines.append("")
        let classes: [(String, BeaconProximity?)] = [
            ("all", nil), ("truly immediate", .immediate),
            ("truly near", .near), ("truly far", .far),
        ]
        lines += table(columns: classes.map(\.0)) { model, filter in
            classes.map { _, truth in
                scores.proximityAgreement(model: model, filter: filter, truth: truth)
                    .map { "\(Statistics.format($0 * 100, decimals: 0)) %" } ?? "–"
            }
        }

        lines.append("")
        lines.append("### Absolute error (m) per recording, all distances, median / 90th percentile")
        lines.append("")
        lines += table(columns: recordings.map { "\($0.receiver) (\($0.file))" }) { model, filter in
            scores.errors(model: model, filter: filter, bands: allBands).map {
                Statistics.absoluteMedianAndP90([$0], equalGroups: false)
            }
        }
        lines.append("")
        lines.append("Estimates reported as unknown (−1) and left out of the tables: \(scores.unknown).")
        return lines.joined(separator: "\n") + "\n"
    }

    /// A model × filter table: header, separator and one row per pair.
    private static func table(columns: [String], cells: (_ model: Int, _ filter: Int) -> [String]) -> [String] {
        var lines = [
            "| model | filter | " + columns.joined(separator: " | ") + " |",
            "|---|---|" + String(repeating: "---:|", count: columns.count),
        ]
        for (model, entry) in models(fittedExponent: DistanceModel.defaultPathLossExponent).enumerated() {
            for (filter, filterEntry) in filters.enumerated() {
                lines.append("| \(entry.name) | \(filterEntry.name) | " + cells(model, filter).joined(separator: " | ") + " |")
            }
        }
        return lines
    }
}
