#!/usr/bin/python3
"""The `executable` fork trick: open a bus connection, fork; the parent execs the app's declared program, the
child registers as the app on the connection it inherited. Prints the RegisterClient result (an object path)
or the D-Bus error name, and exits 0 either way.

    fork_trick.py BUS_ADDRESS APP_ID PROGRAM [ARGUMENT ...]
"""
import os
import sys
import time

import dbus

address, app, program = sys.argv[1], sys.argv[2], sys.argv[3:]
bus = dbus.bus.BusConnection(address)
bus.get_unique_name()
child = os.fork()
if child:
    os.execv(program[0], program)  # the parent becomes the declared program; its copy of the socket closes (CLOEXEC)
time.sleep(0.3)  # let the exec happen before the daemon looks at /proc/PID/exe
try:
    print(bus.call_blocking("org.beacond", "/org/beacond", "org.beacond.Manager1", "RegisterClient", "s", [app],
                            timeout=10), flush=True)
except dbus.exceptions.DBusException as error:
    print(error.get_dbus_name(), error.get_dbus_message(), flush=True)
os._exit(0)
