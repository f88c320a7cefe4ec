import CDBus

/// Receiving without a main loop, for the CLI and tests: subscribe with a match rule, then block for the
/// next message. (The daemon receives through `DBusObjectServer` instead.)
extension DBusConnection {
    /// Adds a match rule (`type='signal',interface='org.beacond.LocationManager1'`); the bus checks it.
    public func addMatch(_ rule: String) throws(DBusCallError) {
        guard !rule.utf8.contains(0) else {
            throw DBusCallError(name: "org.freedesktop.DBus.Error.MatchRuleInvalid", message: "match rule contains NUL")
        }
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        dbus_bus_add_match(pointer, rule, &error)
        if dbus_error_is_set(&error) != 0 { throw DBusCallError(&error, fallback: "could not add match \(rule)") }
    }

    /// Removes a match rule added with `addMatch` (without waiting for the bus's answer: nothing to do if it fails).
    public func removeMatch(_ rule: String) {
        guard !rule.utf8.contains(0) else { return }
        dbus_bus_remove_match(pointer, rule, nil)
    }

    /// The next incoming message for which `accept` holds (others are dropped), waiting at most `timeout`
    /// (nil: forever). Nil on timeout. Throws once the connection is closed (the daemon or bus went away).
    /// By default the bus's own signals (NameAcquired, which every connection gets) are skipped.
    public func nextMessage(
        timeout: Duration?,
        where accept: (DBusMessage) -> Bool = { $0.sender != "org.freedesktop.DBus" }
    ) throws(DBusCallError) -> DBusMessage? {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        while true {
            if let message = dbus_connection_pop_message(pointer) {
                let owned = DBusMessage(adopting: message)
                if owned.kind == .signal, owned.interface == "org.freedesktop.DBus.Local", owned.member == "Disconnected" {
                    throw DBusCallError(name: "org.freedesktop.DBus.Error.Disconnected", message: "the bus connection was closed")
                }
                if owned.kind == .methodCall, owned.interface == "org.freedesktop.DBus.Peer", owned.member == "Ping" {
                    // libdbus answers Peer.Ping in dispatch, which this loop does not run. A daemon pings its
                    // clients to learn they read what it sent (beacond drops ranging to peers that never answer).
                    if let reply = try? owned.makeReturn() { try? send(reply) }
                    continue
                }
                if accept(owned) { return owned }
                continue
            }
            var milliseconds: Int32 = -1
            if let deadline {
                let remaining = ContinuousClock.now.duration(to: deadline)
                if remaining <= .zero { return nil }
                milliseconds = Int32(
                    clamping: remaining.components.seconds * 1000
                        + remaining.components.attoseconds / 1_000_000_000_000_000 + 1)
            }
            guard dbus_connection_read_write(pointer, milliseconds) != 0 else {
                throw DBusCallError(name: "org.freedesktop.DBus.Error.Disconnected", message: "the bus connection was closed")
            }
        }
    }
}
