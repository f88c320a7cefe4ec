import CDBus

/// Header fields and replies. Every string is copied out of libdbus at once, so none outlives the message.
extension DBusMessage {
    public enum Kind: Hashable, Sendable {
        case methodCall, methodReturn, error, signal, other
    }

    public var kind: Kind {
        switch dbus_message_get_type(pointer) {
        case Int32(DBUS_MESSAGE_TYPE_METHOD_CALL): return .methodCall
        case Int32(DBUS_MESSAGE_TYPE_METHOD_RETURN): return .methodReturn
        case Int32(DBUS_MESSAGE_TYPE_ERROR): return .error
        case Int32(DBUS_MESSAGE_TYPE_SIGNAL): return .signal
        default: return .other
        }
    }

    public var path: String? { dbus_message_get_path(pointer).map { String(cString: $0) } }
    public var interface: String? { dbus_message_get_interface(pointer).map { String(cString: $0) } }
    public var member: String? { dbus_message_get_member(pointer).map { String(cString: $0) } }
    /// The unique name of the sending connection, as the bus stamped it (not forgeable by the sender).
    public var sender: String? { dbus_message_get_sender(pointer).map { String(cString: $0) } }
    public var destination: String? { dbus_message_get_destination(pointer).map { String(cString: $0) } }
    public var errorName: String? { dbus_message_get_error_name(pointer).map { String(cString: $0) } }
    public var expectsReply: Bool { dbus_message_get_no_reply(pointer) == 0 }
    /// The sender's number for this message: a connection numbers what it sends in the order it sends it, so of
    /// two messages from one sender the lower serial was sent first (a reply among the sender's signals).
    public var serial: UInt32 { dbus_message_get_serial(pointer) }

    /// Sets the unicast destination (a signal sent to one connection only).
    public func setDestination(_ name: String) throws(DBusMarshallingError) {
        try DBusNames.checkBusName(name)
        guard dbus_message_set_destination(pointer, name) != 0 else { throw .outOfMemory }
    }

    /// A successful reply to this method call.
    public func makeReturn() throws(DBusMarshallingError) -> DBusMessage {
        guard let reply = dbus_message_new_method_return(pointer) else { throw .outOfMemory }
        return DBusMessage(adopting: reply)
    }

    /// An error reply to this method call. The name must be a valid error name; an invalid one
    /// becomes `org.freedesktop.DBus.Error.Failed` rather than tripping libdbus's assertion.
    public func makeError(name: String, message: String) throws(DBusMarshallingError) -> DBusMessage {
        let checkedName = (try? DBusNames.checkErrorName(name)) != nil ? name : "org.freedesktop.DBus.Error.Failed"
        let text = String(message.unicodeScalars.filter { $0 != "\0" })
        guard let reply = dbus_message_new_error(pointer, checkedName, text) else { throw .outOfMemory }
        return DBusMessage(adopting: reply)
    }
}
