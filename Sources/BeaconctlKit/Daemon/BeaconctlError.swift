public import DBus
import BeacondAPI

/// A failure `beaconctl` reports as `beaconctl: <message>` and exits with `exitStatus`.
/// The message says what is wrong and how to fix it; for daemon refusals it is the daemon's own message.
public struct BeaconctlError: Error, Hashable, Sendable, CustomStringConvertible {
    public var exitStatus: Int32
    public var message: String
    /// The D-Bus error name behind the failure, if there was one (printed in `--json` and by `doctor`).
    public var dbusName: String?

    public init(exitStatus: Int32, message: String, dbusName: String? = nil) {
        self.exitStatus = exitStatus
        self.message = message
        self.dbusName = dbusName
    }

    public var description: String { message }
}

/// D-Bus standard error names that decide how a failure is reported.
enum BusErrorName {
    static let prefix = "org.freedesktop.DBus.Error."
    /// The bus or the daemon is not there (EX_UNAVAILABLE).
    static let unreachable: Set<String> = [
        "ServiceUnknown", "NameHasNoOwner", "NoServer", "NoReply", "Timeout", "TimedOut", "Disconnected",
        "FileNotFound", "BadAddress", "NoNetwork", "AuthFailed", "LimitsExceeded", "NoMemory",
    ].reduce(into: []) { $0.insert(prefix + $1) }
    static let accessDenied = prefix + "AccessDenied"
    static let notRunning: Set<String> = [prefix + "ServiceUnknown", prefix + "NameHasNoOwner"]
    static let notAnswering: Set<String> = [prefix + "NoReply", prefix + "Timeout", prefix + "TimedOut"]
    static let unknownAPI: Set<String> = ["UnknownMethod", "UnknownObject", "UnknownInterface", "UnknownProperty"]
        .reduce(into: []) { $0.insert(prefix + $1) }
    /// Activation of org.beacond failed (`org.freedesktop.DBus.Error.Spawn.*`).
    static let spawnPrefix = prefix + "Spawn."
}

extension BeaconctlError {
    /// Connecting to the bus failed (no socket, daemon of the bus down, bad address).
    public static func connecting(to bus: BusChoice, _ error: DBusCallError) -> BeaconctlError {
        BeaconctlError(
            exitStatus: ExitStatus.unavailable,
            message: "cannot connect to \(bus): \(error.message). Is dbus running there? "
                + "Choose another bus with --bus system|session|ADDRESS or $\(BusChoice.environmentVariable).",
            dbusName: error.name)
    }

    /// beacond is not on the bus.
    public static func daemonNotRunning(on bus: BusChoice) -> BeaconctlError {
        BeaconctlError(
            exitStatus: ExitStatus.unavailable,
            message: "beacond is not running on \(bus) (nobody owns \(BeacondBus.name)). Start it: \(bus.startAdvice)",
            dbusName: BusErrorName.prefix + "ServiceUnknown")
    }

    /// beacond left the bus while a live command was waiting for its signals.
    public static func daemonLeft(_ bus: BusChoice) -> BeaconctlError {
        BeaconctlError(
            exitStatus: ExitStatus.unavailable,
            message: "beacond left \(bus) (stopped or crashed): journalctl -u beacond -e",
            dbusName: BusErrorName.prefix + "NameHasNoOwner")
    }

    /// The bus connection itself closed while waiting.
    public static func busClosed(_ bus: BusChoice) -> BeaconctlError {
        BeaconctlError(
            exitStatus: ExitStatus.unavailable, message: "the connection to \(bus) was closed",
            dbusName: BusErrorName.prefix + "Disconnected")
    }

    /// A call to beacond (`interface.member`) got an error reply, or no reply.
    public static func calling(
        _ interface: String, _ member: String, on bus: BusChoice,
        _ error: DBusCallError
    ) -> BeaconctlError {
        let name = error.name
        if name == BeacondErrorName.accessDenied.rawValue {
            // The daemon's message names the rule and the fix.
            return BeaconctlError(exitStatus: ExitStatus.noPermission, message: error.message, dbusName: name)
        }
        if name.hasPrefix("org.beacond.Error.") {
            return BeaconctlError(exitStatus: ExitStatus.failure, message: error.message, dbusName: name)
        }
        if name == BusErrorName.accessDenied {
            // The bus policy refused before the daemon saw the call.
            let fix =
                interface == BeacondInterface.admin
                ? AdminAccess.fix
                : "check the D-Bus policy /usr/share/dbus-1/system.d/org.beacond.conf"
            return BeaconctlError(
                exitStatus: ExitStatus.noPermission,
                message: "the bus refused \(interface).\(member): \(error.message). Fix: \(fix)",
                dbusName: name)
        }
        if BusErrorName.notRunning.contains(name) {
            return daemonNotRunning(on: bus)
        }
        if BusErrorName.notAnswering.contains(name) {
            return BeaconctlError(
                exitStatus: ExitStatus.unavailable,
                message: "beacond did not answer \(member) in time (\(error.message)); "
                    + "is it hung? journalctl -u beacond -e",
                dbusName: name)
        }
        if name.hasPrefix(BusErrorName.spawnPrefix) {
            return BeaconctlError(
                exitStatus: ExitStatus.unavailable,
                message: "the bus could not start beacond (\(error.message)); "
                    + "see journalctl -u beacond -e",
                dbusName: name)
        }
        if BusErrorName.unreachable.contains(name) {
            return BeaconctlError(
                exitStatus: ExitStatus.unavailable,
                message: "cannot reach beacond on \(bus): \(error.message)", dbusName: name)
        }
        if BusErrorName.unknownAPI.contains(name) {
            return BeaconctlError(
                exitStatus: ExitStatus.failure,
                message: "beacond does not offer \(interface).\(member) (\(error.message)); "
                    + "beaconctl and beacond may be different versions",
                dbusName: name)
        }
        return BeaconctlError(
            exitStatus: ExitStatus.failure, message: "\(member) failed: \(name): \(error.message)",
            dbusName: name)
    }

    /// The daemon answered with something the contract does not allow.
    public static func unexpectedReply(_ member: String, _ reply: [DBusValue]) -> BeaconctlError {
        BeaconctlError(
            exitStatus: ExitStatus.failure,
            message: "beacond answered \(member) with an unexpected reply (\(reply.map(\.signature).joined())); "
                + "beaconctl and beacond may be different versions")
    }
}
