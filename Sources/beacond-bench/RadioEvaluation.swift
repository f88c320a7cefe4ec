import ArgumentParser
import BeaconKit
import Foundation
import PresenceSimulation

/// `beacond-bench radio`: the real flat's radio fitted on each fold of the survey drive's minutes (`SurveyRadio`), and
/// today's rules scored on the other fold as recorded and as simulated along the same path over several seeds: the yardstick
/// of docs/presence.md, "Is the simulator the real flat?".
struct RadioEvaluation: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "radio",
        abstract: "Fit the simulator's radio to the real flat's survey and compare simulated and real scores.",
        discussion: """
            The survey drive's minutes (Tests/Fixtures/flat-calib2021, CC BY 4.0) are split into two interleaved \
            folds. Each fold is judged twice: as recorded, and read through the radio fitted on the other fold \
            along the robot's own path, once per seed; "drive" pools both folds. \
            Run from the repository, or give --survey.
            """)

    @Option(help: "Where the real flat's survey is.")
    var survey = "Tests/Fixtures/flat-calib2021"

    @Option(help: "How many seeds to simulate each fold with (1 to 100).")
    var seeds = 10

    enum Part: String, ExpressibleByArgument, CaseIterable {
        case room, place, fading, noise
        /// The biases per receiver and room fitted on the other fold (drawn at random with the fitted spread instead,
        /// as `RadioEnvironment.realFlat` does).
        case roomFit = "room-fit"
    }

    @Option(
        name: .customLong("without"),
        help: ArgumentHelp(
            "Simulate without a part of the fitted radio, to see what it is worth; repeat for several.",
            discussion: "room-fit draws the biases per receiver and room at random with the fitted spread instead of fitting them."))
    var without: [Part] = []

    func validate() throws {
        guard (1...100).contains(seeds) else { throw ValidationError("--seeds must be 1 to 100") }
    }

    func run() throws {
        let flat = try SurveyFlat.load(directory: survey)
        let (radios, comparisons) = SurveyYardstick.compare(
            flat, seeds: (1...UInt64(seeds)).map { $0 }, monitoring: try PresenceSuite.beacondMonitoring()
        ) { fitted in
            var radio = fitted
            for part in without {
                switch part {
                case .room:
                    radio.room = 0
                    radio.roomBias = []
                case .roomFit: radio.roomBias = []
                case .place: radio.place = 0
                case .fading: radio.fading = 0
                case .noise: radio.noise = 0
                }
            }
            return radio
        }
        let whole = flat.radio(fittedOn: flat.rows.indices)
        for (title, radio) in radios.map({ ("fitted on the \($0.fold == "even" ? "odd" : "even") minutes (judges the \($0.fold) minutes)", $0.radio) }
        )
            + [("fitted on the whole drive (RadioEnvironment.realFlat, for simulated walks)", whole)]
        {
            print("radio \(title):")
            print("  RSSI at 1 m per receiver    " + radio.receiverPower.map { String(format: "%.1f", $0) }.joined(separator: "  ") + " dBm")
            print(String(format: "  path-loss exponent          %.2f", radio.pathLossExponent))
            print(String(format: "  per wall                    %.1f dB", radio.wallLoss))
            print(String(format: "  facing the receiver         %+.1f dB (back turned: %+.1f dB)", radio.headingGain, -radio.headingGain))
            print(
                String(
                    format:
                        "  spread                      %.1f dB: room %.1f dB, place %.1f dB over %.2f m, fading %.1f dB over %.0f s, noise %.1f dB",
                    radio.spread, radio.room, radio.place, radio.placeScale, radio.fading, radio.fadingTime, radio.noise))
            print("  misses per receiver         " + radio.missRate.map { String(format: "%.0f %%", $0 * 100) }.joined(separator: "  "))
            print("  a miss again after a miss   " + radio.missRepeat.map { String(format: "%.0f %%", $0 * 100) }.joined(separator: "  "))
        }
        let parts = without.isEmpty ? "" : ", simulated without " + without.map(\.rawValue).joined(separator: ", ")
        print("\nright room, real against simulated along the same path (\(seeds) seeds\(parts)):")
        print("  minutes rule                                                  real   simulated (range)        difference")
        for row in comparisons {
            print(
                "  " + row.fold.padding(toLength: 8, withPad: " ", startingAt: 0)
                    + row.algorithm.padding(toLength: 52, withPad: " ", startingAt: 0)
                    + String(
                        format: "%6.1f %%  %6.1f %% (%.1f–%.1f)  %+6.1f points", row.real * 100, row.simulatedMean * 100,
                        row.simulatedRange.lowerBound * 100, row.simulatedRange.upperBound * 100, row.difference))
        }
    }
}
