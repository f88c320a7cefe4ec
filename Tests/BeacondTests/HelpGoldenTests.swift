import Foundation
import Testing

/// Every `--help` of beacond and beaconctl as an 80-column terminal shows it, compared with the committed
/// rendering in Tests/BeacondTests/Golden (paragraphs are wrapped by the argument parser; only examples and
/// tables are laid out by hand, under 80 columns). After changing a help text on purpose, regenerate with
/// `BEACOND_UPDATE_GOLDEN=1 swift test --filter HelpGoldenTests` and read the diff.
@Suite("--help at 80 columns")
struct HelpGoldenTests {
    static let golden = ReplayCLITests.packageRoot.appendingPathComponent("Tests/BeacondTests/Golden")

    static let helps: [(tool: String, arguments: [String])] =
        [
            ("beacond", []), ("beacond", ["replay"]),
        ]
        + [
            "", "status", "beacons", "regions", "clients", "events", "auth", "auth list", "auth grant", "auth deny",
            "auth reset", "services", "doctor", "client", "calibrate", "devices", "devices list", "devices import",
            "floorplan", "floorplan import",
        ].map { ("beaconctl", $0.split(separator: " ").map(String.init)) }

    static func binary(_ tool: String) throws -> URL {
        try ReplayCLITests.beacondURL().deletingLastPathComponent().appendingPathComponent(tool)
    }

    static func render(_ tool: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = try binary(tool)
        process.arguments = arguments + ["--help"]
        process.environment = ["COLUMNS": "80", "PATH": "/usr/bin:/bin"]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// A line wrapped by hand and then again by the parser leaves a short tail at column 0 right after a full
    /// line ("... 2001 (Linux" / "monitor: btmon -w)"); a paragraph the parser wrapped never does.
    static func raggedBreaks(_ text: String) -> [String] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        return zip(lines, lines.dropFirst()).compactMap { line, next in
            guard !line.hasPrefix("USAGE:"), line.count >= 70, !next.isEmpty, !next.hasPrefix(" "), next.count < 40,
                !next.hasSuffix("."), !next.hasSuffix(":")
            else { return nil }
            return line + " / " + next
        }
    }

    /// The subcommands a help lists under SUBCOMMANDS (one per line at two spaces, the description after it).
    static func subcommands(_ text: String) -> [String] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(of: "SUBCOMMANDS:") else { return [] }
        return lines[(start + 1)...].prefix { !$0.isEmpty }.compactMap { line in
            guard line.hasPrefix("  "), !line.hasPrefix("   ") else { return nil }
            return line.split(separator: " ").first.map(String.init)
        }
    }

    /// What keeps a help from being read and copied at 80 columns: a line wider than 80 (USAGE included), and an
    /// example the parser broke in the middle of a command (its tail lands at column 0 inside the example block,
    /// which runs from a line `Example…:` to the next empty line and whose lines are all indented).
    static func eightyColumnProblems(_ text: String) -> [String] {
        var problems: [String] = []
        var inExample = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.count > 80 { problems.append("\(line.count) columns: \(line)") }
            if line.isEmpty {
                inExample = false
            } else if line.hasPrefix("Example"), line.hasSuffix(":") {
                inExample = true
            } else if inExample, !line.hasPrefix("  ") {
                problems.append("an example broken mid-command: \(line)")
            }
        }
        return problems
    }

    @Test func eightyColumnProblemsAreFound() {
        let broken = "Example:\n  beaconctl regions --json | jq '.[] | select(.State == \"inside\") |\n.Identifier'\n\nUSAGE: x"
        #expect(Self.eightyColumnProblems(broken) == ["an example broken mid-command: .Identifier'"])
        let wide = "USAGE: beaconctl " + String(repeating: "[--x] ", count: 12)
        #expect(Self.eightyColumnProblems(wide).count == 1)
        #expect(Self.eightyColumnProblems("Examples:\n  a \\\n      b\n\nno example here, at column 0").isEmpty)
    }

    @Test("every command's --help, found by walking SUBCOMMANDS from beacond and beaconctl, fits 80 columns")
    func everyHelpFitsEightyColumns() throws {
        var pending: [[String]] = [["beacond"], ["beaconctl"]]
        var walked: [[String]] = []
        while let command = pending.popLast() {
            walked.append(command)
            let text = try Self.render(command[0], Array(command.dropFirst()))
            let problems = Self.eightyColumnProblems(text)
            #expect(problems.isEmpty, "\(command.joined(separator: " ")) --help at 80 columns: \(problems)")
            pending += Self.subcommands(text).filter { $0 != "help" }.map { command + [$0] }
        }
        // The golden renderings cover every command there is.
        #expect(
            Set(walked.map { $0.joined(separator: " ") })
                == Set(Self.helps.map { ([$0.tool] + $0.arguments).joined(separator: " ") }))
    }

    @Test(
        "each help matches its golden rendering, and no line but USAGE is wider than 80 columns",
        arguments: helps.map { [$0.tool] + $0.arguments })
    func help(_ command: [String]) throws {
        let text = try Self.render(command[0], Array(command.dropFirst()))
        let name = command.joined(separator: "-") + ".txt"
        let file = Self.golden.appendingPathComponent(name)
        if ProcessInfo.processInfo.environment["BEACOND_UPDATE_GOLDEN"] != nil {
            try FileManager.default.createDirectory(at: Self.golden, withIntermediateDirectories: true)
            try text.write(to: file, atomically: true, encoding: .utf8)
        }
        let wide = text.split(separator: "\n").filter { !$0.hasPrefix("USAGE:") && $0.count > 80 }
        #expect(wide.isEmpty, "lines wider than 80 columns in \(command.joined(separator: " ")) --help: \(wide)")
        #expect(
            Self.raggedBreaks(text).isEmpty,
            "\(command.joined(separator: " ")) --help has hand-wrapped lines the parser broke again: \(Self.raggedBreaks(text))")
        let expected = try String(contentsOf: file, encoding: .utf8)
        #expect(text == expected, "\(command.joined(separator: " ")) --help differs from \(file.path)")
    }
}
