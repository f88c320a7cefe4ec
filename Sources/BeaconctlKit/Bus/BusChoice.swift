public import DBus

/// Which bus `beaconctl` talks to: `--bus system|session|ADDRESS`, else `$BEACOND_BUS`, else the system bus
/// (where beacond runs in production; tests and demos use a private bus's address).
public struct BusChoice: Hashable, Sendable, CustomStringConvertible {
    /// The environment variable read when `--bus` is not given.
    public static let environmentVariable = "BEACOND_BUS"

    public let address: DBusBusAddress

    public init(address: DBusBusAddress) {
        self.address = address
    }

    /// `system`, `session`, or a D-Bus address such as `unix:path=/run/beacond-test/bus`.
    public init(parsing text: String) {
        address = DBusBusAddress(parsing: text)
    }

    /// The option if given, else the environment variable if set and not empty, else the system bus.
    public static func resolve(option: DBusBusAddress?, environment: [String: String]) -> BusChoice {
        if let option { return BusChoice(address: option) }
        if let value = environment[environmentVariable], !value.isEmpty { return BusChoice(parsing: value) }
        return BusChoice(address: .system)
    }

    /// For messages: "the system bus", "the bus at unix:path=…".
    public var description: String {
        switch address {
        case .system: return "the system bus"
        case .session: return "the session bus"
        case .address(let text): return "the bus at \(text)"
        }
    }

    /// How to start beacond where this command looks for it: systemd's unit on the system bus; by hand on another.
    public var startAdvice: String {
        switch address {
        case .system: return "sudo systemctl start beacond; if it does not stay up: journalctl -u beacond -e"
        case .session, .address:
            return "start it on that bus: beacond --bus '\(optionValue)' --config-dir DIR --state-dir DIR "
                + "(its standard error says why if it does not stay up)"
        }
    }

    /// The value to pass back to `--bus` (for hints that print a command line).
    public var optionValue: String { address.optionValue }
}
