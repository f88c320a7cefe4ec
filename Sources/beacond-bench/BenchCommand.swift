import ArgumentParser

/// `swift run -c release beacond-bench …`: speed and memory figures, and the ranging evaluation.
/// Figures go to docs/performance.md and docs/ranging.md together with the command that made them.
@main
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "beacond-bench",
        abstract: "Benchmarks and evaluations for beacond (run in release mode).",
        subcommands: [
            DecodeBenchmark.self, PipelineBenchmark.self, MemoryBenchmark.self, RangingEvaluation.self, FleetBenchmark.self,
            MQTTFlood.self, CaptureGenerator.self, PresenceEvaluation.self, RadioEvaluation.self, PositionEvaluation.self, LocateBenchmark.self,
            KindsBenchmark.self, FloorsEvaluation.self,
        ])
}
