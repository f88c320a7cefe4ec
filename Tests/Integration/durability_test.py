#!/usr/bin/python3
"""beacond's durability and fault tests: nothing lost, nothing false. The real daemon on a private dbus-daemon,
fed through its fifo scanner, killed with SIGKILL, restarted, starved of disk, and left by its bus and clients.

    durability_test.py [BEACOND [BEACONCTL]] [-kNUMBER|-kWORDS ...]

Each test states its expectation in its docstring. Prints PASS/FAIL per test, then "N passed, N failed"; exits 1
when anything failed. Needs root (apps are declared for root; the disk-full test mounts a small tmpfs).
"""
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import dbus

from daemon_test import DEMO, OTHER, main
import hci
from harness import (DEFAULT_APPS, DEMO_UUID, ERROR, LOCATION_MANAGER, MANAGER, MANAGER_PATH, PrivateBus,
                     TestFailure, check, expect_error, plain, pump_for, pump_until, rss_mb)

HERE = os.path.dirname(os.path.abspath(__file__))


def demo_regions(world, app=DEMO):
    return [region for region in world.admin.status()["Regions"] if region.get("AppId") == app]


def queued_count(world, app=DEMO):
    for entry in world.admin.status()["Apps"]:
        if entry.get("AppId") == app:
            return entry.get("QueuedEvents", 0)
    return 0


def region_state(world, identifier, app=DEMO):
    for region in demo_regions(world, app):
        if region.get("Identifier") == identifier:
            return region.get("State")
    return None


def wait_state(world, identifier, state, timeout=8):
    found = pump_until(lambda: region_state(world, identifier) == state, timeout)
    check(found, "region %s is %s, not %s, %g s on" % (identifier, region_state(world, identifier), state, timeout))


def entered_lobby(suite, settings=None):
    """A world whose Demo app (Always) monitors `lobby` with its beacon present and entered."""
    world = suite.world(**({"settings": settings} if settings else {}))
    world.start_daemon()
    demo = world.authorized_client(DEMO, "authorizedAlways")
    demo.start_monitoring("lobby", DEMO_UUID, Major=1)
    feeder = world.feeder()
    feeder.wait_for_fifo()
    feeder.start(interval=0.2, beacon_uuid=DEMO_UUID, major=1, minor=2)
    demo.wait("DidEnterRegion")
    return world, demo, feeder


def left_lobby(world):
    """Demo (Always) monitors `lobby` and its client disconnects (the region stays, detached); returns a feeder."""
    demo = world.authorized_client(DEMO, "authorizedAlways")
    demo.start_monitoring("lobby", DEMO_UUID, Major=1)
    demo.wait("DidStartMonitoring")
    demo.close()
    check(pump_until(lambda: all(not c["Connected"] for c in world.admin.clients()), 5), "the client is still connected")
    feeder = world.feeder()
    feeder.wait_for_fifo()
    return feeder


def event_info(signal):
    """The event dictionary after the region (Timestamp, Late, DroppedBefore)."""
    return plain(signal.args[-1])


# MARK: 1. restart with the beacon still there

def test_restart_beacon_present(suite):
    """kill -9 while inside; beacond restarts with the beacon still advertising. Expect: the region is back at
    once (under a disconnected client, without the app doing anything), becomes inside again with no
    DidEnterRegion to anyone; the app's next client takes it over, hears no entry and no late events; the app
    adding the identical region again keeps its state (DidDetermineState inside, no entry)."""
    world, demo, feeder = entered_lobby(suite)
    world.daemon.kill()
    demo.close()
    world.start_daemon()
    regions = demo_regions(world)
    check([r.get("Identifier") for r in regions] == ["lobby"], "regions after restart: %r" % regions)
    clients = world.admin.clients()
    check(len(clients) == 1 and not clients[0]["Connected"] and clients[0]["MonitoredRegions"] == 1,
          "the restored region's client: %r" % clients)
    wait_state(world, "lobby", "inside")
    check(queued_count(world) == 0, "an entry was queued although the beacon never left")

    again = world.client(DEMO, interface=LOCATION_MANAGER)
    again.wait_status("authorizedAlways")
    check([str(r["Identifier"]) for r in again.prop("MonitoredRegions")] == ["lobby"],
          "the new client did not take over lobby: %r" % plain(again.prop("MonitoredRegions")))
    again.collector.expect_none(3.0, "DidEnterRegion", what="DidEnterRegion for a beacon that never left")
    check(not again.collector.since(0, "DidExitRegion"), "an exit arrived although the beacon is present")

    mark = again.collector.mark()
    again.start_monitoring("lobby", DEMO_UUID, Major=1)
    again.wait("DidDetermineState", where=lambda s: str(s.args[0]) == "inside", what="DidDetermineState(inside)")
    again.collector.expect_none(1.0, "DidEnterRegion", what="DidEnterRegion after re-adding the same region")
    check(again.collector.since(mark, "DidStartMonitoring"), "no DidStartMonitoring for the re-added region")
    feeder.stop()
    world.alive()


# MARK: 2. restart after the beacon left

def saved_region(world, identifier):
    """The region's row in the state database (state, last_determined_state, last_seen_us), read with sqlite3."""
    import sqlite3
    with sqlite3.connect("file:%s?mode=ro" % os.path.join(world.state_dir, "state.sqlite"), uri=True) as db:
        return db.execute("SELECT state, last_determined_state, last_seen_us FROM monitored_region "
                          "WHERE identifier = ?", (identifier,)).fetchone()


def inside_then_gone_while_down(suite):
    """Demo (Always) monitors `lobby` (UUID+major+minor, exit_timeout = 3) and hears its beacon for 14 s: beacond's
    periodic save of last-seen times (every 10 s) has run, and the beacon went on for more than exit_timeout
    after it, so at the restart the saved last sighting + exit_timeout is already past (the case that lost the
    exit). The beacon stops, beacond is killed with SIGKILL 1 s later and started again on the same state
    directory but on a NEW fifo, so no sighting can reach the restarted daemon: lines written to the old fifo
    have no reader, and nobody writes to the new one. Returns (world, killed, restarted)."""
    world = suite.world(settings="[monitoring]\nexit_timeout = 3\n")
    world.start_daemon()
    demo = world.authorized_client(DEMO, "authorizedAlways")
    demo.start_monitoring("lobby", DEMO_UUID, Major=1, Minor=2)
    feeder = world.feeder()
    feeder.wait_for_fifo()
    feeder.start(interval=0.2, beacon_uuid=DEMO_UUID, major=1, minor=2)
    demo.wait("DidEnterRegion")
    pump_for(14.0)
    feeder.stop()
    written = feeder.written
    last_sighting = time.time()
    pump_for(1.0)
    killed = time.time()
    world.daemon.kill()
    demo.close()
    row = saved_region(world, "lobby")
    check(row is not None and row[0] == "inside" and row[1] == "inside",
          "the database does not hold lobby inside at the kill: %r" % (row,))
    check(row[2] is not None and row[2] / 1e6 < last_sighting - 0.5,
          "the saved last sighting is not older than the last real one (%r), so this does not test the stale case"
          % (row,))
    world.start_daemon(scanner="fifo:" + os.path.join(world.directory, "fifo-after-restart"))
    restarted = time.time()
    check(row[2] / 1e6 + 3 < restarted, "the saved last sighting + exit_timeout (%.2f) is not past at the restart "
          "(%.2f), so this does not test the stale case" % (row[2] / 1e6 + 3, restarted))
    check(feeder.written == written, "the feeder wrote after it was stopped")
    check(region_state(world, "lobby") == "unknown", "lobby is %s right after restart" % region_state(world, "lobby"))
    return world, killed, restarted


def test_restart_beacon_left(suite):
    """The beacon stops while beacond is down (see `inside_then_gone_while_down`: no sighting can reach the
    restarted daemon) and no client comes back until after the exit is due. Expect exactly one DidExitRegion,
    exit_timeout after scanning resumed (not before: the downtime is blind time), queued for the app; its next
    client gets it late, with the exit's original time; no entry at any point."""
    world, killed, restarted = inside_then_gone_while_down(suite)
    check(pump_until(lambda: queued_count(world) == 1, 8), "no exit queued for the app (queued: %d, lobby %s)"
          % (queued_count(world), region_state(world, "lobby")))
    queued_at = time.time()
    check(queued_at >= restarted + 2.5, "the exit came %.2f s after the restart, before exit_timeout of scanning"
          % (queued_at - restarted))
    pump_for(2.0)
    check(queued_count(world) == 1, "more than one event queued: %d" % queued_count(world))
    check(region_state(world, "lobby") == "outside", "lobby is %s" % region_state(world, "lobby"))

    again = world.client(DEMO, interface=LOCATION_MANAGER, register=False)
    registered = time.time()
    again.register()
    exited = again.wait("DidExitRegion")
    info = event_info(exited)
    check(info.get("Late") is True, "the queued exit is not marked late: %r" % info)
    when = info.get("Timestamp", 0) / 1e6
    check(restarted + 2.5 <= when <= registered, "the exit happened at %.2f, restart %.2f, register %.2f"
          % (when, restarted, registered))
    check(when - killed >= 3, "the exit came %.2f s after the kill (exit_timeout = 3)" % (when - killed))
    again.collector.expect_none(2.0, "DidExitRegion", what="a second DidExitRegion")
    check(not again.collector.since(0, "DidEnterRegion"), "an entry arrived")
    check(queued_count(world) == 0, "the delivered event is still queued")
    world.alive()


def test_restart_beacon_left_client_back_early(suite):
    """As test 2, but the app's next client registers 1 s after the restart, before the exit is due, and adds
    the identical region again as apps do at launch. Expect exactly one DidExitRegion, live (not late), still
    exit_timeout after scanning resumed: taking the region over must not give it a fresh exit timer; nothing
    queued; no entry."""
    world, killed, restarted = inside_then_gone_while_down(suite)
    pump_until(lambda: time.time() >= restarted + 1.0, 2)
    again = world.client(DEMO, interface=LOCATION_MANAGER)
    again.wait_status("authorizedAlways")
    check([str(r["Identifier"]) for r in again.prop("MonitoredRegions")] == ["lobby"],
          "the new client did not take over lobby: %r" % plain(again.prop("MonitoredRegions")))
    again.start_monitoring("lobby", DEMO_UUID, Major=1, Minor=2)
    exited = again.wait("DidExitRegion", timeout=6)
    info = event_info(exited)
    when = info.get("Timestamp", 0) / 1e6
    check(info.get("Late") is False, "a live exit is marked late: %r" % info)
    check(restarted + 2.5 <= when <= restarted + 3.6,
          "the exit came %.2f s after the restart; exit_timeout (3 s) after scanning resumed was due" % (when - restarted))
    again.collector.expect_none(2.0, "DidExitRegion", what="a second DidExitRegion")
    check(not again.collector.since(0, "DidEnterRegion"), "an entry arrived")
    check(queued_count(world) == 0, "an exit was queued although the app had a client: %d" % queued_count(world))
    world.alive()


# MARK: 3. the queue: order, lateness, bound, kill -9

def test_queue_order_bound(suite):
    """The Always app's client disconnects; its region enters and exits three times (six events, queue_limit = 3),
    then beacond is killed and restarted. Expect the app's next client to get the last three events in order
    (exit, enter, exit), each Late with its original, increasing time, the first saying 3 were dropped; a
    further client gets nothing; live events are marked not late."""
    settings = "[monitoring]\nexit_timeout = 1\n[background]\nqueue_limit = 3\n"
    world = suite.world(settings=settings)
    world.start_daemon()
    feeder = left_lobby(world)
    times = []
    for cycle in range(3):
        check(feeder.send(DEMO_UUID, 1, 2), "the FIFO has no reader")
        check(pump_until(lambda: region_state(world, "lobby") == "inside", 5), "cycle %d: no entry" % cycle)
        times.append(time.time())
        check(pump_until(lambda: region_state(world, "lobby") == "outside", 5), "cycle %d: no exit" % cycle)
    check(pump_until(lambda: queued_count(world) == 3, 3), "queued: %d, not 3" % queued_count(world))

    world.daemon.kill()
    world.start_daemon()
    check(queued_count(world) == 3, "after kill -9 the queue holds %d events, not 3" % queued_count(world))
    # Two registrations of the app back to back, in one loop turn of the daemon: the queue goes to one of them,
    # once (the first), never to both.
    again = world.client(DEMO, interface=LOCATION_MANAGER, register=False)
    paths = []
    for _ in range(2):
        again.bus.call_async("org.beacond", MANAGER_PATH, MANAGER, "RegisterClient", "s", [DEMO],
                             lambda path: paths.append(str(path)), lambda error: paths.append(error))
    check(pump_until(lambda: len(paths) == 2, 5), "the two RegisterClient calls were not answered: %r" % paths)
    check(all(isinstance(path, str) for path in paths), "a RegisterClient failed: %r" % paths)
    again.path = min(paths, key=lambda path: int(path.rsplit("/", 1)[1]))
    again.wait("DidExitRegion")
    check(pump_until(lambda: len([s for s in again.collector.signals
                                  if s.member in ("DidEnterRegion", "DidExitRegion")]) >= 3, 5), "fewer than 3 events")
    pump_for(0.5)
    events = [s for s in again.collector.signals if s.member in ("DidEnterRegion", "DidExitRegion")]
    check(len(events) == 3 and all(s.path == again.path for s in events),
          "the queue went out %d times over the two registrations: %r" % (len(events), [(s.member, s.path) for s in events]))
    check([s.member for s in events] == ["DidExitRegion", "DidEnterRegion", "DidExitRegion"],
          "delivered: %r" % [s.member for s in events])
    infos = [event_info(s) for s in events]
    check(all(i.get("Late") is True for i in infos), "not all late: %r" % infos)
    stamps = [i["Timestamp"] for i in infos]
    check(stamps == sorted(stamps) and len(set(stamps)) == 3, "timestamps not increasing: %r" % stamps)
    check(abs(stamps[1] / 1e6 - times[2]) < 1.0, "the last entry's time %.2f is not when it happened (%.2f)"
          % (stamps[1] / 1e6, times[2]))
    check(infos[0].get("DroppedBefore") == 3 and "DroppedBefore" not in infos[1],
          "drop count: %r" % infos)
    check(queued_count(world) == 0, "still queued after delivery: %d" % queued_count(world))

    # Now connected: a live entry is not late; a further client of the app gets no replay.
    feeder.send(DEMO_UUID, 1, 2)
    live = again.wait("DidEnterRegion", where=lambda s: event_info(s).get("Late") is False, what="a live entry")
    check(abs(event_info(live)["Timestamp"] / 1e6 - time.time()) < 2, "live timestamp %r" % event_info(live))
    third = world.client(DEMO, interface=LOCATION_MANAGER)
    third.collector.expect_none(1.0, "DidExitRegion", what="a replayed event")
    world.alive()


# MARK: 4. D-Bus activation

def test_activation(suite):
    """The app declares dbus_name and the bus has a .service file for it. Its client gone, its region is entered:
    beacond asks the bus to start the app, which registers and receives the entry, late. The exit that follows
    within activation_interval is queued but does not start the app again (rate limit)."""
    world = suite.world()
    output = os.path.join(world.directory, "activated.jsonl")
    service = os.path.join(world.directory, "services", "org.example.DemoApp.service")
    with open(service, "w") as file:
        file.write("[D-BUS Service]\nName=org.example.DemoApp\nExec=%s %s org.example.DemoApp %s %s 1.5\n"
                   % (sys.executable, os.path.join(HERE, "activated_app.py"), DEMO, output))
    world.write_app("demo.toml", DEFAULT_APPS["demo.toml"] + 'dbus_name = "org.example.DemoApp"\n')
    world.start_daemon()
    # The bus read its service directory when it started, before the file existed.
    world.admin.bus.call_blocking("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                  "ReloadConfig", "", [], timeout=5)
    feeder = left_lobby(world)
    check(feeder.send(DEMO_UUID, 1, 2), "the FIFO has no reader")

    def lines(path):
        try:
            with open(path) as file:
                return [line for line in file.read().splitlines() if line]
        except FileNotFoundError:
            return []
    check(pump_until(lambda: any('"DidEnterRegion"' in line for line in lines(output)), 10),
          "the activated app did not receive DidEnterRegion; beacond said: %s; the app: %s"
          % (world.daemon.stderr()[-2500:], lines(output + ".err")[-3:]))
    entry = [json.loads(line) for line in lines(output) if '"DidEnterRegion"' in line][0]
    check(entry["region"] == "lobby" and entry["event"].get("Late") is True, "the app got %r" % entry)
    check(len(lines(output + ".starts")) == 1, "started %d times" % len(lines(output + ".starts")))
    # The app exits after 1.5 s; the exit (2 s after the only sighting) is then queued, and not activated again.
    check(pump_until(lambda: queued_count(world) == 1, 8), "the exit was not queued (queued %d)" % queued_count(world))
    pump_for(1.0)
    check(len(lines(output + ".starts")) == 1, "the app was started again within activation_interval: %d starts"
          % len(lines(output + ".starts")))
    starts = [l for l in world.daemon.stderr().splitlines() if "starting org.example.DemoApp" in l]
    check(len(starts) == 1, "beacond asked the bus %d times: %r" % (len(starts), starts))
    world.alive()


# MARK: 5. kill -9 during writes

WRITER = textwrap.dedent("""
    import random, sys, dbus
    bus = dbus.bus.BusConnection(sys.argv[1])
    log = open(sys.argv[2], "a", buffering=1)
    manager = dbus.Interface(bus.get_object("org.beacond", "/org/beacond"), "org.beacond.Manager1")
    path = manager.RegisterClient(sys.argv[3])
    client = dbus.Interface(bus.get_object("org.beacond", path), "org.beacond.LocationManager1")
    rng = random.Random(int(sys.argv[4]))
    while True:
        identifier = "r%d" % rng.randrange(12)
        if rng.random() < 0.6:
            log.write("call start %s\\n" % identifier)
            client.StartMonitoring({"Identifier": identifier, "UUID": sys.argv[5], "Major": dbus.UInt16(rng.randrange(5))})
            log.write("ack start %s\\n" % identifier)
        else:
            log.write("call stop %s\\n" % identifier)
            try:
                client.StopMonitoring(identifier)
                log.write("ack stop %s\\n" % identifier)
            except dbus.DBusException as error:
                if "UnknownRegion" not in error.get_dbus_name():
                    raise
                log.write("ack stop %s\\n" % identifier)
""")


def test_kill_during_writes(suite):
    """A client changes its regions as fast as it can (StartMonitoring/StopMonitoring, each reply logged) while
    beacond is killed with SIGKILL at a random moment, five times. Expect after each restart: every region whose
    last acknowledged call was a start is there, every one whose last acknowledged call was a stop is not (the
    one call in flight may go either way), and the database opens cleanly (nothing moved aside)."""
    world = suite.world(settings="[monitoring]\nexit_timeout = 2\nmax_regions_per_client = 20\n")
    world.start_daemon()
    world.admin.set_authorization(DEMO, "authorizedAlways")
    rng = random.Random(5)
    script = os.path.join(world.directory, "writer.py")
    with open(script, "w") as file:
        file.write(WRITER)
    acknowledged_total = 0
    for round_number in range(5):
        log = os.path.join(world.directory, "writes-%d.log" % round_number)
        writer = subprocess.Popen([sys.executable, script, world.address, log, DEMO, str(round_number), DEMO_UUID],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        check(pump_until(lambda: os.path.exists(log) and os.path.getsize(log) > 200, 10), "the writer did not start")
        pump_for(rng.uniform(0.05, 0.6))
        world.daemon.kill()
        writer.wait(timeout=10)
        with open(log) as file:
            entries = [line.split() for line in file.read().splitlines() if line]
        last = {}
        in_flight = None
        for verb, operation, identifier in entries:
            if verb == "ack":
                last[identifier] = operation
                acknowledged_total += 1
                in_flight = None
            else:
                in_flight = identifier
        world.start_daemon()
        check("moved" not in world.daemon.stderr(), "the database was moved aside: %s" % world.daemon.stderr()[-500:])
        present = {r["Identifier"] for r in demo_regions(world)}
        for identifier, operation in last.items():
            if identifier == in_flight:
                continue
            if operation == "start":
                check(identifier in present, "round %d: acknowledged region %s lost (present %s)"
                      % (round_number, identifier, sorted(present)))
            else:
                check(identifier not in present, "round %d: region %s came back after an acknowledged stop"
                      % (round_number, identifier))
    suite.notes.append("%d acknowledged changes over 5 kills" % acknowledged_total)
    world.alive()


# MARK: 6. disk full

@contextlib.contextmanager
def full_disk(suite, settings):
    """A world whose state directory is a 2 MiB tmpfs, its daemon started and Demo's client Always, then the
    tmpfs filled to the last byte: yields (world, client, the filler file to delete)."""
    world = suite.world(settings=settings)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", world.state_dir],
                             capture_output=True, text=True)
    check(mounted.returncode == 0, "cannot mount a tmpfs on the state directory (needs root): %s" % mounted.stderr)
    try:
        world.start_daemon()
        demo = world.authorized_client(DEMO, "authorizedAlways")
        filler = os.path.join(world.state_dir, "filler")
        subprocess.run(["dd", "if=/dev/zero", "of=" + filler, "bs=4k"], capture_output=True)
        yield world, demo, filler
    finally:
        for daemon in world.daemons:
            daemon.close()
        subprocess.run(["umount", "-l", world.state_dir], capture_output=True)


def test_disk_full(suite):
    """The state directory is a 2 MiB tmpfs, filled to the last byte while the app changes regions. Expect: the
    change that cannot be saved answers org.beacond.Error.StateNotSaved saying the change is in effect, was not
    saved, and to free disk space; status shows StateError; beacond keeps serving. Once space is freed, beacond
    saves everything kept by itself (its retry, at most 5 s on), the next change is saved, and a restart shows all
    acknowledged and all in-effect regions."""
    with full_disk(suite, "[monitoring]\nexit_timeout = 2\nmax_regions_per_client = 20\n") as (world, demo, filler):
        refused = None
        in_effect = []
        for index in range(400):
            identifier = "r%d" % (index % 20)
            try:
                demo.start_monitoring(identifier, DEMO_UUID, Major=index % 7)
            except Exception as error:  # dbus.DBusException
                refused = error
                in_effect.append(identifier)
                break
        check(refused is not None, "400 changes on a full disk and none was refused")
        name = refused.get_dbus_name()
        message = refused.get_dbus_message()
        check(name == ERROR + "StateNotSaved", "refused with %s: %s" % (name, message))
        check("in effect" in message and "free disk space" in message, "the error does not say what to do: %s" % message)
        check(world.admin.status().get("StateError"), "status shows no StateError while the disk is full")
        check(in_effect[0] in [str(r["Identifier"]) for r in demo.prop("MonitoredRegions")],
              "the refused change is not in effect")
        world.alive()

        os.unlink(filler)
        # Saved by the backoff's next try (at most 5 s on), without a call.
        check(pump_until(lambda: world.admin.status().get("StateError") == "", 30),
              "StateError stays 30 s after space was freed: %r" % world.admin.status().get("StateError"))
        demo.start_monitoring("after", DEMO_UUID, Major=1)
        expected = sorted(str(r["Identifier"]) for r in demo.prop("MonitoredRegions"))
        code = world.daemon.terminate()
        check(code == 0, "beacond exited %s" % code)
        world.start_daemon()
        restored = sorted(r["Identifier"] for r in demo_regions(world))
        check(restored == expected, "after restart %r, before %r" % (restored, expected))
        suite.notes.append("refused at change %d" % (index + 1))


def daemon_cpu_seconds(daemon):
    """User and system CPU time the daemon has used so far (/proc/PID/stat)."""
    with open("/proc/%d/stat" % daemon.pid) as file:
        fields = file.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_disk_full_backoff(suite):
    """A client adds 300 regions to a full disk, one call after another (issue 21: each call wrote everything
    still pending, so calls cost more as they piled up, 0.34 s each at 2,100, and other clients waited seconds).
    Expect: each change answers StateNotSaved ("in effect"), StateError says the disk is full, the last 100 calls
    cost the daemon at most twice the CPU of the first 100, plus 0.5 s (not O(pending) per call), another
    client's GetStatus is answered within 2 s throughout, and the write attempts beacond logs are those of its
    backoff (0.1 s doubling to 5 s), not one per call. Once space is freed, everything is saved without another change, and a restart
    shows every region."""
    with full_disk(suite, "[monitoring]\nmax_regions_per_client = 1000\n") as (world, demo, filler):
        watcher = world.connect()
        started = time.monotonic()
        refused = 0
        slowest = 0.0
        cpu = []
        for index in range(300):
            if index % 100 == 0:
                cpu.append(daemon_cpu_seconds(world.daemon))
            try:
                demo.start_monitoring("r%d" % index, DEMO_UUID, Major=index % 7)
                # The database's free pages may take the first few; once one is refused, every later one is.
                check(refused == 0, "change %d was saved after %d were refused on a full disk" % (index, refused))
            except dbus.exceptions.DBusException as error:
                check(error.get_dbus_name() == ERROR + "StateNotSaved" and "in effect" in error.get_dbus_message(),
                      "change %d: %s: %s" % (index, error.get_dbus_name(), error.get_dbus_message()))
                refused += 1
            if index % 30 == 0:
                asked = time.monotonic()
                status = watcher.status()
                slowest = max(slowest, time.monotonic() - asked)
        cpu.append(daemon_cpu_seconds(world.daemon))
        elapsed = time.monotonic() - started
        check(refused >= 250, "only %d of 300 changes were refused on a full disk" % refused)
        check("full" in status.get("StateError", ""), "StateError does not say the disk is full: %r"
              % status.get("StateError"))
        first, last = cpu[1] - cpu[0], cpu[3] - cpu[2]
        check(last <= 2 * first + 0.5, "the daemon's CPU for 100 calls grew with what was pending: %.2f s for the "
              "first 100, %.2f s for the last 100" % (first, last))
        check(slowest < 2, "another client's GetStatus took %.1f s" % slowest)
        attempts = world.daemon.stderr().count("state write failed;")
        # The backoff allows 7 tries in its first 6.3 s, then one per 5 s.
        allowed = 7 + int(elapsed / 5) + 1
        check(1 <= attempts <= allowed, "beacond logged %d write attempts in %.1f s of full disk (its backoff allows "
              "%d)" % (attempts, elapsed, allowed))
        world.alive()

        expected = sorted(str(r["Identifier"]) for r in demo.prop("MonitoredRegions"))
        os.unlink(filler)
        check(pump_until(lambda: world.admin.status().get("StateError") == "", 30),
              "StateError stays 30 s after space was freed: %r" % world.admin.status().get("StateError"))
        code = world.daemon.terminate()
        check(code == 0, "beacond exited %s" % code)
        world.start_daemon()
        restored = sorted(str(r["Identifier"]) for r in demo_regions(world))
        check(restored == expected, "after restart %d regions, before %d" % (len(restored), len(expected)))
        suite.notes.append("%d refused in %.1f s, %d write attempts, daemon CPU %.2f s then %.2f s per 100 calls, "
                           "slowest GetStatus %.3f s" % (refused, elapsed, attempts, first, last, slowest))


# MARK: 7. clients vanishing mid-call

VANISHER = textwrap.dedent("""
    import os, sys, dbus
    bus = dbus.bus.BusConnection(sys.argv[1])
    # introspect=False: a proxy still introspecting holds calls back until a main loop runs, which never happens here.
    manager = dbus.Interface(bus.get_object("org.beacond", "/org/beacond", introspect=False), "org.beacond.Manager1")
    if sys.argv[3] == "register":
        manager.RegisterClient(sys.argv[2], ignore_reply=True)
    else:
        path = manager.RegisterClient(sys.argv[2])
        client = dbus.Interface(bus.get_object("org.beacond", path, introspect=False), "org.beacond.LocationManager1")
        client.StartMonitoring({"Identifier": "gone-%d" % os.getpid(), "UUID": sys.argv[4]}, signature="a{sv}",
                               ignore_reply=True)
    bus.flush()
    os._exit(0)
""")


def test_clients_vanishing(suite):
    """Fifty clients each send a call and exit without reading the reply (half mid-RegisterClient, half
    mid-StartMonitoring). Expect beacond to stay up and answer, no client left connected, the Always regions of
    the vanished clients kept (detached, for the app's next client), and no growth in open descriptors."""
    world = suite.world(settings="[monitoring]\nexit_timeout = 2\nmax_regions_per_client = 100\n")
    world.start_daemon()
    world.admin.set_authorization(DEMO, "authorizedAlways")
    script = os.path.join(world.directory, "vanisher.py")
    with open(script, "w") as file:
        file.write(VANISHER)
    fds_before = len(os.listdir("/proc/%d/fd" % world.daemon.pid))
    for index in range(50):
        mode = "register" if index % 2 == 0 else "monitor"
        subprocess.run([sys.executable, script, world.address, DEMO, mode, DEMO_UUID], timeout=20,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    check(pump_until(lambda: all(not c["Connected"] for c in world.admin.clients()), 10),
          "clients still connected: %r" % [c for c in world.admin.clients() if c["Connected"]])
    regions = demo_regions(world)
    check(len(regions) == 25, "%d regions kept for the vanished Always clients, not 25; beacond said: %s"
          % (len(regions), world.daemon.stderr()[-1500:]))
    # Each new client of the app took over the regions the vanished ones left, so one detached client holds them.
    clients = world.admin.clients()
    check(len(clients) == 1 and clients[0]["MonitoredRegions"] == 25, "clients kept: %r" % clients)
    fds_after = len(os.listdir("/proc/%d/fd" % world.daemon.pid))
    check(fds_after <= fds_before + 2, "open descriptors grew from %d to %d" % (fds_before, fds_after))
    adopter = world.client(DEMO, interface=LOCATION_MANAGER)
    check(len(adopter.prop("MonitoredRegions")) == 25, "the next client did not take over the 25 regions")
    world.alive()


# MARK: 8. the bus restarting

def test_bus_restart(suite):
    """The bus daemon dies under beacond. Expect beacond to exit non-zero at once saying the bus connection was
    closed (so systemd's Restart=on-failure restarts it), and, started on the new bus, to resume the Always
    regions it had."""
    world, demo, feeder = entered_lobby(suite)
    feeder.stop()
    daemon = world.daemon
    os.kill(world.bus.pid, signal.SIGKILL)
    code = daemon.wait_exit(10)
    check(code is not None and code != 0, "beacond exit status %s after the bus died" % code)
    check("bus connection was closed" in daemon.stderr() or "D-Bus connection was closed" in daemon.stderr(),
          "beacond did not say why it exited: %s" % daemon.stderr()[-600:])
    for connection in world.connections:
        connection.close()
    world.connections = []
    world.admin = None
    os.unlink(os.path.join(world.directory, "bus"))
    world.bus = PrivateBus(world.directory)
    world.address = world.bus.address
    world.start_daemon()
    check([r["Identifier"] for r in demo_regions(world)] == ["lobby"], "regions after the bus restart: %r"
          % demo_regions(world))
    world.alive()


# MARK: 9. a corrupt database

def test_corrupt_database(suite):
    """The state database is overwritten with garbage while beacond is stopped. Expect beacond to start anyway,
    log (error level) where the unusable file was moved, and run with a fresh database."""
    world = suite.world()
    world.start_daemon()
    world.admin.set_authorization(DEMO, "authorizedAlways")
    check(world.daemon.terminate() == 0, "beacond did not stop cleanly")
    database = os.path.join(world.state_dir, "state.sqlite")
    with open(database, "r+b") as file:
        file.write(os.urandom(4096))
    world.start_daemon()
    moved = [name for name in os.listdir(world.state_dir) if name.startswith("state.sqlite.corrupt-")]
    check(moved, "the corrupt file was not moved aside: %r" % os.listdir(world.state_dir))
    check(moved[0] in world.daemon.stderr(), "the log does not name where it was moved")
    apps = {a["AppId"]: a["AuthorizationStatus"] for a in world.admin.status()["Apps"]}
    check(apps[DEMO] == "notDetermined", "Demo is %s on a fresh database" % apps[DEMO])
    world.alive()


def stopped_in_order(world, daemon, why):
    """What every stop must leave (beacond run with --log-level debug): the daemon stopped before the state
    database was closed, and that before the main loop stopped (docs/architecture.md, "Services, and the order
    they stop in"); the write-ahead log folded into state.sqlite and removed; the state directory's lock free."""
    import fcntl
    log = daemon.stderr()
    marks = ["beacond stopped", "state database closed", "main loop stopped"]
    places = [log.find(mark) for mark in marks]
    check(all(place >= 0 for place in places) and places == sorted(places),
          "%s: the stops were not in dependency order %r: %s" % (why, marks, log[-2500:]))
    database = os.path.join(world.state_dir, "state.sqlite")
    check(not os.path.exists(database + "-wal"), "%s: beacond exited with its database open: %r"
          % (why, os.listdir(world.state_dir)))
    with open(os.path.join(world.state_dir, "lock"), "r+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)


def test_clean_stop_closes_database(suite):
    """beacond is stopped with SIGTERM (as systemctl stop does). Expect it to stop its parts in dependency order
    and close its database before it exits: the write-ahead log folded into state.sqlite and removed, so the file
    alone holds the last decision (what a backup or the next beacond reads), and the state directory's lock free.
    A log left behind would also hide a damaged database file from the next start (test 9)."""
    import sqlite3
    world = suite.world()
    world.start_daemon(extra=["--log-level", "debug"])
    world.admin.set_authorization(DEMO, "authorizedAlways")
    database = os.path.join(world.state_dir, "state.sqlite")
    check(os.path.exists(database + "-wal"), "no write-ahead log while beacond runs: this test would prove nothing")
    check(world.daemon.terminate() == 0, "beacond did not stop cleanly")
    stopped_in_order(world, world.daemon, "SIGTERM")
    connection = sqlite3.connect("file:%s?mode=ro" % database, uri=True)
    try:
        rows = connection.execute("SELECT status FROM app_authorization WHERE app_id = ?", (DEMO,)).fetchall()
    finally:
        connection.close()
    check(rows == [("authorizedAlways",)], "the file alone holds %r for %s" % (rows, DEMO))


def test_failed_daemon_stops_in_order(suite):
    """The bus dies under beacond, which fails (exit 1). Expect its parts stopped in the same order as a clean stop
    all the same: the database closed, the lock free."""
    world = suite.world()
    world.start_daemon(extra=["--log-level", "debug"])
    world.admin.set_authorization(DEMO, "authorizedAlways")
    check(os.path.exists(os.path.join(world.state_dir, "state.sqlite-wal")), "no write-ahead log: proves nothing")
    os.kill(world.bus.pid, signal.SIGKILL)
    code = world.daemon.wait_exit(10)
    check(code == 1, "beacond exit status %s after the bus died" % code)
    stopped_in_order(world, world.daemon, "the bus died")


def test_failed_start_stops_in_order(suite):
    """beacond starts with no bus to connect to (exit 1, "cannot start"). Expect the state it had opened closed in
    the same order."""
    world = suite.world()
    world.address = "unix:path=%s/no-bus-here" % world.directory  # nothing listens there
    daemon = world.launch(extra=["--log-level", "debug"])
    code = daemon.wait_exit(20)
    check(code == 1, "beacond exit status %s with no bus" % code)
    check("cannot start" in daemon.stderr(), "beacond did not say it cannot start: %s" % daemon.stderr()[-800:])
    stopped_in_order(world, daemon, "a start with no bus")


# MARK: 10. a client that never reads

SLEEPER = textwrap.dedent("""
    import sys, dbus
    bus = dbus.bus.BusConnection(sys.argv[1])
    manager = dbus.Interface(bus.get_object("org.beacond", "/org/beacond", introspect=False), "org.beacond.Manager1")
    for index in range(32):
        path = manager.RegisterClient(sys.argv[2])
        client = dbus.Interface(bus.get_object("org.beacond", path, introspect=False), "org.beacond.LocationManager1")
        client.StartRanging({"UUID": sys.argv[3]}, signature="a{sv}")
    print("ranging", flush=True)
    sys.stdin.read()  # stopped with SIGSTOP by the test: it never reads its socket again
""")




def test_slow_client(suite):
    """A connection with 32 clients ranging a UUID with 1,000 beacons around is frozen (SIGSTOP): it never reads its
    socket again, while beacond sends it ranging results (about 6 MB/s). Without flow control dbus-daemon, which
    charges what it holds for a recipient to the sender, stops reading from beacond after ~127 MB: every other client
    then waits, and beacond's unsent messages grow without bound. Expect for 25 s: another client's calls answer
    within 2 s (p99 well under), beacond's RSS stays under 150 MB, and beacond logs that the peer is not reading;
    after the frozen client is killed, ranging to others continues."""
    world = suite.world()
    world.start_daemon()
    world.admin.set_authorization(DEMO, "authorizedAlways")
    script = os.path.join(world.directory, "sleeper.py")
    with open(script, "w") as file:
        file.write(SLEEPER)
    watcher = world.client(DEMO, interface=LOCATION_MANAGER)
    watcher.start_ranging(DEMO_UUID)
    fifo = None
    world.feeder().wait_for_fifo()
    fifo = os.open(world.fifo, os.O_WRONLY | os.O_NONBLOCK)
    lines = [hci.ibeacon_line(DEMO_UUID, 1 + index // 500, index % 500).encode() for index in range(1000)]
    batch = [b"".join(lines[start:start + 50]) for start in range(0, 1000, 50)]
    sent = [0]

    def flood():
        # 1,000 beacons a second, 50 per 50 ms (each write fits PIPE_BUF, so lines never tear).
        for _ in range(1):
            try:
                os.write(fifo, batch[sent[0] % len(batch)])
                sent[0] += 1
            except BlockingIOError:
                pass
        return True
    from gi.repository import GLib
    source = GLib.timeout_add(50, flood)
    sleeper = subprocess.Popen([sys.executable, script, world.address, DEMO, DEMO_UUID], stdout=subprocess.PIPE,
                               stdin=subprocess.PIPE, text=True)
    try:
        check(sleeper.stdout.readline().strip() == "ranging", "the slow client did not start ranging")
        os.kill(sleeper.pid, signal.SIGSTOP)
        worst = 0.0
        peak = 0.0
        latencies = []
        deadline = time.monotonic() + 25
        while time.monotonic() < deadline:
            began = time.monotonic()
            watcher.prop("AuthorizationStatus")
            latencies.append(time.monotonic() - began)
            worst = max(worst, latencies[-1])
            peak = max(peak, rss_mb(world.daemon.pid))
            pump_for(0.2)
        latencies.sort()
        p99 = latencies[int(len(latencies) * 0.99) - 1]
        check(worst < 2.0, "a call of another client took %.2f s while the slow client was frozen" % worst)
        check(peak < 150, "beacond grew to %.0f MB while the slow client was frozen" % peak)
        check("is not reading its messages" in world.daemon.stderr(), "beacond did not say the peer is not reading")
        mark = watcher.collector.mark()
        check(pump_until(lambda: watcher.collector.since(mark, "DidRangeBeacons"), 5),
              "the well-behaved client gets no ranging while the slow one is frozen")
        suite.notes.append("%d calls, p99 %.0f ms, max %.0f ms; RSS peak %.0f MB" % (len(latencies), p99 * 1000,
                                                                                     worst * 1000, peak))
    finally:
        GLib.source_remove(source)
        os.close(fifo)
        sleeper.kill()
        sleeper.wait()
    world.alive()


# MARK: 11. exit_timeout changed while blind

def test_reload_while_blind(suite):
    """beacond restarts with a region that was inside, and its scanner cannot start (blind: the fifo's directory is
    gone). A SIGHUP then changes exit_timeout, which rebuilds the engine. Expect the region to stay unknown with no
    DidExitRegion queued, 3 s past the new exit_timeout: time blind is not absence."""
    world, demo, feeder = entered_lobby(suite)
    world.daemon.kill()
    demo.close()
    feeder.stop()
    world.start_daemon(scanner="fifo:" + os.path.join(world.directory, "missing", "fifo"))
    check(pump_until(lambda: str(world.admin.status().get("ScannerState", "")).startswith("failed"), 5),
          "the scanner did not fail: %s" % world.admin.status().get("ScannerState"))
    world.write_settings("[monitoring]\nexit_timeout = 1\n")
    os.kill(world.daemon.pid, signal.SIGHUP)
    check(pump_until(lambda: "exit timeout is now" in world.daemon.stderr(), 5), "the new exit_timeout was not applied")
    pump_for(3.0)
    check(queued_count(world) == 0, "%d events queued while blind (a false exit)" % queued_count(world))
    check(region_state(world, "lobby") == "unknown", "lobby is %s while blind" % region_state(world, "lobby"))
    world.alive()


TESTS = [
    ("1 restart with the beacon present: no new entry", test_restart_beacon_present),
    ("2 restart after the beacon left: exactly one exit, delivered late", test_restart_beacon_left),
    ("2b restart after the beacon left, client back before the exit: one live exit on time",
     test_restart_beacon_left_client_back_early),
    ("3 queued events: order, late flag, original time, bound, kill -9", test_queue_order_bound),
    ("4 D-Bus activation of the app, rate limited", test_activation),
    ("5 kill -9 during writes loses no acknowledged change", test_kill_during_writes),
    ("6 disk full on the state directory", test_disk_full),
    ("6b a full disk is retried on a backoff, not once per call", test_disk_full_backoff),
    ("7 clients vanishing mid-call", test_clients_vanishing),
    ("8 the bus restarting", test_bus_restart),
    ("9 a corrupt state database is moved aside", test_corrupt_database),
    ("9b a clean stop closes the state database: its log folded into the file", test_clean_stop_closes_database),
    ("9c a daemon that fails stops its parts in the same order", test_failed_daemon_stops_in_order),
    ("9d a start that fails stops its parts in the same order", test_failed_start_stops_in_order),
    ("10 a client that never reads does not stall beacond", test_slow_client),
    ("11 exit_timeout changed by SIGHUP while blind: no false exit", test_reload_while_blind),
]

if __name__ == "__main__":
    sys.exit(main(sys.argv, TESTS))
