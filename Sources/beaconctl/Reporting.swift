#if canImport(Glibc)
    @preconcurrency import Glibc
#endif
import ArgumentParser
import BeacondAPI
import BeaconctlKit

/// How every command ends on a failure: `beaconctl: <message>` on stderr and the documented exit status.
enum Reporting {
    static func run(_ body: () throws(BeaconctlError) -> Void) throws(ExitCode) {
        do {
            try body()
        } catch {
            printError(error.message)
            throw ExitCode(error.exitStatus)
        }
    }

    /// `run` for the commands that talk to beacond: connects on `bus` and hands the client to `body`.
    static func withDaemon(_ bus: BusChoice, _ body: (DaemonClient) throws(BeaconctlError) -> Void) throws(ExitCode) {
        try run { () throws(BeaconctlError) in
            try body(try DaemonClient(bus: bus))
        }
    }

    static func printError(_ text: String) {
        fputs("beaconctl: \(UntrustedText.escaped(text))\n", stderr)
    }

    /// Lines for people on stdout (line-buffered: see `BeaconctlCommand.main`). What beaconctl prints comes
    /// largely from beacond, and through it from clients (region identifiers, app ids, messages): control
    /// characters are written out as escapes, so none reaches the terminal (`UntrustedText`).
    static func printLines(_ lines: [String]) {
        for line in lines { printLine(line) }
    }

    static func printLine(_ line: String) {
        print(UntrustedText.escaped(line))
    }
}
