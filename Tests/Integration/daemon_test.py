#!/usr/bin/python3
"""beacond's integration tests: the real daemon on a private dbus-daemon, fed through its fifo scanner,
driven by real clients (dbus-python on GLib, busctl, gdbus, beaconctl).

    daemon_test.py [BEACOND [BEACONCTL]] [-kNUMBER|-kWORDS ...]

BEACOND defaults to $BEACOND, BEACONCTL to $BEACONCTL (optional: without it the admin steps use busctl).
Each test gets a fresh bus, daemon, config and state directory. Prints each test's name with PASS or FAIL
and the reason, then "N passed, N failed"; exits 1 when anything failed. Needs root (apps are declared for
user root; non-admin checks run as nobody through setpriv) and /usr/bin/python3 with python3-dbus, python3-gi.
"""
import atexit
import json
import os
import re
import signal
import stat
import subprocess
import sys
import tempfile
import time
import traceback

import dbus
from gi.repository import GLib

import fake_bluez
import hci
from harness import (ADMIN, DEFAULT_SETTINGS, DEMO_UUID, ERROR, LOCATION_MANAGER, MANAGER, MANAGER_PATH, OTHER_UUID,
                     PROPERTIES, SIGNAL_TIMEOUT, TestFailure, World, check, describe_result, expect_error, remove_everything,
                     plain, pump_for, pump_until, run_tool)

# Tests 1 and 9 make the administrator's decisions with beaconctl (`auth grant`, `services`), the tool
# administrators use, so a beaconctl regression fails them. $BEACOND_TEST_ADMIN_TOOL=busctl calls
# org.beacond.Admin1 directly instead (to tell a daemon fault from a beaconctl one by hand).

DEMO = "org.example.Demo"
NO_ALWAYS = "org.example.NoAlways"
OTHER = "org.example.Other"


class Suite:
    def __init__(self, beacond, beaconctl):
        self.beacond = beacond
        self.beaconctl = beaconctl
        self.worlds = []
        self.notes = []
        self.admin_tool = self.choose_admin_tool(os.environ.get("BEACOND_TEST_ADMIN_TOOL", "beaconctl"))

    def choose_admin_tool(self, wanted):
        if wanted == "busctl":
            return "busctl"
        if not (self.beaconctl and os.access(self.beaconctl, os.X_OK)):
            raise SystemExit("beaconctl %r is not an executable; tests 1 and 9 need it" % self.beaconctl)
        return "beaconctl"

    def world(self, **options):
        world = World(self.beacond, self.beaconctl, **options)
        self.worlds.append(world)
        return world

    def close_worlds(self):
        for world in self.worlds:
            world.close()
        self.worlds = []

    def grant(self, world, app, level):
        """`beaconctl auth grant APP always|when-in-use`, or the Admin1 call it makes."""
        if self.admin_tool == "beaconctl":
            result = run_tool([self.beaconctl, "auth", "grant", app, level, "--bus", world.address])
        else:
            status = {"always": "authorizedAlways", "when-in-use": "authorizedWhenInUse"}[level]
            result = world.busctl("call", "org.beacond", MANAGER_PATH, ADMIN, "SetAuthorization", "ss", app, status)
        check(result.returncode == 0, "%s auth grant failed: %s" % (self.admin_tool, describe_result(result)))
        self.notes.append("grant via " + self.admin_tool)

    def services(self, world, on):
        """`beaconctl services on|off`, or the Admin1 call it makes."""
        if self.admin_tool == "beaconctl":
            result = run_tool([self.beaconctl, "services", "on" if on else "off", "--bus", world.address])
        else:
            result = world.busctl("call", "org.beacond", MANAGER_PATH, ADMIN, "SetLocationServicesEnabled", "b",
                                  "true" if on else "false")
        check(result.returncode == 0, "%s services failed: %s" % (self.admin_tool, describe_result(result)))
        self.notes.append("services via " + self.admin_tool)


def region_of(signal_or_value):
    value = signal_or_value.args[0] if hasattr(signal_or_value, "args") else signal_or_value
    return plain(value)


# MARK: 0. the test's own beacon lines decode as intended

def test_hci_helper_matches_decoder(suite):
    lines = [("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", 1, 2, {}),
             (OTHER_UUID, 65535, 0, {"tx_power": -70, "rssi": -80, "address": "11:22:33:44:55:66",
                                     "address_type": 0})]
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as file:
        for beacon_uuid, major, minor, options in lines:
            file.write(hci.ibeacon_line(beacon_uuid, major, minor, **options))
        path = file.name
    try:
        result = run_tool([suite.beacond, "replay", "--json", path])
    finally:
        os.unlink(path)
    check(result.returncode == 0, "beacond replay failed: %s" % describe_result(result))
    observations = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    expected = [{"time": None, "address": "C0:FF:EE:00:00:01", "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0",
                 "major": 1, "minor": 2, "txPower": -59, "rssi": -56},
                {"time": None, "address": "11:22:33:44:55:66", "uuid": OTHER_UUID, "major": 65535, "minor": 0,
                 "txPower": -70, "rssi": -80}]
    check(observations == expected, "replay decoded %r, expected %r" % (observations, expected))


# MARK: 1. the full flow

def test_full_flow(suite):
    world = suite.world()
    world.start_daemon()
    # The collector subscribes to LocationManager1 before RegisterClient is called.
    demo = world.client(DEMO, interface=LOCATION_MANAGER, register=False)
    demo.register()
    demo.wait_status("notDetermined")
    check(str(demo.prop("AuthorizationStatus")) == "notDetermined", "AuthorizationStatus property is not notDetermined")
    check(str(demo.prop("AppId")) == DEMO, "AppId property is %r" % demo.prop("AppId"))

    no_always = world.client(NO_ALWAYS)
    no_always.wait_status("notDetermined")
    expect_error(lambda: no_always.lm("RequestAlwaysAuthorization"), ERROR + "MissingUsageDescription",
                 "always_usage", NO_ALWAYS)

    status = demo.lm("RequestAlwaysAuthorization")
    check(str(status) == "notDetermined", "a request waiting for the administrator returned %r" % status)
    pending = world.admin.listing("ListPendingRequests")
    mine = [entry for entry in pending if entry.get("AppId") == DEMO]
    check(len(mine) == 1 and mine[0].get("Request") == "always",
          "ListPendingRequests does not show Demo's always request: %r" % pending)
    check("background" in mine[0].get("UsageDescription", ""), "pending request lacks the usage description: %r" % mine)
    demo.collector.expect_none(0.3, "AuthorizationChanged", path=demo.path,
                               what="AuthorizationChanged while the request is pending")

    suite.grant(world, DEMO, "always")
    demo.wait_status("authorizedAlways")
    check(not [entry for entry in world.admin.listing("ListPendingRequests") if entry.get("AppId") == DEMO],
          "the granted request is still pending")

    demo.start_monitoring("lobby", DEMO_UUID)
    started = demo.wait("DidStartMonitoring")
    check(region_of(started).get("Identifier") == "lobby" and region_of(started).get("UUID") == DEMO_UUID,
          "DidStartMonitoring carries %r" % region_of(started))

    feeder = world.feeder()
    feeder.wait_for_fifo()
    check(feeder.send(DEMO_UUID, 1, 2), "the FIFO has no reader although a region is monitored")
    last_beacon = feeder.last_write
    state = demo.wait("DidDetermineState", where=lambda s: str(s.args[0]) == "inside",
                      what="DidDetermineState('inside')")
    check(plain(state.args[1]).get("Identifier") == "lobby", "DidDetermineState region %r" % plain(state.args[1]))
    entered = demo.wait("DidEnterRegion")
    check(region_of(entered).get("Identifier") == "lobby", "DidEnterRegion region %r" % region_of(entered))

    # RequestState answers at once with the current state.
    demo.lm("RequestState", "s", "lobby")
    demo.wait("DidDetermineState", where=lambda s: str(s.args[0]) == "inside", what="RequestState's DidDetermineState")

    # Silence, then the exit after exit_timeout (2 s): not early, not much later.
    exited = demo.wait("DidExitRegion", timeout=6.5)
    delay = exited.time - last_beacon
    check(delay >= 1.5, "DidExitRegion came %.2f s after the last beacon, before exit_timeout = 2 s" % delay)
    check(delay <= 6.0, "DidExitRegion came %.2f s after the last beacon" % delay)
    check(region_of(exited).get("Identifier") == "lobby", "DidExitRegion region %r" % region_of(exited))
    suite.notes.append("exit %.2f s after the last beacon" % delay)
    world.alive()


# MARK: 2. WhenInUse is refused monitoring

def test_when_in_use_refused_monitoring(suite):
    world = suite.world()
    world.start_daemon()
    demo = world.client(DEMO)
    demo.wait_status("notDetermined")
    world.admin.set_authorization(DEMO, "authorizedWhenInUse")
    demo.wait_status("authorizedWhenInUse")
    expect_error(lambda: demo.start_monitoring("lobby"), ERROR + "NotAuthorized",
                 "authorizedAlways", "RequestAlwaysAuthorization", "beaconctl auth grant")
    check(list(demo.prop("MonitoredRegions")) == [], "a refused region is in MonitoredRegions")


# MARK: 3. ranging pauses while a WhenInUse client is not in use

BEACON_TYPES = {"UUID": dbus.String, "Major": dbus.UInt16, "Minor": dbus.UInt16, "RSSI": dbus.Int16,
                "Accuracy": dbus.Double, "Proximity": dbus.String, "TxPower": dbus.Int16, "Timestamp": dbus.UInt64}


def check_beacon(beacon, major, minor, uuid=DEMO_UUID):
    check(set(beacon.keys()) == set(BEACON_TYPES), "beacon keys %s" % sorted(beacon.keys()))
    for key, kind in BEACON_TYPES.items():
        check(isinstance(beacon[key], kind), "beacon %s is %s, expected %s" % (key, type(beacon[key]).__name__,
                                                                              kind.__name__))
    values = plain(beacon)
    check(values["UUID"] == uuid and values["Major"] == major and values["Minor"] == minor,
          "beacon identity %r" % values)
    check(values["TxPower"] == -59, "TxPower %r, the frame says -59" % values["TxPower"])
    check(values["RSSI"] == 0 or -100 <= values["RSSI"] <= -20, "RSSI %r" % values["RSSI"])
    check(values["Accuracy"] == -1 or values["Accuracy"] > 0, "Accuracy %r" % values["Accuracy"])
    check(values["Proximity"] in ("unknown", "immediate", "near", "far"), "Proximity %r" % values["Proximity"])
    now_us = time.time() * 1e6
    check(abs(values["Timestamp"] - now_us) < 60e6, "Timestamp %r is not about now (%d)" % (values["Timestamp"], now_us))


def with_beacon(signal):
    return len(signal.args[0]) > 0


def test_ranging_paused_while_not_in_use(suite):
    world = suite.world()
    world.start_daemon()
    # An Always client of another app keeps the scanner running, so beacons keep reaching the daemon while
    # the ranging client is paused: the pause must be the in-use gate, not an idle scanner.
    keeper = world.authorized_client(OTHER, "authorizedAlways")
    keeper.start_monitoring("keep-scanning", OTHER_UUID)

    demo = world.authorized_client(DEMO, "authorizedWhenInUse")
    demo.lm("SetInUse", "b", False)
    check(bool(demo.prop("InUse")) is False, "InUse property stayed true")
    expect_error(lambda: demo.start_ranging(DEMO_UUID), ERROR + "NotAuthorized", "SetInUse(true)")
    demo.lm("SetInUse", "b", True)
    demo.start_ranging(DEMO_UUID)
    check(plain(demo.prop("RangedConstraints")) == [{"UUID": DEMO_UUID}],
          "RangedConstraints %r" % plain(demo.prop("RangedConstraints")))

    feeder = world.feeder()
    feeder.wait_for_fifo()
    feeder.start(0.2, beacon_uuid=DEMO_UUID, major=7, minor=9)
    ranged = demo.wait("DidRangeBeacons", where=with_beacon, what="DidRangeBeacons with the beacon")
    check(len(ranged.args[0]) == 1, "ranged %d beacons, one advertises" % len(ranged.args[0]))
    check_beacon(ranged.args[0][0], 7, 9)
    check(plain(ranged.args[1]) == {"UUID": DEMO_UUID}, "DidRangeBeacons constraint %r" % plain(ranged.args[1]))

    demo.lm("SetInUse", "b", False)
    changed = demo.wait("PropertiesChanged", interface=PROPERTIES,
                        where=lambda s: str(s.args[0]) == LOCATION_MANAGER and "InUse" in s.args[1],
                        what="PropertiesChanged(InUse)")
    check(changed.args[1]["InUse"] is not None and bool(changed.args[1]["InUse"]) is False,
          "PropertiesChanged InUse %r" % plain(changed.args[1]))
    demo.round_trip()  # anything produced before SetInUse(false) has arrived now
    pump_until(lambda: False, 0)
    written = feeder.written
    demo.collector.expect_none(2.5, "DidRangeBeacons", path=demo.path, what="DidRangeBeacons while not in use")
    check(feeder.written - written >= 8, "only %d beacons reached the FIFO during the pause"
          % (feeder.written - written))

    demo.lm("SetInUse", "b", True)
    again = demo.wait("DidRangeBeacons", where=with_beacon, what="DidRangeBeacons after SetInUse(true)")
    check_beacon(again.args[0][0], 7, 9)

    # A second constraint on a client that already ranges reaches the engine too (a bug once: only the
    # inactive → active transition started ranging).
    demo.start_ranging(OTHER_UUID)
    feeder.send(beacon_uuid=OTHER_UUID, major=3, minor=4)
    other = demo.wait("DidRangeBeacons", where=lambda s: plain(s.args[1]) == {"UUID": OTHER_UUID} and len(s.args[0]) == 1,
                      what="DidRangeBeacons for the second constraint")
    check_beacon(other.args[0][0], 3, 4, uuid=OTHER_UUID)
    demo.lm("StopRanging", "a{sv}", {"UUID": OTHER_UUID})

    demo.lm("StopRanging", "a{sv}", {"UUID": DEMO_UUID})
    check(plain(demo.prop("RangedConstraints")) == [], "RangedConstraints after StopRanging")
    demo.round_trip()
    demo.collector.expect_none(1.5, "DidRangeBeacons", path=demo.path, what="DidRangeBeacons after StopRanging")
    feeder.stop()
    world.alive()


# MARK: 4. a second client can neither call nor hear the first's object

def test_second_client_isolation(suite):
    world = suite.world()
    world.start_daemon()
    first = world.authorized_client(DEMO, "authorizedAlways")
    # The same app on another connection, and another app: both subscribed to every signal they may get.
    same_app = world.client(DEMO)
    other_app = world.client(OTHER)
    same_app.wait_status("authorizedAlways")
    other_app.wait_status("notDetermined")

    first.start_monitoring("lobby", DEMO_UUID)
    first.start_ranging(DEMO_UUID)
    first.wait("DidStartMonitoring")
    feeder = world.feeder()
    feeder.wait_for_fifo()
    feeder.start(0.2, beacon_uuid=DEMO_UUID, major=1, minor=2)
    first.wait("DidEnterRegion")
    first.wait("DidRangeBeacons", where=with_beacon, what="DidRangeBeacons with the beacon")

    for intruder in (same_app, other_app):
        who = "%s on %s" % (intruder.app, intruder.unique_name)
        for method, signature, args in (("StartMonitoring", "a{sv}", [{"Identifier": "x", "UUID": DEMO_UUID}]),
                                        ("StopMonitoring", "s", ["lobby"]),
                                        ("RequestState", "s", ["lobby"]),
                                        ("SetInUse", "b", [False]),
                                        ("Close", "", [])):
            try:
                expect_error(lambda: intruder.call(first.path, LOCATION_MANAGER, method, signature, *args),
                             ERROR + "AccessDenied", "another connection", "RegisterClient")
            except TestFailure as failure:
                raise TestFailure("%s calling %s: %s" % (who, method, failure))
        for read in (lambda: intruder.get_all(first.path, LOCATION_MANAGER),
                     lambda: intruder.get(first.path, LOCATION_MANAGER, "MonitoredRegions")):
            expect_error(read, ERROR + "AccessDenied", "another connection")

    # Still the first client's: nothing the intruders did took effect.
    check([region["Identifier"] for region in plain(first.prop("MonitoredRegions"))] == ["lobby"],
          "the first client's regions changed: %r" % plain(first.prop("MonitoredRegions")))
    check(bool(first.prop("InUse")), "an intruder's SetInUse(false) took effect")

    # Fresh activity of the first client while the intruders listen.
    marks = {intruder: intruder.collector.mark() for intruder in (same_app, other_app)}
    first.lm("RequestState", "s", "lobby")
    first.wait("DidDetermineState", where=lambda s: str(s.args[0]) == "inside", what="DidDetermineState('inside')")
    first.wait("DidRangeBeacons", where=with_beacon, what="another DidRangeBeacons")
    pump_until(lambda: False, 1.0)
    for intruder in (same_app, other_app):
        heard = [s for s in intruder.collector.signals if s.path == first.path]
        check(not heard, "%s heard the first client's signals: %r" % (intruder.app, heard[:3]))
        own = intruder.collector.since(marks[intruder], interface=LOCATION_MANAGER)
        check(all(s.path == intruder.path for s in own), "%s got LocationManager1 signals not its own: %r"
              % (intruder.app, own[:3]))
    feeder.stop()
    world.alive()


# MARK: 5. Admin1 is for root and the admin group

def test_non_admin_refused(suite):
    world = suite.world()
    world.start_daemon()
    refused = world.busctl("call", "org.beacond", MANAGER_PATH, ADMIN, "GetStatus", as_nobody=True)
    check(refused.returncode != 0, "nobody's GetStatus succeeded: %s" % describe_result(refused))
    check("beacond-admin" in refused.stderr, "busctl's error does not name the admin group: %s"
          % describe_result(refused))
    # gdbus prints the error name too.
    named = world.gdbus("call", "--dest", "org.beacond", "--object-path", MANAGER_PATH,
                        "--method", ADMIN + ".SetAuthorization", DEMO, "authorizedAlways", as_nobody=True)
    check(named.returncode != 0 and ERROR + "AccessDenied" in named.stderr and "beacond-admin" in named.stderr,
          "nobody's SetAuthorization: %s" % describe_result(named))
    check(plain(world.admin.status())["Apps"][0]["AuthorizationStatus"] == "notDetermined",
          "nobody's refused SetAuthorization changed a status")
    for method, args in (("ListClients", ["0", "0"]), ("ListRegions", ["0", "0"]), ("ListApps", ["0", "0"]),
                         ("ListPendingRequests", ["0", "0"]), ("WatchEvents", [])):
        result = world.gdbus("call", "--dest", "org.beacond", "--object-path", MANAGER_PATH,
                             "--method", ADMIN + "." + method, *args, as_nobody=True)
        check(result.returncode != 0 and ERROR + "AccessDenied" in result.stderr,
              "nobody's %s: %s" % (method, describe_result(result)))

    # Manager1's properties are public.
    readable = world.busctl("get-property", "org.beacond", MANAGER_PATH, MANAGER, "Version",
                            "LocationServicesEnabled", "Scanning", as_nobody=True)
    check(readable.returncode == 0, "nobody cannot read Manager1 properties: %s" % describe_result(readable))
    lines = readable.stdout.split("\n")
    check(lines[0].startswith('s "') and lines[1] == "b true" and lines[2] == "b false",
          "Manager1 properties read by nobody: %r" % readable.stdout)

    # nobody is not among the app's users.
    register = world.gdbus("call", "--dest", "org.beacond", "--object-path", MANAGER_PATH,
                           "--method", MANAGER + ".RegisterClient", DEMO, as_nobody=True)
    check(register.returncode != 0 and ERROR + "AccessDenied" in register.stderr,
          "nobody registering as %s: %s" % (DEMO, describe_result(register)))

    allowed = world.busctl("call", "org.beacond", MANAGER_PATH, ADMIN, "GetStatus")
    check(allowed.returncode == 0 and allowed.stdout.startswith("a{sv}"), "root's GetStatus: %s"
          % describe_result(allowed))
    world.alive()


# MARK: 6. the region limit

def test_region_limit(suite):
    world = suite.world()
    world.start_daemon()
    demo = world.authorized_client(DEMO, "authorizedAlways")
    for number in range(1, 21):
        demo.start_monitoring("region-%d" % number, DEMO_UUID, Major=dbus.UInt16(number))
    expect_error(lambda: demo.start_monitoring("region-21", DEMO_UUID), ERROR + "RegionLimitExceeded",
                 "max_regions_per_client", "20", "StopMonitoring")
    # Same identifier again replaces the region; it is not counted twice.
    demo.start_monitoring("region-5", DEMO_UUID, Major=dbus.UInt16(500))
    regions = plain(demo.prop("MonitoredRegions"))
    check(len(regions) == 20, "%d regions after a replace" % len(regions))
    replaced = [region for region in regions if region["Identifier"] == "region-5"]
    check(len(replaced) == 1 and replaced[0].get("Major") == 500, "region-5 after replace: %r" % replaced)
    expect_error(lambda: demo.start_monitoring("region-21", DEMO_UUID), ERROR + "RegionLimitExceeded")
    demo.lm("StopMonitoring", "s", "region-1")
    demo.start_monitoring("region-21", DEMO_UUID)
    check(len(plain(demo.prop("MonitoredRegions"))) == 20, "limit not back to 20 after stop + add")
    world.alive()


# MARK: 7. bad calls get clear errors and the daemon lives on

def test_bad_calls(suite):
    world = suite.world()
    world.start_daemon()
    demo = world.authorized_client(DEMO, "authorizedAlways")
    invalid_args = "org.freedesktop.DBus.Error.InvalidArgs"

    def each(description, action, name, *words):
        try:
            expect_error(action, name, *words)
            world.alive()
        except TestFailure as failure:
            raise TestFailure("%s: %s" % (description, failure))

    # Wrong signatures from the command-line tools. gdbus converts arguments to the introspected types, so
    # it can only get the count wrong; busctl sends what it is given (and prints only the message).
    for arguments in ([DEMO, "extra"], []):
        result = world.gdbus("call", "--dest", "org.beacond", "--object-path", MANAGER_PATH,
                             "--method", MANAGER + ".RegisterClient", *arguments)
        check(result.returncode != 0 and invalid_args in result.stderr and "type 's'" in result.stderr,
              "gdbus RegisterClient%r: %s" % (tuple(arguments), describe_result(result)))
        world.alive()
    result = world.busctl("call", "org.beacond", MANAGER_PATH, MANAGER, "RegisterClient", "u", "42")
    check(result.returncode != 0 and "takes arguments of type 's'" in result.stderr,
          "busctl RegisterClient u 42: %s" % describe_result(result))
    world.alive()
    result = world.busctl("call", "org.beacond", MANAGER_PATH, ADMIN, "SetAuthorization", "s", DEMO)
    check(result.returncode != 0 and "'ss'" in result.stderr, "busctl SetAuthorization s: %s" % describe_result(result))
    world.alive()

    # Wrong signatures from the client's own connection.
    each("StartMonitoring(s)", lambda: demo.lm("StartMonitoring", "s", "lobby"), invalid_args, "a{sv}")
    each("RegisterClient(ss)", lambda: demo.call(MANAGER_PATH, MANAGER, "RegisterClient", "ss", DEMO, "x"),
         invalid_args, "'s'")
    each("SetInUse(s)", lambda: demo.lm("SetInUse", "s", "yes"), invalid_args, "'b'")

    region = {"Identifier": "lobby", "UUID": DEMO_UUID}
    each("bad UUID", lambda: demo.lm("StartMonitoring", "a{sv}", dict(region, UUID="not-a-uuid")),
         ERROR + "InvalidRegion", "not-a-uuid", "8-4-4-4-12")
    each("missing Identifier", lambda: demo.lm("StartMonitoring", "a{sv}", {"UUID": DEMO_UUID}),
         ERROR + "InvalidRegion", "Identifier")
    each("empty Identifier", lambda: demo.lm("StartMonitoring", "a{sv}", dict(region, Identifier="  ")),
         ERROR + "InvalidRegion", "Identifier")
    each("missing UUID", lambda: demo.lm("StartMonitoring", "a{sv}", {"Identifier": "lobby"}),
         ERROR + "InvalidRegion", "UUID")
    each("Major out of range", lambda: demo.lm("StartMonitoring", "a{sv}", dict(region, Major=dbus.UInt32(70000))),
         ERROR + "InvalidRegion", "Major", "65535")
    each("Minor negative", lambda: demo.lm("StartMonitoring", "a{sv}", dict(region, Major=dbus.UInt16(1),
                                                                              Minor=dbus.Int32(-1))),
         ERROR + "InvalidRegion", "Minor", "65535")
    each("Major as a string", lambda: demo.lm("StartMonitoring", "a{sv}", dict(region, Major="1")),
         ERROR + "InvalidRegion", "Major")
    each("unknown key", lambda: demo.lm("StartMonitoring", "a{sv}", dict(region, Radius=dbus.Int32(5))),
         ERROR + "InvalidRegion", "Radius", "Identifier")
    each("NotifyOnEntry not a boolean", lambda: demo.lm("StartMonitoring", "a{sv}", dict(region, NotifyOnEntry="no")),
         ERROR + "InvalidRegion", "NotifyOnEntry", "boolean")
    each("ranging constraint with Identifier", lambda: demo.lm("StartRanging", "a{sv}", region),
         ERROR + "InvalidRegion", "Identifier")
    each("StopMonitoring unknown", lambda: demo.lm("StopMonitoring", "s", "nowhere"),
         ERROR + "UnknownRegion", "nowhere", "MonitoredRegions")
    each("RequestState unknown", lambda: demo.lm("RequestState", "s", "nowhere"), ERROR + "UnknownRegion", "nowhere")
    each("StopRanging not ranged", lambda: demo.lm("StopRanging", "a{sv}", {"UUID": DEMO_UUID}),
         ERROR + "UnknownRegion", DEMO_UUID)
    each("RegisterClient unknown app", lambda: demo.call(MANAGER_PATH, MANAGER, "RegisterClient", "s",
                                                        "org.example.Nope"),
         ERROR + "UnknownApp", "org.example.Nope", "apps.d", DEMO)
    each("SetAuthorization bad status", lambda: world.admin.set_authorization(DEMO, "sometimes"),
         ERROR + "InvalidArguments", "authorizedAlways", "notDetermined")
    each("SetAuthorization unknown app", lambda: world.admin.set_authorization("org.example.Nope", "denied"),
         ERROR + "UnknownApp", "org.example.Nope")
    each("ResetAuthorization unknown app", lambda: world.admin.admin("ResetAuthorization", "s", "org.example.Nope"),
         ERROR + "UnknownApp", "org.example.Nope")
    each("unknown method", lambda: demo.call(MANAGER_PATH, MANAGER, "Frobnicate"),
         "org.freedesktop.DBus.Error.UnknownMethod", "Frobnicate")
    each("unknown client method", lambda: demo.lm("Frobnicate"), "org.freedesktop.DBus.Error.UnknownMethod",
         "Frobnicate")
    each("unknown interface", lambda: demo.call(MANAGER_PATH, "org.beacond.Nope1", "Anything"),
         "org.freedesktop.DBus.Error.UnknownInterface", "org.beacond.Nope1")
    each("unknown object", lambda: demo.call("/org/beacond/client/999", LOCATION_MANAGER, "SetInUse", "b", True),
         "org.freedesktop.DBus.Error.UnknownObject", "999")
    each("Properties.Set", lambda: demo.call(MANAGER_PATH, PROPERTIES, "Set", "ssv", MANAGER, "Version", "9.9"),
         "org.freedesktop.DBus.Error.PropertyReadOnly", "read-only")
    each("Properties.Set on the client", lambda: demo.call(demo.path, PROPERTIES, "Set", "ssv", LOCATION_MANAGER,
                                                           "AuthorizationStatus", "authorizedAlways"),
         "org.freedesktop.DBus.Error.PropertyReadOnly", "read-only")
    each("Properties.Get unknown", lambda: demo.get(MANAGER_PATH, MANAGER, "Colour"),
         "org.freedesktop.DBus.Error.UnknownProperty", "Colour")

    # Huge arguments: a 100 000-entry region and a 4 MB array where a string belongs.
    huge_region = dict(("Key%06d" % number, dbus.Int32(number)) for number in range(100000))
    huge_region.update(region)
    each("huge region", lambda: demo.lm("StartMonitoring", "a{sv}", huge_region), ERROR + "InvalidRegion", "Key000000")
    each("huge array", lambda: demo.call(MANAGER_PATH, MANAGER, "RegisterClient", "ay",
                                         dbus.ByteArray(b"\x41" * (4 << 20)), timeout=30),
         invalid_args, "'s'")
    each("huge string app id", lambda: demo.call(MANAGER_PATH, MANAGER, "RegisterClient", "s", "a" * (1 << 20),
                                                 timeout=30),
         ERROR + "UnknownApp", "apps.d")

    # After all that, the client works.
    demo.start_monitoring("lobby", DEMO_UUID)
    demo.wait("DidStartMonitoring")


# MARK: 8. bad configuration files

def expect_config_exit(world, file, line, *words, scanner=None):
    """beacond exits 78 within 10 s, its log naming `file:line:` (`file:` when line is None) and each word."""
    daemon = world.launch(scanner=scanner)
    code = daemon.wait_exit(10)
    check(code is not None, "beacond with a bad %s did not exit within 10 s" % file)
    stderr = daemon.stderr()
    check(code == 78, "beacond with a bad %s exited %s, expected 78; stderr: %s" % (file, code, stderr[-800:]))
    location = "%s:%d:" % (file, line) if line is not None else file + ":"
    check(location in stderr, "stderr does not say %s: %s" % (location, stderr[-800:]))
    for word in words:
        check(word in stderr, "stderr does not mention %r: %s" % (word, stderr[-800:]))


def test_bad_configuration(suite):
    world = suite.world()
    good = "[monitoring]\nexit_timeout = 2\n"
    world.write_settings("[monitoring]\nexit_timeout = 2\n[authorization\nprompt = \"admin\"\n")
    expect_config_exit(world, world.settings_path, 3)
    world.write_settings("[monitoring]\nexit_timeout = 2\n\n[authorization]\nprompt = \"ask\"\n")
    expect_config_exit(world, world.settings_path, 5, "prompt", "ask", "when-in-use")
    world.write_settings("[monitoring]\nexit_timeout = -1\n")
    expect_config_exit(world, world.settings_path, 2, "exit_timeout")
    world.write_settings(good)
    world.write_app("zz-bad.toml", 'app_id = "org.example.Bad"\nusers = "root"\n')
    expect_config_exit(world, world.app_path("zz-bad.toml"), 2, "users")
    world.write_app("zz-bad.toml", 'app_id = "org example"\nusers = ["root"]\n')
    expect_config_exit(world, world.app_path("zz-bad.toml"), 1, "app_id")
    world.write_app("zz-bad.toml", 'app_id = "org.example.Demo"\nusers = ["root"]\n')
    expect_config_exit(world, world.app_path("zz-bad.toml"), 1, "demo.toml")
    os.unlink(world.app_path("zz-bad.toml"))

    # SIGHUP with broken files: the old configuration stays, the error is logged with file:line.
    daemon = world.start_daemon()
    watcher = world.connect()
    watcher.admin("WatchEvents")
    demo = world.client(DEMO)
    demo.wait_status("notDetermined")
    for broken, line in (("[authorization]\nprompt = \"always\"\n[monitoring\n", 3),
                         ("[authorization]\n\nprompt = \"ask\"\n", 3)):
        world.write_settings(broken)
        mark = watcher.collector.mark()
        os.kill(daemon.pid, signal.SIGHUP)
        watcher.collector.wait("Event", where=lambda s: str(s.args[0]) == "ConfigurationRejected",
                               what="Event('ConfigurationRejected')")
        check(not watcher.collector.since(mark, "Event", where=lambda s: str(s.args[0]) == "ConfigurationReloaded"),
              "a broken file was reloaded")
        world.alive()
        location = "%s:%d:" % (world.settings_path, line)
        check(location in daemon.stderr(), "the reload error does not say %s: %s" % (location, daemon.stderr()[-800:]))
        check(world.admin.status()["Prompt"] == "admin", "Prompt changed by a rejected file")
    # A bad app file on reload: rejected too, Demo still declared.
    world.write_settings(good)
    world.write_app("zz-bad.toml", 'app_id = "org.example.Bad"\nusers = "root"\n')
    os.kill(daemon.pid, signal.SIGHUP)
    watcher.collector.wait("Event", where=lambda s: str(s.args[0]) == "ConfigurationRejected",
                           what="Event('ConfigurationRejected') for apps.d")
    check(world.app_path("zz-bad.toml") + ":2:" in daemon.stderr(), "apps.d reload error without file:line")
    os.unlink(world.app_path("zz-bad.toml"))

    # A good change applies.
    world.write_settings("[monitoring]\nexit_timeout = 2\n\n[authorization]\nprompt = \"always\"\n")
    os.kill(daemon.pid, signal.SIGHUP)
    watcher.collector.wait("Event", where=lambda s: str(s.args[0]) == "ConfigurationReloaded",
                           what="Event('ConfigurationReloaded')")
    check(world.admin.status()["Prompt"] == "always", "Prompt after reload: %r" % world.admin.status()["Prompt"])
    status = demo.lm("RequestWhenInUseAuthorization")
    check(str(status) == "authorizedWhenInUse", "RequestWhenInUseAuthorization under prompt = always returned %r"
          % status)
    demo.wait_status("authorizedWhenInUse")
    world.alive()

    # A reload sent the moment the daemon owns its name (systemd counts a Type=dbus service as started then)
    # neither kills it nor is lost.
    code = daemon.terminate()
    check(code == 0, "beacond exited %s on SIGTERM" % code)
    world.write_settings(good)
    daemon = world.start_daemon()
    world.write_settings("[authorization]\nprompt = \"deny\"\n")
    os.kill(daemon.pid, signal.SIGHUP)

    def prompt():
        try:
            return world.admin.status()["Prompt"]
        except dbus.exceptions.DBusException:
            return None
    reloaded = pump_until(lambda: not daemon.running() or prompt() == "deny", SIGNAL_TIMEOUT)
    check(daemon.wait_exit(0.2) is None, "a SIGHUP right after start killed beacond (exit %s)"
          % daemon.process.returncode)
    check(reloaded, "a SIGHUP right after start was not applied: Prompt %r" % prompt())
    world.alive()


# MARK: 9. decisions survive restarts

def test_restart_persistence(suite):
    world = suite.world()
    daemon = world.start_daemon()
    demo = world.client(DEMO)
    demo.wait_status("notDetermined")
    world.admin.set_authorization(DEMO, "authorizedAlways")
    demo.wait_status("authorizedAlways")
    code = daemon.terminate()
    check(code == 0, "beacond exited %s on SIGTERM; stderr: %s" % (code, daemon.stderr()[-800:]))

    daemon = world.start_daemon()
    again = world.client(DEMO)
    again.wait_status("authorizedAlways")

    # kill -9 right after the grant's reply: the decision was durable before it was acknowledged.
    world.admin.set_authorization(OTHER, "authorizedWhenInUse")
    daemon.kill()
    check(daemon.process.returncode == -signal.SIGKILL, "beacond was not killed: %s" % daemon.process.returncode)
    daemon = world.start_daemon()
    other = world.client(OTHER)
    other.wait_status("authorizedWhenInUse")
    world.client(DEMO).wait_status("authorizedAlways")

    # A second beacond on the same bus (with its own state directory: one on the same directory is refused
    # earlier, promises_test.py test 6) is refused and leaves the first alone.
    from harness import Daemon
    second = Daemon(world.beacond, world.address, world.config_dir, os.path.join(world.directory, "state-second"),
                    world.fifo, world.directory, "beacond-second")
    world.daemons.append(second)
    code = second.wait_exit(10)
    check(code == 1 and "already owns org.beacond" in second.stderr(),
          "a second beacond on the bus: exit %s, stderr %s" % (code, second.stderr()[-600:]))
    world.alive()

    # Location services off survives a restart too.
    suite.services(world, on=False)
    check(not bool(world.admin.get(MANAGER_PATH, MANAGER, "LocationServicesEnabled")), "services still on")
    code = daemon.terminate()
    check(code == 0, "beacond exited %s on SIGTERM" % code)
    daemon = world.start_daemon()
    check(not bool(world.admin.get(MANAGER_PATH, MANAGER, "LocationServicesEnabled")),
          "LocationServicesEnabled is true after a restart")
    restricted = world.client(DEMO)
    restricted.wait_status("restricted")
    stored = {app["AppId"]: app["AuthorizationStatus"] for app in world.admin.status()["Apps"]}
    check(stored.get(DEMO) == "authorizedAlways", "the stored decision was lost while services were off: %r" % stored)
    suite.services(world, on=True)
    restricted.wait_status("authorizedAlways")
    world.alive()

    # A stop sent the moment the daemon owns its name (systemd counts it as started then) is graceful too.
    code = daemon.terminate()
    check(code == 0, "beacond exited %s on SIGTERM" % code)
    daemon = world.start_daemon()
    code = daemon.terminate()
    check(code == 0, "beacond exited %s on a SIGTERM sent right after it took org.beacond" % code)


# MARK: 10. administrator changes apply at once

def test_admin_changes_apply(suite):
    world = suite.world()
    world.start_daemon()
    demo = world.authorized_client(DEMO, "authorizedAlways")
    demo.start_monitoring("lobby", DEMO_UUID)
    demo.wait("DidStartMonitoring")
    demo.start_ranging(DEMO_UUID)

    world.admin.set_authorization(DEMO, "authorizedWhenInUse")
    demo.wait_status("authorizedWhenInUse")
    failed = demo.wait("MonitoringDidFail")
    check(plain(failed.args[0]).get("Identifier") == "lobby", "MonitoringDidFail region %r" % plain(failed.args[0]))
    check(str(failed.args[1]) == ERROR + "NotAuthorized", "MonitoringDidFail error %r" % str(failed.args[1]))
    check("authorizedAlways" in str(failed.args[2]), "MonitoringDidFail message %r" % str(failed.args[2]))
    check(list(demo.prop("MonitoredRegions")) == [], "MonitoredRegions after revoking Always: %r"
          % plain(demo.prop("MonitoredRegions")))
    check(str(demo.prop("AuthorizationStatus")) == "authorizedWhenInUse", "AuthorizationStatus property")
    # WhenInUse may still range while in use.
    check(plain(demo.prop("RangedConstraints")) == [{"UUID": DEMO_UUID}], "ranging stopped by the downgrade")

    world.admin.admin("SetLocationServicesEnabled", "b", False)
    demo.wait_status("restricted")
    ranging_failed = demo.wait("RangingDidFail")
    check(str(ranging_failed.args[1]) == ERROR + "LocationServicesDisabled",
          "RangingDidFail error %r" % str(ranging_failed.args[1]))
    check("services" in str(ranging_failed.args[2]), "RangingDidFail message %r" % str(ranging_failed.args[2]))
    expect_error(lambda: demo.start_ranging(DEMO_UUID), ERROR + "LocationServicesDisabled", "beaconctl services on")
    world.admin.admin("SetLocationServicesEnabled", "b", True)
    demo.wait_status("authorizedWhenInUse")

    world.admin.admin("ResetAuthorization", "s", DEMO)
    demo.wait_status("notDetermined")
    world.admin.set_authorization(DEMO, "denied")
    demo.wait_status("denied")
    check(str(demo.lm("RequestWhenInUseAuthorization")) == "denied", "a denied app's request changed its status")
    world.alive()


# MARK: 11. a client's connection closes

def test_client_connection_closes(suite):
    world = suite.world()
    world.start_daemon()
    watcher = world.connect()
    watcher.admin("WatchEvents")

    def closed(path):
        return watcher.collector.wait("Event", where=lambda s: str(s.args[0]) == "ClientClosed"
                                      and str(s.args[1].get("Client", "")) == path,
                                      what="Event('ClientClosed') for %s" % path)

    ranger = world.authorized_client(OTHER, "authorizedWhenInUse")
    ranger.start_ranging(DEMO_UUID)
    ranger_path = ranger.path
    check(ranger_path in [entry["Path"] for entry in world.admin.clients()], "the ranging client is not listed")
    ranger.close()
    closed(ranger_path)
    check(ranger_path not in [entry["Path"] for entry in world.admin.clients()],
          "a closed WhenInUse client is still listed: %r" % world.admin.clients())

    demo = world.authorized_client(DEMO, "authorizedAlways")
    demo.start_monitoring("lobby", DEMO_UUID)
    feeder = world.feeder()
    feeder.wait_for_fifo()
    feeder.start(0.2, beacon_uuid=DEMO_UUID, major=3, minor=4)
    demo.wait("DidEnterRegion")
    demo_path = demo.path
    demo.close()
    closed(demo_path)
    listed = [entry for entry in world.admin.clients() if entry["Path"] == demo_path]
    check(len(listed) == 1 and listed[0]["Connected"] is False and listed[0]["MonitoredRegions"] == 1,
          "the disconnected Always client: %r" % listed)
    regions = [region for region in world.admin.status()["Regions"] if region.get("Client") == demo_path]
    check(len(regions) == 1 and regions[0]["Identifier"] == "lobby" and regions[0]["State"] == "inside",
          "GetStatus Regions after the disconnect: %r" % world.admin.status()["Regions"])
    check(bool(world.admin.get(MANAGER_PATH, MANAGER, "Scanning")), "scanning stopped with the Always region kept")

    successor = world.client(DEMO)
    successor.wait_status("authorizedAlways")
    taken = plain(successor.prop("MonitoredRegions"))
    check([region["Identifier"] for region in taken] == ["lobby"], "the new client's MonitoredRegions: %r" % taken)
    check(demo_path not in [entry["Path"] for entry in world.admin.clients()], "the old client is still listed")
    successor.collector.expect_none(1.5, "DidEnterRegion", path=successor.path,
                                    what="DidEnterRegion while the beacon is still present")
    successor.lm("RequestState", "s", "lobby")
    successor.wait("DidDetermineState", where=lambda s: str(s.args[0]) == "inside",
                   what="DidDetermineState('inside') for the taken-over region")
    feeder.stop()
    world.alive()


# MARK: 12. introspection, properties and the event watch from real tools

def test_introspection_properties_events(suite):
    world = suite.world()
    world.start_daemon()
    demo = world.authorized_client(DEMO, "authorizedAlways")

    # Introspection is open to everyone. busctl is never the client's owner (its own connection), so on a
    # client object it can show the XML but not the property values: those are the owner's (test 4).
    for as_nobody in (False, True):
        result = world.busctl("introspect", "--xml-interface", "org.beacond", demo.path, as_nobody=as_nobody)
        check(result.returncode == 0, "busctl introspect --xml-interface %s: %s" % (demo.path, describe_result(result)))
        for word in ('interface name="org.beacond.LocationManager1"', 'method name="StartMonitoring"',
                     'signal name="DidRangeBeacons"', 'signal name="MonitoringDidFail"',
                     'property name="AuthorizationStatus" type="s" access="read"',
                     'property name="RangedConstraints" type="aa{sv}"', "org.freedesktop.DBus.Properties"):
            check(word in result.stdout, "busctl introspect lacks %s: %s" % (word, result.stdout[:1500]))
        result = world.busctl("introspect", "org.beacond", MANAGER_PATH, as_nobody=as_nobody)
        check(result.returncode == 0, "busctl introspect %s: %s" % (MANAGER_PATH, describe_result(result)))
        for word in (".RegisterClient", ".GetStatus", ".Event", '.Version                            property  s         "'):
            check(word in result.stdout, "busctl introspect /org/beacond lacks %r: %s" % (word, result.stdout[:3000]))
    values = world.busctl("introspect", "org.beacond", demo.path)
    check(values.returncode != 0 and "another connection" in values.stderr,
          "busctl read a client's property values from another connection: %s" % describe_result(values))
    result = world.gdbus("introspect", "--dest", "org.beacond", "--object-path", MANAGER_PATH)
    check(result.returncode == 0, "gdbus introspect: %s" % describe_result(result))
    for word in ("interface org.beacond.Manager1", "interface org.beacond.Admin1", "RegisterClient(in  s app_id",
                 "GetStatus(out a{sv} status)", "Event(s kind,", "readonly s Version", "readonly b Scanning",
                 "node client"):
        check(word in result.stdout, "gdbus introspect lacks %r: %s" % (word, result.stdout[:2000]))

    version = world.busctl("get-property", "org.beacond", MANAGER_PATH, MANAGER, "Version")
    expected_version = run_tool([suite.beacond, "--version"]).stdout.strip()
    check(version.returncode == 0 and version.stdout.strip() == 's "%s"' % expected_version,
          "Version %r, beacond --version says %r" % (version.stdout, expected_version))

    def scanning():
        result = world.busctl("get-property", "org.beacond", MANAGER_PATH, MANAGER, "Scanning")
        check(result.returncode == 0, "busctl get-property Scanning: %s" % describe_result(result))
        return result.stdout.strip()

    check(scanning() == "b false", "Scanning with nothing monitored")
    watcher = world.connect()
    watcher.admin("WatchEvents")
    demo.start_monitoring("lobby", DEMO_UUID)
    check(scanning() == "b true", "Scanning while a region is monitored")
    watcher.collector.wait("PropertiesChanged", path=MANAGER_PATH, interface=PROPERTIES,
                           where=lambda s: str(s.args[0]) == MANAGER and s.args[1].get("Scanning") is not None
                           and bool(s.args[1]["Scanning"]), what="PropertiesChanged(Scanning true)")
    event = watcher.collector.wait("Event", where=lambda s: str(s.args[0]) == "DidStartMonitoring",
                                   what="Event('DidStartMonitoring')")
    check(str(event.args[1]["AppId"]) == DEMO and str(event.args[1]["Client"]) == demo.path,
          "Event data %r" % plain(event.args[1]))
    feeder = world.feeder()
    feeder.wait_for_fifo()
    feeder.start(0.2, beacon_uuid=DEMO_UUID, major=1, minor=2)
    entered = watcher.collector.wait("Event", where=lambda s: str(s.args[0]) == "DidEnterRegion",
                                     what="Event('DidEnterRegion')")
    check(plain(entered.args[1]["Region"])["Identifier"] == "lobby", "DidEnterRegion event %r" % plain(entered.args[1]))
    check(isinstance(entered.args[1]["Timestamp"], dbus.UInt64), "Event data without a Timestamp t")
    demo.start_ranging(DEMO_UUID)
    watcher.collector.wait("Event", where=lambda s: str(s.args[0]) == "DidRangeBeacons",
                           what="Event('DidRangeBeacons')")
    watcher.admin("UnwatchEvents")
    watcher.admin("GetStatus")  # a round trip: events queued before UnwatchEvents have arrived
    pump_until(lambda: False, 0)
    demo.lm("StopMonitoring", "s", "lobby")
    watcher.collector.expect_none(2.0, "Event", what="Event after UnwatchEvents")
    demo.wait("DidRangeBeacons", where=with_beacon, what="DidRangeBeacons (events were still happening)")

    demo.lm("StopRanging", "a{sv}", {"UUID": DEMO_UUID})
    check(scanning() == "b false", "Scanning after the last region and constraint stopped")
    watcher.collector.wait("PropertiesChanged", path=MANAGER_PATH, interface=PROPERTIES,
                           where=lambda s: str(s.args[0]) == MANAGER and s.args[1].get("Scanning") is not None
                           and not bool(s.args[1]["Scanning"]), what="PropertiesChanged(Scanning false)")

    # Close(): the object goes away and the client is no longer listed.
    path = demo.path
    demo.lm("Close")
    check(path not in [entry["Path"] for entry in world.admin.clients()], "a closed client is still listed")
    expect_error(lambda: demo.lm("SetInUse", "b", True), "org.freedesktop.DBus.Error.UnknownObject")
    feeder.stop()
    world.alive()


# MARK: 13. a scanner that cannot start

def test_scanner_failure(suite):
    world = suite.world()
    world.start_daemon()
    # beacond made the FIFO at start (test 16); a regular file in its place makes the scanner's start fail.
    os.unlink(world.fifo)
    with open(world.fifo, "w") as blocker:
        blocker.write("not a fifo\n")
    demo = world.authorized_client(DEMO, "authorizedAlways")
    demo.start_monitoring("lobby", DEMO_UUID)
    status = plain(world.admin.status())
    check(status["ScannerState"].startswith("failed: ") and "not a FIFO" in status["ScannerState"],
          "ScannerState %r" % status["ScannerState"])
    check(status["Scanning"] is False, "Scanning %r with a broken scanner" % status["Scanning"])
    regions = status["Regions"]
    check(len(regions) == 1 and regions[0]["State"] == "unknown", "regions %r" % regions)
    # Blind is not outside: no exit, no state change is invented while nothing can be seen.
    demo.collector.expect_none(3.0, "DidExitRegion", path=demo.path, what="DidExitRegion while the scanner is broken")
    check(plain(world.admin.status())["Regions"][0]["State"] == "unknown", "region left unknown while blind")
    world.alive()


# MARK: 14. the bluez scanner against a fake bluetoothd: discovery, a stationary beacon, bluetoothd restarting

def test_bluez_scanner_lifecycle(suite):
    world = suite.world()
    bluez = {"fake": fake_bluez.FakeBluez(world.address), "advertising": True}
    world.start_daemon(scanner="bluez:hci0")
    demo = world.authorized_client(DEMO, "authorizedAlways")
    demo.start_monitoring("lobby", DEMO_UUID)
    check(pump_until(lambda: bluez["fake"].discovering, SIGNAL_TIMEOUT), "beacond never called StartDiscovery")
    wanted = bluez["fake"].filters[-1] if bluez["fake"].filters else {}
    check(str(wanted.get("Transport")) == "le" and bool(wanted.get("DuplicateData")) and int(wanted.get("RSSI", 0)) == -127,
          "discovery filter %r" % wanted)

    def advertise():
        if bluez["advertising"]:
            bluez["fake"].advertise(DEMO_UUID, 1, 2, -60)
        return True
    source = GLib.timeout_add(300, advertise)
    try:
        demo.wait("DidEnterRegion", what="DidEnterRegion through bluetoothd's reports")
        # A beacon that keeps advertising: 2.5 exit timeouts, no exit.
        demo.collector.expect_none(5.0, "DidExitRegion", path=demo.path, what="DidExitRegion for a beacon still advertising")
        status = plain(world.admin.status())
        check(status["ScannerState"] == "scanning" and "bluez" in status["ScannerDetail"],
              "ScannerState %r, ScannerDetail %r" % (status["ScannerState"], status["ScannerDetail"]))
        check([adapter["Name"] for adapter in status["Adapters"]] == ["hci0"], "Adapters %r" % status["Adapters"])

        # bluetoothd stops: the region becomes unknown, never exited, while beacond cannot see.
        bluez["advertising"] = False
        bluez["fake"].close()
        demo.wait("DidDetermineState", where=lambda signal: str(signal.args[0]) == "unknown",
                  what="DidDetermineState('unknown') when bluetoothd stops")
        waiting = plain(world.admin.status())["ScannerState"]
        check(waiting.startswith("waiting: bluetoothd stopped"), "ScannerState %r" % waiting)
        demo.collector.expect_none(3.0, "DidExitRegion", path=demo.path, what="DidExitRegion while bluetoothd was gone")

        # bluetoothd is back: discovery resumes by itself, the beacon is inside again without a new entry.
        entries = len(demo.collector.since(0, "DidEnterRegion", path=demo.path))
        bluez["fake"] = fake_bluez.FakeBluez(world.address)
        bluez["advertising"] = True
        check(pump_until(lambda: bluez["fake"].discovering, 3), "discovery did not resume within 3 s of bluetoothd's return")
        demo.wait("DidDetermineState", where=lambda signal: str(signal.args[0]) == "inside",
                  what="DidDetermineState('inside') after bluetoothd came back")
        pump_for(1.0)
        check(len(demo.collector.since(0, "DidEnterRegion", path=demo.path)) == entries,
              "a second DidEnterRegion after bluetoothd restarted: the beacon never left")
        check(not demo.collector.since(0, "DidExitRegion", path=demo.path), "a DidExitRegion was reported")

        # The beacon goes away for real: exactly one exit.
        bluez["advertising"] = False
        demo.wait("DidExitRegion", timeout=6, what="DidExitRegion after the beacon stopped")
    finally:
        GLib.source_remove(source)
    demo.lm("StopMonitoring", "s", "lobby")
    check(pump_until(lambda: bluez["fake"].stops >= 1, SIGNAL_TIMEOUT),
          "beacond did not release its discovery session (StopDiscovery) when nobody monitored any more")
    world.alive()


# MARK: 15. a replay: capture that cannot be played

def write_replay_capture(path, records=3000):
    """A hex-lines capture of DEMO_UUID 1/2: untimed, so played one record per 100 ms (3000: five minutes)."""
    with open(path, "w") as file:
        file.write(hci.ibeacon_line(DEMO_UUID, 1, 2) * records)


def test_unplayable_replay_capture(suite):
    """Issue 21: `--scanner replay:` at a missing, empty, garbage or directory path, /dev/zero or a FIFO nobody
    writes started "idle", the capture being read only once someone monitored. Expect exit 78 at start naming the
    path, what it is and the fix (the FIFO decided from stat, never opened, so it cannot hang the start), from
    --scanner and from [scanner] source alike; on reload (Admin1.Reload, SIGHUP) expect the new source rejected,
    said in the reply, the log and GetStatus ConfigurationError, and the old capture still playing."""
    world = suite.world()
    bad = os.path.join(world.directory, "bad")
    garbage = bytes(range(256)) * 4
    cases = [("missing", "No such file or directory"), ("empty", "empty file (0 bytes)"),
             ("garbage", "not a capture file"), ("directory", "it is a directory, not a regular file"),
             ("/dev/zero", "it is a character device, not a regular file"),
             ("fifo", "it is a FIFO (named pipe), not a regular file")]
    for kind, what in cases:
        path = kind if kind.startswith("/") else bad + "-" + kind
        if kind == "empty":
            open(path, "w").close()
        elif kind == "garbage":
            with open(path, "wb") as file:
                file.write(garbage)
        elif kind == "directory":
            os.mkdir(path)
        elif kind == "fifo":
            os.mkfifo(path)
        expect_config_exit(world, "--scanner", None, "cannot start", "cannot replay " + path, what, "Fix:",
                           scanner="replay:" + path)
    settings = DEFAULT_SETTINGS + "[scanner]\nsource = \"replay:%s\"\n"
    world.write_settings(settings % "/dev/zero")
    expect_config_exit(world, world.settings_path, 4, "cannot replay /dev/zero", "character device", scanner="")

    # Reload: the daemon plays a good capture from [scanner] source; a region is inside.
    good = os.path.join(world.directory, "good.txt")
    write_replay_capture(good)
    world.write_settings(settings % good)
    daemon = world.start_daemon(scanner="")
    watcher = world.connect()
    watcher.admin("WatchEvents")
    demo = world.authorized_client(DEMO, "authorizedAlways")
    demo.start_monitoring("lobby", DEMO_UUID)
    demo.wait("DidEnterRegion", what="DidEnterRegion from the replayed capture")

    def last_seen():
        return int(plain(world.admin.status())["Regions"][0]["LastSeen"])

    for source, reload in (("/dev/zero", "Reload"), (bad + "-directory", "SIGHUP")):
        world.write_settings(settings % source)
        if reload == "Reload":
            reply = str(world.admin.admin("Reload"))
        else:
            os.kill(daemon.pid, signal.SIGHUP)
        event = watcher.collector.wait("Event", where=lambda s: str(s.args[0]) == "ConfigurationRejected",
                                       what="Event('ConfigurationRejected') for replay:%s" % source)
        error = str(event.args[1]["Error"])
        check(reload == "SIGHUP" or reply == error, "Reload answered %r, the event said %r" % (reply, error))
        where = "%s:4: cannot replay %s" % (world.settings_path, source)
        check(error.startswith(where), "%s of replay:%s answered %r, expected %r..." % (reload, source, error, where))
        status = plain(world.admin.status())
        check(status["ConfigurationError"] == error, "ConfigurationError %r" % status["ConfigurationError"])
        check(where in daemon.stderr(), "the log does not say %r: %s" % (where, daemon.stderr()[-800:]))
        check(status["Scanner"] == "replay:" + good and status["ScannerState"] == "scanning",
              "after the rejected reload: Scanner %r, ScannerState %r" % (status["Scanner"], status["ScannerState"]))
        # Still playing the old capture: the region keeps being seen.
        seen = last_seen()
        check(pump_until(lambda: last_seen() > seen, SIGNAL_TIMEOUT), "the region was not seen again after the reload")
    check(not demo.collector.since(0, "DidExitRegion", path=demo.path), "a DidExitRegion after a rejected reload")

    # The good capture again: accepted, the error cleared.
    world.write_settings(settings % good)
    check(str(world.admin.admin("Reload")) == "", "a reload back to the good capture was rejected")
    check(plain(world.admin.status())["ConfigurationError"] == "", "ConfigurationError stays after a good reload")
    world.alive()


# MARK: 16. the fifo scanner as docs/daemon.md says

def daemon_doc():
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "daemon.md")) as file:
        return file.read()


def documented_fifo_echo():
    """docs/daemon.md's `echo '…' > PATH` under "Feeding a `fifo:` scanner": the command, its hex and its PATH."""
    parts = daemon_doc().split("### Feeding a `fifo:` scanner", 1)
    check(len(parts) == 2, "docs/daemon.md has no section \"Feeding a `fifo:` scanner\"")
    match = re.search(r"^echo '(04(?: [0-9a-f]{2})+)' > (/\S+)$", parts[1], re.M)
    check(match is not None, "docs/daemon.md's fifo section has no line echo '04 …' > PATH")
    return match.group(0), match.group(1), match.group(2)


def test_fifo_as_documented(suite):
    """Issue 38: the FIFO was made only when scanning started, so an `echo` before then wrote a regular file (and
    scanning then failed), and docs/daemon.md gave no complete line. Expect the FIFO right after start, before any
    client; the documented `echo` (read from docs/daemon.md, so the doc cannot drift) waiting while nobody scans, as
    the doc says, then returning once a client ranges, and the beacon it describes ranged (E2C56DB5… 100/0, RSSI
    -77); echoed again while ranging, it returns at once and is ranged again. A regular file at the path is a
    configuration error at start (exit 78 naming --scanner and the fix), and on reload (the old FIFO stays)."""
    command, hex_line, documented_path = documented_fifo_echo()
    world = suite.world()
    settings = DEFAULT_SETTINGS + "[scanner]\nsource = \"fifo:%s\"\n"
    world.write_settings(settings % world.fifo)
    world.start_daemon(scanner="")
    try:
        kind = os.stat(world.fifo).st_mode
    except FileNotFoundError:
        kind = None
    check(kind is not None and stat.S_ISFIFO(kind), "no FIFO at %s right after start, before any client (%s)"
          % (world.fifo, "nothing there" if kind is None else "something else"))
    check(stat.S_IMODE(kind) == 0o660, "the FIFO's mode is %o, the doc says 0660" % stat.S_IMODE(kind))
    echo = command.replace(documented_path, world.fifo)
    waiting = subprocess.Popen(["sh", "-c", echo], start_new_session=True)
    try:
        pump_for(1.0)
        check(waiting.poll() is None, "the documented echo returned (%s) while nobody scans: the doc says it waits"
              % waiting.returncode)
        demo = world.authorized_client(DEMO, "authorizedWhenInUse")
        demo.start_ranging(DEMO_UUID)
        check(pump_until(lambda: waiting.poll() is not None, SIGNAL_TIMEOUT),
              "the documented echo still waits %d s after a client ranges" % SIGNAL_TIMEOUT)
        check(waiting.returncode == 0, "the documented echo exited %s" % waiting.returncode)
    finally:
        if waiting.poll() is None:
            os.killpg(waiting.pid, signal.SIGKILL)
            waiting.wait()

    def documented_beacon(signal):
        return any(plain(beacon).get("Major") == 100 and plain(beacon).get("Minor") == 0
                   and plain(beacon).get("RSSI") == -77 for beacon in signal.args[0])
    ranged = demo.wait("DidRangeBeacons", where=documented_beacon, what="DidRangeBeacons with the documented beacon")
    beacon = [beacon for beacon in ranged.args[0] if plain(beacon)["Major"] == 100][0]
    check_beacon(beacon, 100, 0)
    said = "100:0 -77 dBm %.2f m %s" % (plain(beacon)["Accuracy"], plain(beacon)["Proximity"])
    check(said in daemon_doc(), "docs/daemon.md does not say what beaconctl client prints of the ranged beacon: %r" % said)
    # While ranging: the echo returns at once, and the beacon is heard again.
    mark = demo.collector.mark()
    result = run_tool(["sh", "-c", echo], timeout=SIGNAL_TIMEOUT)
    check(result.returncode == 0, "the documented echo while ranging: %s" % describe_result(result))
    check(pump_until(lambda: demo.collector.since(mark, "DidRangeBeacons", path=demo.path, where=documented_beacon),
                     SIGNAL_TIMEOUT), "the documented beacon was not ranged again after a second echo")

    # Something else at the path: refused at start with the fix, and on reload (fifo: from beacond.toml).
    blocked = os.path.join(world.directory, "blocked")
    with open(blocked, "w") as file:
        file.write(hex_line + "\n")
    expect_config_exit(world, "--scanner", None, "cannot start", blocked, "regular file", "not a FIFO", "Fix:",
                       scanner="fifo:" + blocked)
    world.write_settings(settings % blocked)
    reply = str(world.admin.admin("Reload"))
    check(reply.startswith("%s:4: " % world.settings_path) and "not a FIFO" in reply,
          "a reload to fifo:%s answered %r" % (blocked, reply))
    check(plain(world.admin.status())["Scanner"] == "fifo:" + world.fifo, "the rejected reload changed the scanner")
    # A new fifo: path in a reload is made at once, before anyone scans it.
    fresh = os.path.join(world.directory, "fresh")
    world.write_settings(settings % fresh)
    world.daemon.process.send_signal(signal.SIGHUP)
    check(pump_until(lambda: os.path.exists(fresh) and stat.S_ISFIFO(os.stat(fresh).st_mode), SIGNAL_TIMEOUT),
          "a reload to fifo:%s did not make the FIFO" % fresh)
    world.alive()


TESTS = [
    ("0 hci helper lines decode as intended (beacond replay)", test_hci_helper_matches_decoder),
    ("1 full flow: register, request, grant, monitor, enter, exit", test_full_flow),
    ("2 WhenInUse client refused monitoring", test_when_in_use_refused_monitoring),
    ("3 ranging paused while not in use", test_ranging_paused_while_not_in_use),
    ("4 second client cannot call or hear the first", test_second_client_isolation),
    ("5 non-admin refused Admin1", test_non_admin_refused),
    ("6 the 21st region is refused", test_region_limit),
    ("7 bad calls answered, daemon alive", test_bad_calls),
    ("8 bad configuration files (start and SIGHUP)", test_bad_configuration),
    ("9 decisions survive restarts", test_restart_persistence),
    ("10 administrator changes apply at once", test_admin_changes_apply),
    ("11 client connection closes", test_client_connection_closes),
    ("12 introspection, properties, event watch", test_introspection_properties_events),
    ("13 a scanner that cannot start is reported, regions stay unknown", test_scanner_failure),
    ("14 bluez scanner: discovery, stationary beacon, bluetoothd restarting", test_bluez_scanner_lifecycle),
    ("15 a replay: capture that cannot be played: exit 78 at start, rejected on reload", test_unplayable_replay_capture),
    ("16 the fifo scanner as documented: the FIFO made at start, the doc's echo ranged", test_fifo_as_documented),
]


def main(argv, tests=None):
    tests = TESTS if tests is None else tests
    arguments = [argument for argument in argv[1:] if not argument.startswith("-k")]
    selected = [argument[2:] or None for argument in argv[1:] if argument.startswith("-k")]
    beacond = arguments[0] if len(arguments) > 0 else os.environ.get("BEACOND")
    beaconctl = arguments[1] if len(arguments) > 1 else os.environ.get("BEACONCTL")
    if not beacond or not os.access(beacond, os.X_OK):
        sys.exit("usage: daemon_test.py BEACOND [BEACONCTL] [-kNAME]  (or set $BEACOND); %r is not executable"
                 % beacond)
    if os.geteuid() != 0:
        sys.exit("daemon_test.py needs root: the test apps are declared for user root and the non-admin "
                 "checks switch to nobody with setpriv")
    beacond = os.path.abspath(beacond)
    beaconctl = os.path.abspath(beaconctl) if beaconctl else None

    # Stopped from outside: clean up at once and exit. Raising instead would not do: a Python signal handler
    # may run inside a GLib or D-Bus callback, where PyGObject prints the exception and carries on.
    def interrupted(signum, frame):
        remove_everything()
        print("interrupted by signal %d; every process this suite started is stopped" % signum, flush=True)
        os._exit(128 + signum)
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, interrupted)
    atexit.register(remove_everything)

    suite = Suite(beacond, beaconctl)
    print("beacond %s; admin decisions via %s" % (beacond, suite.admin_tool), flush=True)
    passed = failed = 0
    began = time.monotonic()
    for name, test in tests:
        if selected and not any(name.split()[0] == word if word.isdigit() else word in name
                                for word in selected if word):
            continue
        suite.notes = []
        started = time.monotonic()
        try:
            test(suite)
        except TestFailure as failure:
            failed += 1
            print("FAIL  %s (%.1f s): %s" % (name, time.monotonic() - started, failure), flush=True)
        except Exception as error:  # an unexpected error is a failure with its traceback
            failed += 1
            print("FAIL  %s (%.1f s): %s: %s\n%s" % (name, time.monotonic() - started, type(error).__name__, error,
                                                     traceback.format_exc(limit=6)), flush=True)
        else:
            passed += 1
            notes = sorted(set(suite.notes))
            print("PASS  %s (%.1f s)%s" % (name, time.monotonic() - started,
                                           " [" + ", ".join(notes) + "]" if notes else ""), flush=True)
        finally:
            suite.close_worlds()
    print("total %.1f s" % (time.monotonic() - began))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
