import CDBus

/// One libdbus message, owned: created here or adopted with its reference, released in `deinit`.
/// Arguments are written and read as `DBusValue`s; every value is validated before libdbus sees it,
/// and every string libdbus hands back is copied out before the message can go away.
public final class DBusMessage {
    /// `DBusMessage*`, one reference owned by this object.
    let pointer: OpaquePointer

    /// Adopts a reference the caller owns (from a constructor or `dbus_connection_pop_message`).
    init(adopting pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        dbus_message_unref(pointer)
    }

    /// A method call. Names are checked first: libdbus treats invalid names as programming errors.
    public static func methodCall(
        destination: String?, path: String, interface: String?,
        member: String
    ) throws(DBusMarshallingError) -> DBusMessage {
        try DBusNames.checkObjectPath(path)
        try DBusNames.checkMember(member)
        if let interface { try DBusNames.checkInterface(interface) }
        if let destination { try DBusNames.checkBusName(destination) }
        let message = destination.withOptionalCString { destinationC in
            interface.withOptionalCString { interfaceC in
                dbus_message_new_method_call(destinationC, path, interfaceC, member)
            }
        }
        guard let message else { throw .outOfMemory }
        return DBusMessage(adopting: message)
    }

    /// A signal.
    public static func signal(path: String, interface: String, member: String) throws(DBusMarshallingError) -> DBusMessage {
        try DBusNames.checkObjectPath(path)
        try DBusNames.checkInterface(interface)
        try DBusNames.checkMember(member)
        guard let message = dbus_message_new_signal(path, interface, member) else { throw .outOfMemory }
        return DBusMessage(adopting: message)
    }

    /// The message in wire format (what the bus would carry). A message that was never sent has no
    /// serial, which the wire format forbids; it is given serial 1.
    public func marshal() throws(DBusMarshallingError) -> [UInt8] {
        if dbus_message_get_serial(pointer) == 0 { dbus_message_set_serial(pointer, 1) }
        var buffer: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        guard dbus_message_marshal(pointer, &buffer, &length) != 0, let buffer else { throw .outOfMemory }
        defer { dbus_free(buffer) }
        return UnsafeRawBufferPointer(start: buffer, count: Int(length)).map { $0 }
    }

    /// Parses a message from wire format; libdbus validates every byte, so any input is safe.
    public static func demarshal(_ bytes: [UInt8]) throws(DBusMarshallingError) -> DBusMessage {
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let message = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { dbus_message_demarshal($0.baseAddress, Int32(clamping: $0.count), &error) }
        }
        guard let message else {
            let reason = error.message.map { String(cString: $0) } ?? "not a D-Bus message"
            throw .malformedMessage(reason)
        }
        return DBusMessage(adopting: message)
    }

    /// The signature of the arguments, e.g. `sa{sv}`.
    public var signature: String {
        guard let text = dbus_message_get_signature(pointer) else { return "" }
        return String(cString: text)
    }

    /// Appends `values` as arguments. On error the message is left partly written and must not be sent.
    public func append(_ values: [DBusValue]) throws(DBusMarshallingError) {
        var iterator = DBusMessageIter()
        dbus_message_iter_init_append(pointer, &iterator)
        for value in values {
            try DBusMarshalling.validate(value, depth: 0)
            try DBusMarshalling.append(value, to: &iterator)
        }
    }

    /// Reads every argument.
    public func arguments() throws(DBusMarshallingError) -> [DBusValue] {
        var iterator = DBusMessageIter()
        guard dbus_message_iter_init(pointer, &iterator) != 0 else { return [] } // no arguments
        var values: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&iterator) != DBusTypeCode.invalid {
            values.append(try DBusMarshalling.read(&iterator))
            dbus_message_iter_next(&iterator)
        }
        return values
    }
}

extension Optional where Wrapped == String {
    /// Calls `body` with a C string, or with nil.
    func withOptionalCString<Result>(_ body: (UnsafePointer<CChar>?) -> Result) -> Result {
        switch self {
        case .some(let text): return text.withCString { body($0) }
        case .none: return body(nil)
        }
    }
}
