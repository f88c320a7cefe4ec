import Foundation

/// `--json` output of the bench subcommands: pretty, keys sorted so runs diff cleanly.
enum JSONOutput {
    static func print(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        Swift.print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }
}
