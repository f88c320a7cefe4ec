#!/usr/bin/python3
"""One method call on a test bus (to org.beacond, or the bus itself), as whichever user runs it.

    call.py ADDRESS DESTINATION PATH INTERFACE METHOD [SIGNATURE ARG...]

INTERFACE "-" sends the call without an interface field. ARGs are strings, or true/false for
signature "b". Prints "ok" and the reply, or "error NAME: MESSAGE"; exits 0 either way (the
caller compares). RegisterClient also waits for the unicast AuthorizationChanged the daemon
sends before replying, and prints "ok signal STATUS" when it arrived.
"""
import sys

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

# A safety net so a lost signal fails the check instead of hanging it; not a timing assertion.
SIGNAL_WAIT_SECONDS = 20


def convert(signature, args):
    if signature == "b":
        return [args[0] == "true"]
    return list(args)


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    address, destination, path, interface, method = sys.argv[1:6]
    signature = sys.argv[6] if len(sys.argv) > 6 else ""
    args = convert(signature, sys.argv[7:])
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(address)
    signals = []
    loop = GLib.MainLoop()

    def authorization_changed(status):
        signals.append(str(status))
        loop.quit()

    if method == "RegisterClient":
        bus.add_signal_receiver(authorization_changed, signal_name="AuthorizationChanged",
                                dbus_interface="org.beacond.LocationManager1")
    try:
        reply = bus.call_blocking(destination, path, None if interface == "-" else interface,
                                  method, signature, args)
    except dbus.exceptions.DBusException as error:
        print("error %s: %s" % (error.get_dbus_name(), error.get_dbus_message()))
        return
    if method == "RegisterClient":
        if not signals:
            GLib.timeout_add_seconds(SIGNAL_WAIT_SECONDS, loop.quit)
            loop.run()
        print("ok signal %s" % (signals[0] if signals else "none"))
        return
    print("ok %r" % (reply,))


if __name__ == "__main__":
    main()
