import Dispatch
import Foundation
import TestKit
import Synchronization

/// The built `beaconctl` binary, run as a user or script would.
enum CLI {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    struct Run {
        var status: Int32
        var stdout: String
        var stderr: String
        var lines: [String] { stdout.split(separator: "\n").map(String.init) }
    }

    /// The test bundle sits next to the products in the build directory.
    static func url() throws -> URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("beaconctl")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        let fallback = packageRoot.appendingPathComponent(".build/debug/beaconctl")
        guard FileManager.default.isExecutableFile(atPath: fallback.path) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "beaconctl binary (build first)"])
        }
        return fallback
    }

    /// Starts `beaconctl arguments…` with `BEACOND_BUS` taken from `environment` only (never inherited).
    static func start(_ arguments: [String], environment: [String: String] = [:]) throws -> Live {
        try Live(arguments, environment: environment)
    }

    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Run {
        try start(arguments, environment: environment).finish()
    }

    /// A running beaconctl: read its stdout line by line, signal it, then collect the rest.
    final class Live: @unchecked Sendable {
        let process = Process()
        private let output = Pipe()
        private let errors = Pipe()
        private var buffer = Data()
        private var consumed: [String] = []
        private let errorData = Locked<Data>(Data())
        private let errorDone = DispatchSemaphore(value: 0)

        init(_ arguments: [String], environment: [String: String]) throws {
            process.executableURL = try CLI.url()
            process.arguments = arguments
            var env = ProcessInfo.processInfo.environment
            env["BEACOND_BUS"] = nil
            env.merge(environment) { $1 }
            process.environment = env
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            // A broken beaconctl must fail its test, not hang the suite: SIGKILL (status 9) after a minute.
            let pid = process.processIdentifier
            let process = self.process
            DispatchQueue.global().asyncAfter(deadline: .now() + 60) {
                if process.isRunning { kill(pid, SIGKILL) }
            }
            let handle = errors.fileHandleForReading
            let errorData = self.errorData, errorDone = self.errorDone
            Thread.detachNewThread {
                let data = handle.readDataToEndOfFile()
                errorData.withLock { $0 = data }
                errorDone.signal()
            }
        }

        /// The next stdout line, or nil at end of output.
        func nextLine() -> String? {
            while true {
                if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                    buffer.removeSubrange(buffer.startIndex...newline)
                    consumed.append(line)
                    return line
                }
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { return nil }
                buffer.append(chunk)
            }
        }

        /// Reads lines until one contains `text` (nil if output ends first).
        func line(containing text: String) -> String? {
            while let line = nextLine() {
                if line.contains(text) { return line }
            }
            return nil
        }

        func signal(_ number: Int32) {
            kill(process.processIdentifier, number)
        }

        /// Waits for exit; stdout holds every line, including those already read.
        func finish() -> Run {
            let rest = output.fileHandleForReading.readDataToEndOfFile()
            errorDone.wait()
            process.waitUntilExit()
            let tail = String(decoding: buffer + rest, as: UTF8.self)
            let stdout = consumed.map { $0 + "\n" }.joined() + tail
            return Run(
                status: process.terminationStatus, stdout: stdout,
                stderr: errorData.withLock { String(decoding: $0, as: UTF8.self) })
        }
    }
}
