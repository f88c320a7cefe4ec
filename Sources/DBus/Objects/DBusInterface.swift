/// A method, property or signal argument: its name (for introspection) and D-Bus type.
public struct DBusArgument: Hashable, Sendable {
    public var name: String
    public var signature: String

    public init(_ name: String, _ signature: String) {
        self.name = name
        self.signature = signature
    }
}

/// A method call as an exported object's handler sees it.
public struct DBusMethodCall: Sendable {
    /// The caller's unique connection name, stamped by the bus (`:1.42`).
    public var sender: String
    public var path: String
    public var interface: String
    public var member: String
    public var arguments: [DBusValue]

    public init(sender: String, path: String, interface: String, member: String, arguments: [DBusValue]) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
    }
}

/// One method of an exported interface. The server checks the argument signature before the handler runs,
/// so a handler may pattern-match its arguments knowing their types; what it throws becomes the error reply.
public struct DBusMethod {
    public var name: String
    public var inArguments: [DBusArgument]
    public var outArguments: [DBusArgument]
    public var handler: (DBusMethodCall) throws(DBusCallError) -> [DBusValue]

    public init(
        _ name: String, in inArguments: [DBusArgument] = [], out outArguments: [DBusArgument] = [],
        handler: @escaping (DBusMethodCall) throws(DBusCallError) -> [DBusValue]
    ) {
        self.name = name
        self.inArguments = inArguments
        self.outArguments = outArguments
        self.handler = handler
    }

    var inSignature: String { inArguments.map(\.signature).joined() }
    var outSignature: String { outArguments.map(\.signature).joined() }
}

/// A read-only property; `read` gets the caller's unique name (values may be private to their owner).
public struct DBusProperty {
    /// How `PropertiesChanged` reports a change (the `org.freedesktop.DBus.Property.EmitsChangedSignal` annotation).
    public enum ChangeSignal: Sendable, Hashable {
        /// With the new value.
        case value
        /// By name only (in the invalidated list): for values that grow with use, which a signal per change would
        /// otherwise resend whole (quadratic traffic); clients read the property when they need it.
        case invalidates
    }

    public var name: String
    public var signature: String
    public var changeSignal: ChangeSignal
    public var read: (_ sender: String) throws(DBusCallError) -> DBusValue

    public init(
        _ name: String, _ signature: String, changeSignal: ChangeSignal = .value,
        read: @escaping (_ sender: String) throws(DBusCallError) -> DBusValue
    ) {
        self.name = name
        self.signature = signature
        self.changeSignal = changeSignal
        self.read = read
    }
}

/// A signal an interface may emit (for introspection; emitting goes through `DBusObjectServer.emit`).
public struct DBusSignalDescription: Hashable, Sendable {
    public var name: String
    public var arguments: [DBusArgument]

    public init(_ name: String, _ arguments: [DBusArgument] = []) {
        self.name = name
        self.arguments = arguments
    }

    /// What the signal's arguments must have on the wire.
    public var signature: String { arguments.map(\.signature).joined() }
}

public struct DBusInterface {
    public var name: String
    public var methods: [DBusMethod]
    public var properties: [DBusProperty]
    public var signals: [DBusSignalDescription]

    public init(
        _ name: String, methods: [DBusMethod] = [], properties: [DBusProperty] = [],
        signals: [DBusSignalDescription] = []
    ) {
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
    }
}

/// An object at a path with its interfaces. `accessCheck`, if set, runs before every method and property
/// call on the object (Introspect excepted: it describes the API, not anyone's data).
///
/// `needsCallerCredentials`: its handlers and access check read `DBusObjectServer.callerCredentials(of:)`. The
/// server asks the bus who a sender is before it dispatches the sender's first call to such an object, without
/// blocking the loop (the call waits, with the sender's later calls behind it so their order holds).
public struct DBusObject {
    public var path: String
    public var interfaces: [DBusInterface]
    public var accessCheck: ((_ sender: String) throws(DBusCallError) -> Void)?
    public var needsCallerCredentials: Bool

    public init(
        path: String, interfaces: [DBusInterface], needsCallerCredentials: Bool = false,
        accessCheck: ((_ sender: String) throws(DBusCallError) -> Void)? = nil
    ) {
        self.path = path
        self.interfaces = interfaces
        self.needsCallerCredentials = needsCallerCredentials
        self.accessCheck = accessCheck
    }
}

/// Standard error names of the D-Bus Specification that the server replies with.
public enum DBusStandardError {
    public static let unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
    public static let unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"
    public static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
    public static let unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"
    public static let propertyReadOnly = "org.freedesktop.DBus.Error.PropertyReadOnly"
    public static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    public static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
    public static let failed = "org.freedesktop.DBus.Error.Failed"
}
