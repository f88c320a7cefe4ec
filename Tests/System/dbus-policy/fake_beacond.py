#!/usr/bin/python3
"""A stand-in for beacond on a test bus, for checking the D-Bus policy (org.beacond.conf).

    fake_beacond.py own ADDRESS     try to own org.beacond once; print owned|exists|error NAME
    fake_beacond.py serve ADDRESS   own org.beacond, print "owned" (or "error NAME" and exit 1),
                                    then answer on /org/beacond and /org/beacond/client/1 until
                                    killed

It implements a few methods of each interface the policy names, so that a call the policy lets
through gets an answer and one it stops gets the bus's AccessDenied: the fake itself never
refuses anything. RegisterClient also sends AuthorizationChanged to the caller only (unicast),
as the daemon does, to show such signals reach unprivileged clients.
"""
import sys

import dbus
import dbus.lowlevel
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

NAME = "org.beacond"
MANAGER = "org.beacond.Manager1"
ADMIN = "org.beacond.Admin1"
LOCATION_MANAGER = "org.beacond.LocationManager1"
CLIENT_PATH = "/org/beacond/client/1"


class Daemon(dbus.service.Object):
    @dbus.service.method(MANAGER, in_signature="s", out_signature="o",
                         sender_keyword="sender", connection_keyword="connection")
    def RegisterClient(self, app_id, sender=None, connection=None):
        signal = dbus.lowlevel.SignalMessage(CLIENT_PATH, LOCATION_MANAGER, "AuthorizationChanged")
        signal.set_destination(sender)
        signal.append("notDetermined", signature="s")
        connection.send_message(signal)
        return dbus.ObjectPath(CLIENT_PATH)

    @dbus.service.method(ADMIN, in_signature="", out_signature="a{sv}")
    def GetStatus(self):
        return dbus.Dictionary({"LocationServicesEnabled": dbus.Boolean(True)}, signature="sv")

    @dbus.service.method(ADMIN, in_signature="b", out_signature="")
    def SetLocationServicesEnabled(self, enabled):
        pass

    @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        return self.GetAll(interface)[name]

    @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return dbus.Dictionary({"Version": "fake", "LocationServicesEnabled": dbus.Boolean(True),
                                "Scanning": dbus.Boolean(False)}, signature="sv")

    @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature="ssv", out_signature="")
    def Set(self, interface, name, value):
        pass


class Client(dbus.service.Object):
    @dbus.service.method(LOCATION_MANAGER, in_signature="", out_signature="s")
    def RequestWhenInUseAuthorization(self):
        return "notDetermined"


def request_name(bus):
    """The RequestName outcome in words; policy refusals arrive as an error, not a reply code."""
    try:
        code = bus.request_name(NAME, dbus.bus.NAME_FLAG_DO_NOT_QUEUE)
    except dbus.exceptions.DBusException as error:
        return "error " + (error.get_dbus_name() or "unknown")
    return {dbus.bus.REQUEST_NAME_REPLY_PRIMARY_OWNER: "owned",
            dbus.bus.REQUEST_NAME_REPLY_EXISTS: "exists"}.get(code, "code %d" % code)


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("own", "serve"):
        sys.exit(__doc__)
    mode, address = sys.argv[1:]
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(address)
    outcome = request_name(bus)
    print(outcome, flush=True)
    if mode == "own" or outcome != "owned":
        sys.exit(0 if mode == "own" else 1)
    Daemon(bus, "/org/beacond")
    Client(bus, CLIENT_PATH)
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()
