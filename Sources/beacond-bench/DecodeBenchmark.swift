import ArgumentParser

struct DecodeBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "decode", abstract: "Decode throughput.")
    func run() throws { throw ValidationError("not built yet") }
}
