#!/usr/bin/python3
"""beacond with a large state, measured end to end (issue 21): 100,000 monitored regions loaded straight into
the state database (10 apps with max_regions_per_app = 10000), then beacond started on it.

Measures: start time and VmRSS once it answers; GetStatus latency and reply size; `beaconctl regions` (which
walks Admin1.ListRegions 500 at a time) and `beaconctl status` wall time; and, while `beaconctl regions` runs
over and over in another process, a client of another app: its call (RequestState) and event
(DidDetermineState) latency, p50/p99. Then the same state under the default max_regions_per_app (100): what a
restart loads and keeps.

The daemon is the real beacond on a private dbus-daemon (the integration harness). Needs root. Usage:

    scripts/bench/large-state.py [--beacond PATH] [--beaconctl PATH] [--regions N] [--seconds S]
"""
import argparse
import os
import sqlite3
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "Tests", "Integration"))

import harness  # noqa: E402
from harness import DEFAULT_APPS, World, percentile, pump_for, rss_mb  # noqa: E402

# Loading 100,000 regions is what is measured: give it time.
harness.START_TIMEOUT = 300

UUID = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
APPS = 10






def fill(state_dir, regions):
    """`regions` rows straight into monitored_region: APPS apps, 100 regions per detached client."""
    database = sqlite3.connect(os.path.join(state_dir, "state.sqlite"))
    rows = []
    for index in range(regions):
        app, client = index % APPS, 1000 + index // 100
        rows.append((client, "org.example.Big%d" % app, "region-%06d-" % index + "x" * 230, UUID,
                     index % 65536 // 256, index % 256, 1, 1, "unknown", "unknown", None))
    with database:
        database.executemany("INSERT INTO monitored_region (client, app_id, identifier, uuid, major, minor, "
                             "notify_on_entry, notify_on_exit, state, last_determined_state, last_seen_us) "
                             "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    database.close()


def timed(command):
    began = time.monotonic()
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        print("  %s failed: %s" % (" ".join(command[-2:]), result.stderr.strip()[-500:]))
    return time.monotonic() - began, result


def run(options, per_app):
    apps = dict(DEFAULT_APPS)
    for app in range(APPS):
        apps["big%d.toml" % app] = ('app_id = "org.example.Big%d"\nusers = ["root"]\nwhen_in_use_usage = "Big."\n'
                                    'always_usage = "Big, in background."\n' % app)
    settings = "[monitoring]\nexit_timeout = 2\nmax_regions_per_app = %d\nmax_regions_per_client = 10000\n" % per_app
    world = World(options.beacond, options.beaconctl, settings=settings, apps=apps)
    try:
        world.start_daemon()
        for app in range(APPS):
            world.admin.set_authorization("org.example.Big%d" % app, "authorizedAlways")
        world.daemon.terminate()
        fill(world.state_dir, options.regions)
        size_mb = os.path.getsize(os.path.join(world.state_dir, "state.sqlite")) / 1e6
        began = time.monotonic()
        world.start_daemon()
        started = time.monotonic() - began
        rss = rss_mb(world.daemon.pid)
        print("max_regions_per_app = %d: %d rows in the state file (%.1f MB); beacond answers %.2f s after start, "
              "RSS %.1f MB" % (per_app, options.regions, size_mb, started, rss))
        status_times = []
        for _ in range(50):
            t0 = time.monotonic()
            status = world.admin.admin("GetStatus")
            status_times.append(time.monotonic() - t0)
        busctl = world.busctl("call", "org.beacond", "/org/beacond", "org.beacond.Admin1", "GetStatus")
        print("  GetStatus: RegionCount %d, p50 %.1f ms, p99 %.1f ms, %d bytes as busctl prints it"
              % (int(status["RegionCount"]), 1000 * percentile(status_times, 0.5), 1000 * percentile(status_times, 0.99),
                 len(busctl.stdout)))
        beaconctl = [options.beaconctl, "--bus", world.address]
        seconds, result = timed(beaconctl + ["regions"])
        print("  beaconctl regions: %.2f s, %d lines, exit %d" % (seconds, len(result.stdout.splitlines()), result.returncode))
        seconds, result = timed(beaconctl + ["regions", "--json"])
        print("  beaconctl regions --json: %.2f s, %.1f MB, exit %d" % (seconds, len(result.stdout) / 1e6, result.returncode))
        seconds, result = timed(beaconctl + ["status"])
        print("  beaconctl status: %.2f s, exit %d" % (seconds, result.returncode))
        victim = world.authorized_client("org.example.Other", "authorizedAlways")
        victim.start_monitoring("victim")
        victim.wait("DidStartMonitoring")
        walker = subprocess.Popen(["sh", "-c", "while :; do %s regions >/dev/null || exit 1; done"
                                   % " ".join(beaconctl)], start_new_session=True)
        calls, events = [], []
        deadline = time.monotonic() + options.seconds
        try:
            while time.monotonic() < deadline:
                mark = victim.collector.mark()
                t0 = time.monotonic()
                victim.lm("RequestState", "s", "victim")
                calls.append(time.monotonic() - t0)
                victim.collector.wait("DidDetermineState", path=victim.path, timeout=30,
                                      where=lambda s, mark=mark: s in victim.collector.since(mark))
                events.append(time.monotonic() - t0)
                pump_for(0.05)
        finally:
            os.killpg(walker.pid, 9)  # the loop and the beaconctl it runs
            walker.wait()
        print("  another client while beaconctl regions runs in a loop: %d calls, call p50 %.1f ms p99 %.1f ms, "
              "event p50 %.1f ms p99 %.1f ms; beacond RSS %.1f MB"
              % (len(calls), 1000 * percentile(calls, 0.5), 1000 * percentile(calls, 0.99),
                 1000 * percentile(events, 0.5), 1000 * percentile(events, 0.99), rss_mb(world.daemon.pid)))
    finally:
        world.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    root = os.path.join(HERE, "..", "..")
    parser.add_argument("--beacond", default=os.path.join(root, ".build", "release", "beacond"))
    parser.add_argument("--beaconctl", default=os.path.join(root, ".build", "release", "beaconctl"))
    parser.add_argument("--regions", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=20)
    options = parser.parse_args()
    options.beacond, options.beaconctl = os.path.abspath(options.beacond), os.path.abspath(options.beaconctl)
    run(options, per_app=10_000)
    run(options, per_app=100)


if __name__ == "__main__":
    main()
