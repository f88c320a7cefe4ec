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
# A call beacond (or the bus) did not answer within the library's timeout.
NO_REPLY = "org.freedesktop.DBus.Error.NoReply"
# Not a refusal either: ranging goes on, and beacond cannot scan now (Core Location's CLError.rangingUnavailable).
RANGING_UNAVAILABLE = "org.beacond.Client.RangingUnavailable"

# Manager1's ScannerState: beacond cannot see while it starts with one of these (the reason follows).
SCANNER_STATE = "ScannerState"
SCANNER_BLIND_PREFIXES = ("failed: ", "waiting: ")

KEY_IDENTIFIER = "Identifier"
KEY_UUID = "UUID"
KEY_MAJOR = "Major"
KEY_MINOR = "Minor"
KEY_KIND = "Kind"
KEY_NAMESPACE = "Namespace"
KEY_INSTANCE = "Instance"
KEY_DEVICE = "Device"
KEY_BATTERY_MILLIVOLTS = "BatteryMillivolts"
KEY_TEMPERATURE = "Temperature"
KEY_NOTIFY_ON_ENTRY = "NotifyOnEntry"
KEY_NOTIFY_ON_EXIT = "NotifyOnExit"
KEY_TIMESTAMP = "Timestamp"
KEY_LATE = "Late"
KEY_DROPPED_BEFORE = "DroppedBefore"
