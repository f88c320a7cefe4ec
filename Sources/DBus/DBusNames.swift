import CDBus

/// Checks of D-Bus names with libdbus's own validators, before libdbus is handed them (it treats
/// invalid names as programming errors and may abort).
enum DBusNames {
    static func checkObjectPath(_ path: String) throws(DBusMarshallingError) {
        guard valid(path, dbus_validate_path) else { throw .invalidObjectPath(path) }
    }

    static func checkInterface(_ name: String) throws(DBusMarshallingError) {
        guard valid(name, dbus_validate_interface) else { throw .invalidName(name, kind: "interface") }
    }

    static func checkMember(_ name: String) throws(DBusMarshallingError) {
        guard valid(name, dbus_validate_member) else { throw .invalidName(name, kind: "member") }
    }

    static func checkBusName(_ name: String) throws(DBusMarshallingError) {
        guard valid(name, dbus_validate_bus_name) else { throw .invalidName(name, kind: "bus name") }
    }

    static func checkErrorName(_ name: String) throws(DBusMarshallingError) {
        guard valid(name, dbus_validate_error_name) else { throw .invalidName(name, kind: "error name") }
    }

    private static func valid(
        _ text: String,
        _ validator: (UnsafePointer<CChar>?, UnsafeMutablePointer<DBusError>?) -> dbus_bool_t
    ) -> Bool {
        !text.utf8.contains(0) && text.withCString { validator($0, nil) } != 0
    }
}
