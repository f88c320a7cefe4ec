#!/usr/bin/python3
"""A beacond app as the bus starts it (D-Bus activation): the test writes a .service file whose Exec= runs

    activated_app.py BUS_NAME APP_ID OUTPUT_FILE SECONDS

It appends one line "started <pid>" to OUTPUT_FILE.starts, takes BUS_NAME on the bus that started it
($DBUS_STARTER_ADDRESS), registers as APP_ID, and for SECONDS records every region event signal as one JSON line
in OUTPUT_FILE (member, region identifier, event dictionary), then exits (its client goes with its connection).
"""
import json
import os
import sys
import time

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

from harness import plain  # this script's directory is on sys.path: the bus runs it by its path


def main():
    name, app, output, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    with open(output + ".starts", "a") as starts:
        starts.write("started %d\n" % os.getpid())
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(os.environ["DBUS_STARTER_ADDRESS"])
    bus.request_name(name)
    events = open(output, "a")

    def received(*args, **keywords):
        member = keywords["member"]
        if member not in ("DidEnterRegion", "DidExitRegion", "DidDetermineState"):
            return
        region = args[1] if member == "DidDetermineState" else args[0]
        info = args[-1]
        events.write(json.dumps({"member": member, "region": plain(region)["Identifier"], "event": plain(info),
                                 "received": time.time()}) + "\n")
        events.flush()

    bus.add_signal_receiver(received, dbus_interface="org.beacond.LocationManager1", member_keyword="member")
    manager = dbus.Interface(bus.get_object("org.beacond", "/org/beacond"), "org.beacond.Manager1")
    manager.RegisterClient(app)
    loop = GLib.MainLoop()
    GLib.timeout_add(int(seconds * 1000), loop.quit)
    loop.run()
    events.close()


if __name__ == "__main__":
    try:
        main()
    except Exception:  # the bus discards an activated program's output: leave the reason for the test
        import traceback
        with open(sys.argv[3] + ".err", "a") as errors:
            errors.write(traceback.format_exc())
        raise
