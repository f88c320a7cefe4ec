public import DBus
import BeacondAPI

/// A message a live command received, sorted into what it means for the command.
public enum IncomingSignal: Equatable {
    /// `Admin1.Event(kind, data)`.
    case event(kind: String, data: VarDict)
    /// A `LocationManager1` signal of the client at `path`, its arguments named as in `Event` data.
    case client(path: String, kind: String, data: VarDict)
    /// org.beacond has no owner any more.
    case daemonLeft
    /// Our own wake-up after SIGINT/SIGTERM.
    case wakeup
    /// Anything else (ignored).
    case other

    /// `daemon`: beacond's unique name; beacond's signals from any other sender are ignored (anyone on the
    /// bus may send us a signal, only the bus may send NameOwnerChanged).
    public init(_ message: DBusMessage, daemon: String) {
        guard message.kind == .signal, let member = message.member, let interface = message.interface else {
            self = .other
            return
        }
        let fromDaemon = message.sender == daemon
        let fromBus = message.sender == DBusDaemon.name
        let arguments = (try? message.arguments()) ?? []
        switch interface {
        case BeacondInterface.admin where member == BeacondMember.event && fromDaemon:
            guard arguments.count == 2, case .string(let kind) = arguments[0],
                let data = arguments[1].vardictEntries
            else { self = .other; return }
            self = .event(kind: kind, data: data)
        case BeacondInterface.locationManager where fromDaemon:
            guard let path = message.path, let data = Self.namedArguments(member: member, arguments) else {
                self = .other
                return
            }
            self = .client(path: path, kind: member, data: data)
        case DBusDaemon.name where member == "NameOwnerChanged" && fromBus:
            // The instance we talk to lost the name (stopped, crashed, or replaced by a restart).
            guard arguments.count == 3, arguments[0].stringValue == BeacondBus.name,
                arguments[1].stringValue == daemon
            else { self = .other; return }
            self = .daemonLeft
        case LocalWakeup.interface where member == LocalWakeup.member:
            self = .wakeup
        default:
            self = .other
        }
    }

    /// A LocationManager1 signal's positional arguments as the named dictionary `Admin1.Event` uses for
    /// the same kind, so one formatter prints both. Nil when the signature is not the contract's.
    public static func namedArguments(member: String, _ arguments: [DBusValue]) -> VarDict? {
        typealias K = BeacondEventKey
        let signature = arguments.map(\.signature).joined()
        func names(_ expected: String, _ keys: [String]) -> VarDict? {
            guard signature == expected else { return nil }
            return Dictionary(uniqueKeysWithValues: zip(keys, arguments))
        }
        switch member {
        case BeacondMember.authorizationChanged: return names("s", [K.status])
        case BeacondMember.didStartMonitoring: return names("a{sv}", [K.region])
        case BeacondMember.didEnterRegion, BeacondMember.didExitRegion:
            return withEvent(names("a{sv}a{sv}", [K.region, eventKey])) ?? names("a{sv}", [K.region])
        case BeacondMember.didDetermineState:
            return withEvent(names("sa{sv}a{sv}", [K.state, K.region, eventKey])) ?? names("sa{sv}", [K.state, K.region])
        case BeacondMember.didRangeBeacons: return names("aa{sv}a{sv}", [K.beacons, K.constraint])
        case BeacondMember.monitoringDidFail: return names("a{sv}ss", [K.region, K.error, K.message])
        case BeacondMember.rangingDidFail: return names("a{sv}ss", [K.constraint, K.error, K.message])
        default: return nil
        }
    }

    private static let eventKey = "\u{0}event"

    /// The event dictionary's entries (`Timestamp`, `Late`, `DroppedBefore`) merged into the named arguments,
    /// so the event's own time is the time printed. Signals without one (older daemons) are taken as they are.
    private static func withEvent(_ named: VarDict?) -> VarDict? {
        guard var named, let event = named.removeValue(forKey: eventKey)?.vardictEntries else { return nil }
        for (key, value) in event { named[key] = value }
        return named
    }
}
