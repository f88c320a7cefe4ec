import BeaconKit
public import DBus
public import BeacondCore

/// Where and how the daemon runs (from `beacond`'s options).
public struct DaemonOptions: Sendable {
    public var bus: DBusBusAddress
    public var configDirectory: String
    public var stateDirectory: String
    /// `--scanner`: overrides `[scanner] source` from beacond.toml.
    public var scanner: ScannerSpec?

    public init(bus: DBusBusAddress, configDirectory: String, stateDirectory: String, scanner: ScannerSpec?) {
        self.bus = bus
        self.configDirectory = configDirectory
        self.stateDirectory = stateDirectory
        self.scanner = scanner
    }
}

/// Why the daemon could not start, and the exit status that tells systemd which kind of failure it was.
public enum DaemonStartError: Error, CustomStringConvertible {
    /// beacond.toml or apps.d is wrong: EX_CONFIG (78), which `RestartPreventExitStatus=` can keep from looping.
    case configuration(String)
    /// The state directory or database cannot be used.
    case state(String)
    /// The bus cannot be reached, or its name cannot be owned.
    case bus(String)

    public var message: String {
        switch self {
        case .configuration(let message), .state(let message), .bus(let message): message
        }
    }

    public var description: String { message }

    /// sysexits.h's EX_CONFIG for a configuration error, else 1.
    public var exitStatus: Int32 {
        if case .configuration = self { return 78 }
        return 1
    }
}

extension DaemonOptions {
    /// The bus as a log line names it.
    static func describe(_ bus: DBusBusAddress) -> String {
        switch bus {
        case .system: "system bus"
        case .session: "session bus"
        case .address(let address): "bus at \(address)"
        }
    }
}
