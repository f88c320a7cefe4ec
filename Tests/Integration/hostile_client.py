#!/usr/bin/python3
"""A hostile but authorized client, as issue 21 found one: for a bounded time, open a connection, register as
many clients as it allows, monitor as many 250-byte-identifier regions on each as it allows, close the
connection (its regions go to the app, and its next connection's clients take them over), and again.

    hostile_client.py BUS_ADDRESS APP_ID SECONDS UUID

Prints one JSON object: how many calls were made and how each kind of refusal was counted. Bounded in time
and in calls per connection, so it always stops by itself.
"""
import json
import sys
import time

import dbus

BUS_NAME, MANAGER_PATH = "org.beacond", "/org/beacond"
MANAGER, LOCATION_MANAGER = "org.beacond.Manager1", "org.beacond.LocationManager1"


def main(address, app, seconds, uuid):
    deadline = time.monotonic() + seconds
    counts = {"connections": 0, "registered": 0, "monitored": 0, "refused": {}}

    def refused(error):
        name = error.get_dbus_name()
        counts["refused"][name] = counts["refused"].get(name, 0) + 1

    serial = 0
    while time.monotonic() < deadline:
        bus = dbus.bus.BusConnection(address)
        counts["connections"] += 1
        paths = []
        for _ in range(40):  # more than one connection may have
            try:
                paths.append(bus.call_blocking(BUS_NAME, MANAGER_PATH, MANAGER, "RegisterClient", "s", [app], timeout=30))
                counts["registered"] += 1
            except dbus.exceptions.DBusException as error:
                refused(error)
        for path in paths:
            for _ in range(25):  # more than one client may monitor
                if time.monotonic() >= deadline:
                    break
                serial += 1
                region = {"Identifier": ("h%08d" % serial) + "x" * 241, "UUID": uuid}
                try:
                    bus.call_blocking(BUS_NAME, path, LOCATION_MANAGER, "StartMonitoring", "a{sv}", [region], timeout=30)
                    counts["monitored"] += 1
                except dbus.exceptions.DBusException as error:
                    refused(error)
        bus.close()
    print(json.dumps(counts), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4])
