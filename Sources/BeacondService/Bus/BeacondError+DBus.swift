public import BeacondCore
public import DBus

extension BeacondError {
    /// The error reply to send.
    public var dbusError: DBusCallError { DBusCallError(name: name.rawValue, message: message) }
}
