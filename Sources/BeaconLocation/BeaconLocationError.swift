public import BeacondAPI

/// Why a call failed or why nothing arrives: beacond's refusal (`org.beacond.Error.*`, whose message says what is
/// missing and how to fix it), or the library's own news that beacond or the bus is gone.
public struct BeaconLocationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The D-Bus error name, e.g. `org.beacond.Error.NotAuthorized`.
    public let name: String
    /// What is wrong and how to fix it.
    public let message: String

    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    public var description: String { message.isEmpty ? name : message }

    /// Not beacond's: beacond is not on the bus now (this library registers again when it is back).
    public static let daemonUnavailableName = "org.beacond.Client.DaemonUnavailable"
    /// The bus connection itself is gone; the client is closed.
    public static let disconnectedName = "org.freedesktop.DBus.Error.Disconnected"

    /// beacond's error, if it is one of its documented refusals.
    public var beacondError: BeacondErrorName? { BeacondErrorName(rawValue: name) }

    /// A refusal beacond made (as opposed to the daemon or the bus being away).
    public var isRefusal: Bool { name.hasPrefix(Self.beacondErrorPrefix) }

    static let beacondErrorPrefix = "org.beacond.Error."

    /// The initialiser's task was cancelled while it registered: the client was closed.
    public static let cancelledName = "org.beacond.Client.Cancelled"
    /// Not beacond's refusal either: beacond cannot scan now (Core Location's `CLError.rangingUnavailable`).
    public static let rangingUnavailableName = "org.beacond.Client.RangingUnavailable"

    /// `error` itself if it is one, else a `Failed` error saying it.
    public init(_ error: any Error) {
        self = error as? BeaconLocationError ?? BeaconLocationError(name: "org.freedesktop.DBus.Error.Failed", message: "\(error)")
    }

    static func rangingUnavailable(_ reason: String) -> BeaconLocationError {
        BeaconLocationError(
            name: rangingUnavailableName,
            message: "beacond cannot scan: \(reason); ranging goes on and beacons come again once it scans (it tries "
                + "again by itself; an administrator sees why in `beaconctl status` and the journal)")
    }

    static func daemonUnavailable(_ message: String) -> BeaconLocationError {
        BeaconLocationError(name: daemonUnavailableName, message: message)
    }
}
