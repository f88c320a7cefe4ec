#!/usr/bin/env python3
"""One beacond consuming other receivers' readings from a real broker (docs/performance.md, "Consuming from a
real broker"): 100 rooms × 1,000 beacons at 1 Hz = 100,000 readings/s (target: under one core, memory bounded),
with Mosquitto's own CPU beside it.

A private Mosquitto on loopback (logging errors and warnings only: `log_type all` would write a line per message);
`beacond-bench mqtt-flood` publishes the readings through libmosquitto, paced in 10 ms steps; the real release
beacond (room "hall", `subscribe = true`, hearing nothing itself) on a private bus with an Always client monitoring
one region per beacon, so every reading goes through the fleet monitor. Over each window: readings beacond took
(the sum of GetStatus MQTTReceivers Readings), readings it dropped, its CPU (utime+stime from /proc) and resident
memory, Mosquitto's CPU and the publisher's, and beacond's read(2) calls per reading taken (/proc/PID/io syscr).
Needs root. Usage:

scripts/bench/fleet-consume.py [BEACOND [BENCH]] [--rate N] [--seconds S]
    (defaults .build/release/beacond .build/release/beacond-bench, rates 10000 and 100000, 10 s each)
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "Tests", "Integration"))
import harness  # noqa: E402
import mqtt_test  # noqa: E402

spec = importlib.util.spec_from_file_location("daemon_load", os.path.join(HERE, "daemon-load.py"))
daemon_load = importlib.util.module_from_spec(spec)
spec.loader.exec_module(daemon_load)

UUID = "F7826DA6-4FA2-4E98-8024-BC5B71E0893E"
ROOMS = 100
BEACONS = 1000


def proc_value(pid, name, key):
    """The number after `key` in /proc/PID/`name` (0 when absent)."""
    with open("/proc/%d/%s" % (pid, name)) as file:
        for line in file:
            if line.startswith(key):
                return int(line.split()[1])
    return 0


def rss_kb(pid):
    return proc_value(pid, "status", "VmRSS:")


def read_calls(pid):
    """read(2)-family calls the process made: libmosquitto reads each packet in several."""
    return proc_value(pid, "io", "syscr:")


def taken(status):
    return sum(int(receiver["Readings"]) for receiver in status["MQTTReceivers"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("beacond", nargs="?", default=".build/release/beacond")
    parser.add_argument("bench", nargs="?", default=".build/release/beacond-bench")
    parser.add_argument("--rate", type=int, action="append", help="readings/s (repeatable; default 10000 and 100000)")
    parser.add_argument("--seconds", type=float, default=10.0)
    arguments = parser.parse_args()
    rates = arguments.rate or [10000, 100000]
    beacond = os.path.abspath(arguments.beacond)
    bench = os.path.abspath(arguments.bench)
    broker = mqtt_test.Broker(quiet=True)
    world = None
    try:
        world = harness.World(beacond, settings=(
            '[monitoring]\nexit_timeout = 60\nmax_regions_per_client = %d\n\n[mqtt]\nbroker = "mqtt://127.0.0.1:%d"\n'
            'room = "hall"\n' % (BEACONS, broker.port)))
        world.start_daemon()
        client = world.authorized_client("org.example.Demo", "authorizedAlways")
        for minor in range(BEACONS):
            client.start_monitoring("b%d" % minor, UUID, Major=harness.dbus.UInt16(1), Minor=harness.dbus.UInt16(minor))
        harness.pump_for(0.5)
        pid = world.daemon.pid
        print("beacond before: RSS %.1f MB, %d regions monitored" % (rss_kb(pid) / 1024, BEACONS))
        for rate in rates:
            before = world.admin.status()
            cpu, broker_cpu = daemon_load.cpu_seconds(pid), daemon_load.cpu_seconds(broker.process.pid)
            reads = read_calls(pid)
            flood = subprocess.Popen([bench, "mqtt-flood", "--port", str(broker.port), "--rooms", str(ROOMS),
                                      "--beacons", str(BEACONS), "--rate", str(rate), "--seconds", str(arguments.seconds),
                                      "--uuid", UUID], stdout=subprocess.PIPE, text=True)
            peak = 0
            while True:  # wait4, not Popen.poll: the publisher's own CPU comes with its exit status
                reaped, status, usage = os.wait4(flood.pid, os.WNOHANG)
                if reaped:
                    flood.returncode = os.waitstatus_to_exitcode(status)
                    break
                peak = max(peak, rss_kb(pid))
                harness.pump_for(0.2)
            harness.check(flood.returncode == 0, "beacond-bench mqtt-flood failed (%d)" % flood.returncode)
            published = json.loads(flood.stdout.read())
            publisher_cpu = (usage.ru_utime + usage.ru_stime) / published["seconds"] * 100
            harness.pump_for(1.0)  # what is still in the broker's and the socket's buffers
            # Over the publishing time, though the drain second is included: an overstatement, never an understatement.
            beacond_cpu = (daemon_load.cpu_seconds(pid) - cpu) / published["seconds"] * 100
            mosquitto_cpu = (daemon_load.cpu_seconds(broker.process.pid) - broker_cpu) / published["seconds"] * 100
            reads = read_calls(pid) - reads
            after = world.admin.status()
            took = taken(after) - taken(before)
            dropped = int(after["MQTTReadingsDropped"]) - int(before["MQTTReadingsDropped"])
            print("%6d readings/s offered for %.1f s: published %d (%.0f/s), beacond took %d (%.1f %% of them), "
                  "dropped %d; CPU beacond %.1f %%, mosquitto %.1f %%, publisher %.1f %%; beacond RSS peak %.1f MB; "
                  "beacond's read calls per reading taken %.2f"
                  % (rate, published["seconds"], published["published"], published["rate"], took,
                     100.0 * took / max(1, published["published"]), dropped, beacond_cpu, mosquitto_cpu, publisher_cpu,
                     peak / 1024, reads / max(1, took)))
        print("beacond after: RSS %.1f MB, %d receivers known" % (rss_kb(pid) / 1024, len(world.admin.status()["MQTTReceivers"])))
    finally:
        if world:
            world.close()
        broker.close()
        harness.remove_everything()


if __name__ == "__main__":
    main()
