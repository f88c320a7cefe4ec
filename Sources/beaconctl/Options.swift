public import ArgumentParser
import BeaconctlKit
public import DBus
import Foundation

extension DBusBusAddress: ExpressibleByArgument {
    public init?(argument: String) { self.init(parsing: argument) }
}

/// `--bus`, shared by every command.
struct BusOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The bus beacond is on: system, session, or a D-Bus address (unix:path=…). "
                + "Default: $\(BusChoice.environmentVariable) if set, else system.",
            valueName: "system|session|ADDRESS"))
    var bus: DBusBusAddress?

    var choice: BusChoice {
        BusChoice.resolve(option: bus, environment: ProcessInfo.processInfo.environment)
    }
}

/// `--json`, for the commands that print data.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print JSON for scripts (keys as in the D-Bus API; see `beaconctl --help`).")
    var json = false
}

extension ParsableCommand {
    /// The bus to use: this command's `--bus`, else the root's (`beaconctl --bus X status`), else the default.
    static func busChoice(_ own: BusOptions, parent: BusOptions?) -> BusChoice {
        if own.bus == nil, let parent, parent.bus != nil { return parent.choice }
        return own.choice
    }
}
