import CDBus

/// An error from the bus or a peer: a D-Bus error name and its message (a method's error reply,
/// or libdbus's own failure such as `org.freedesktop.DBus.Error.NoServer`).
public struct DBusCallError: Error, Hashable, Sendable, CustomStringConvertible {
    public var name: String
    public var message: String

    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    public var description: String { "\(name): \(message)" }

    /// Takes the error out of libdbus's struct (copied: the struct is freed by the caller).
    init(_ error: inout CDBus.DBusError, fallback: String) {
        name = error.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed"
        message = error.message.map { String(cString: $0) } ?? fallback
    }

    /// A reply that arrived but could not be read (a type this wrapper does not support, such as `h`).
    public static let unreadableReplyName = "org.beacond.DBus.Error.UnreadableReply"

    static func wrap(_ error: DBusMarshallingError) -> DBusCallError {
        DBusCallError(name: "org.freedesktop.DBus.Error.InvalidArgs", message: error.description)
    }
}

/// Where to connect.
public enum DBusBusAddress: Hashable, Sendable {
    case system
    case session
    /// A bus address such as `unix:path=/run/dbus/system_bus_socket` (tests use a private daemon's).
    case address(String)

    /// `system`, `session`, or a D-Bus address such as `unix:path=/run/beacond-test/bus` (`--bus` of both tools).
    public init(parsing text: String) {
        switch text {
        case "system": self = .system
        case "session": self = .session
        default: self = .address(text)
        }
    }

    /// The value to pass back to `--bus`.
    public var optionValue: String {
        switch self {
        case .system: return "system"
        case .session: return "session"
        case .address(let text): return text
        }
    }
}

/// A private connection to a message bus, owned by this object and closed in `deinit`.
///
/// This part does what `beaconctl` and tests need: connect, own names, send, and call methods
/// synchronously. Serving exported objects from the daemon's event loop builds on it.
public final class DBusConnection {
    /// `DBusConnection*`, one reference owned by this object (a private connection: we close it).
    let pointer: OpaquePointer
    /// The unique name the bus gave this connection (`:1.42`).
    public let uniqueName: String

    public init(_ bus: DBusBusAddress) throws(DBusCallError) {
        // libdbus must be told once that it is used from several threads (Swift concurrency).
        _ = dbus_threads_init_default()
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let opened: OpaquePointer?
        switch bus {
        case .system: opened = dbus_bus_get_private(DBUS_BUS_SYSTEM, &error)
        case .session: opened = dbus_bus_get_private(DBUS_BUS_SESSION, &error)
        case .address(let address):
            opened = dbus_connection_open_private(address, &error)
            if let opened, dbus_bus_register(opened, &error) == 0 {
                dbus_connection_close(opened)
                dbus_connection_unref(opened)
                throw DBusCallError(&error, fallback: "could not register with the bus at \(address)")
            }
        }
        guard let opened else { throw DBusCallError(&error, fallback: "could not connect to the bus") }
        // A daemon must not exit because its bus went away; it reports and reconnects.
        dbus_connection_set_exit_on_disconnect(opened, 0)
        pointer = opened
        uniqueName = dbus_bus_get_unique_name(opened).map { String(cString: $0) } ?? ""
    }

    deinit {
        dbus_connection_close(pointer)
        dbus_connection_unref(pointer)
    }

    public var isConnected: Bool { dbus_connection_get_is_connected(pointer) != 0 }

    /// Blocks until every queued outgoing message is written (before closing: the last signals must not be lost).
    public func flush() {
        dbus_connection_flush(pointer)
    }

    public enum NameOwnership: Sendable, Hashable {
        case primaryOwner, alreadyOwner, queued, exists
    }

    /// Asks the bus for `name` (no queueing, no replacement: a second daemon must fail loudly).
    public func requestName(_ name: String) throws(DBusCallError) -> NameOwnership {
        do { try DBusNames.checkBusName(name) } catch { throw DBusCallError.wrap(error) }
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let result = dbus_bus_request_name(pointer, name, UInt32(DBUS_NAME_FLAG_DO_NOT_QUEUE), &error)
        switch result {
        case Int32(DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER): return .primaryOwner
        case Int32(DBUS_REQUEST_NAME_REPLY_ALREADY_OWNER): return .alreadyOwner
        case Int32(DBUS_REQUEST_NAME_REPLY_IN_QUEUE): return .queued
        case Int32(DBUS_REQUEST_NAME_REPLY_EXISTS): return .exists
        default: throw DBusCallError(&error, fallback: "could not request \(name)")
        }
    }

    /// Queues `message` for sending and flushes it.
    public func send(_ message: DBusMessage) throws(DBusCallError) {
        guard dbus_connection_send(pointer, message.pointer, nil) != 0 else {
            throw DBusCallError(name: "org.freedesktop.DBus.Error.NoMemory", message: "could not queue the message")
        }
        dbus_connection_flush(pointer)
    }

    /// Calls a method and waits for its reply (for the CLI and tests; the daemon never blocks).
    /// An error reply is thrown as `DBusCallError` with the peer's error name and message.
    public func call(_ message: DBusMessage, timeout: Duration = .seconds(25)) throws(DBusCallError) -> [DBusValue] {
        try Self.arguments(of: reply(to: message, timeout: timeout))
    }

    /// `call`, returning the reply message itself: its sender and serial say which of the peer's signals, still
    /// queued on this connection, were sent before it.
    public func reply(to message: DBusMessage, timeout: Duration = .seconds(25)) throws(DBusCallError) -> DBusMessage {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let milliseconds = Int32(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        guard let reply = dbus_connection_send_with_reply_and_block(pointer, message.pointer, milliseconds, &error) else {
            throw DBusCallError(&error, fallback: "no reply")
        }
        return DBusMessage(adopting: reply)
    }

    /// A reply's arguments; a type this wrapper cannot read is an error of its own.
    public static func arguments(of reply: DBusMessage) throws(DBusCallError) -> [DBusValue] {
        do {
            return try reply.arguments()
        } catch {
            // Not the peer's InvalidArgs: the reply arrived but holds a type this wrapper cannot read.
            throw DBusCallError(name: DBusCallError.unreadableReplyName, message: "the reply could not be read: \(error)")
        }
    }

    /// Convenience: call `member` on `destination` with `arguments`.
    public func call(
        destination: String, path: String, interface: String, member: String,
        arguments: [DBusValue] = [], timeout: Duration = .seconds(25)
    ) throws(DBusCallError) -> [DBusValue] {
        try Self.arguments(
            of: reply(
                destination: destination, path: path, interface: interface, member: member,
                arguments: arguments, timeout: timeout))
    }

    /// Convenience: the reply message of `member` on `destination` with `arguments` (see `reply(to:timeout:)`).
    public func reply(
        destination: String, path: String, interface: String, member: String,
        arguments: [DBusValue] = [], timeout: Duration = .seconds(25)
    ) throws(DBusCallError) -> DBusMessage {
        let message: DBusMessage
        do {
            message = try DBusMessage.methodCall(destination: destination, path: path, interface: interface, member: member)
            try message.append(arguments)
        } catch {
            throw DBusCallError.wrap(error)
        }
        return try reply(to: message, timeout: timeout)
    }
}

/// Who is behind a connection, from the bus's `GetConnectionCredentials` (what the daemon checks
/// against an app's declaration).
public struct DBusPeerCredentials: Hashable, Sendable {
    public var unixUserID: UInt32?
    public var processID: UInt32?

    public init(unixUserID: UInt32?, processID: UInt32?) {
        self.unixUserID = unixUserID
        self.processID = processID
    }

    /// The bus methods that say who a peer is: all at once, or (when that reply cannot be read) one by one.
    enum Question {
        case all, userID, processID

        var member: String {
            switch self {
            case .all: "GetConnectionCredentials"
            case .userID: "GetConnectionUnixUser"
            case .processID: "GetConnectionUnixProcessID"
            }
        }
    }

    /// From GetConnectionCredentials' `a{sv}`.
    init(credentialsReply reply: [DBusValue]) throws(DBusCallError) {
        guard let entries = reply.first?.vardictEntries else {
            throw DBusCallError(name: "org.freedesktop.DBus.Error.InvalidSignature", message: "GetConnectionCredentials replied \(reply)")
        }
        func uint32(_ key: String) -> UInt32? {
            if case .uint32(let value)? = entries[key] { return value }
            return nil
        }
        self.init(unixUserID: uint32("UnixUserID"), processID: uint32("ProcessID"))
    }

    /// The `u` of GetConnectionUnixUser or GetConnectionUnixProcessID.
    static func uint32(_ reply: [DBusValue], replyTo question: Question) throws(DBusCallError) -> UInt32 {
        guard case .uint32(let value)? = reply.first else {
            throw DBusCallError(name: "org.freedesktop.DBus.Error.InvalidSignature", message: "\(question.member) replied \(reply)")
        }
        return value
    }
}

extension DBusConnection {
    static let busName = "org.freedesktop.DBus"
    static let busPath = "/org/freedesktop/DBus"

    /// Whether some connection owns `name`.
    public func nameHasOwner(_ name: String) throws(DBusCallError) -> Bool {
        let reply = try call(
            destination: Self.busName, path: Self.busPath, interface: Self.busName,
            member: "NameHasOwner", arguments: [.string(name)])
        guard case .boolean(let owned)? = reply.first else {
            throw DBusCallError(name: "org.freedesktop.DBus.Error.InvalidSignature", message: "NameHasOwner replied \(reply)")
        }
        return owned
    }
}
