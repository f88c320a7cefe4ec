"""beacond's D-Bus names (the same as Sources/BeacondAPI/Names.swift and docs/dbus-api.md)."""

BUS_NAME = "org.beacond"
MANAGER_PATH = "/org/beacond"
MANAGER = "org.beacond.Manager1"
LOCATION_MANAGER = "org.beacond.LocationManager1"
PROPERTIES = "org.freedesktop.DBus.Properties"
ERROR_PREFIX = "org.beacond.Error."

DBUS_NAME = "org.freedesktop.DBus"
DBUS_PATH = "/org/freedesktop/DBus"

# Not beacond's: what this library says when beacond is not on the bus.
DAEMON_UNAVAILABLE = "org.beacond.Client.DaemonUnavailable"
DISCONNECTED = "org.freedesktop.DBus.Error.Disconnected"

KEY_IDENTIFIER = "Identifier"
KEY_UUID = "UUID"
KEY_MAJOR = "Major"
KEY_MINOR = "Minor"
KEY_NOTIFY_ON_ENTRY = "NotifyOnEntry"
KEY_NOTIFY_ON_EXIT = "NotifyOnExit"
KEY_TIMESTAMP = "Timestamp"
KEY_LATE = "Late"
KEY_DROPPED_BEFORE = "DroppedBefore"
