import ArgumentParser

struct RangingEvaluation: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "ranging-eval", abstract: "Distance model evaluation.")
    func run() throws { throw ValidationError("not built yet") }
}
