#!/usr/bin/env python3
"""Advert at node A → DidEnterRegion at node B, through the broker (docs/performance.md, "Across the broker"):

Node A (room kitchen) hears probe beacons through its fifo scanner and publishes them (`publish = ["*"]`); node B
(room hall) hears nothing itself and has an Always client monitoring one region per probe. Each probe's latency is
from the write of its HCI line into A's fifo to the arrival of B's DidEnterRegion at the Python client, so it
includes A's decode and publish, Mosquitto, B's reading parser and monitor, D-Bus and the client's own overhead.
Measured while A also publishes a background of other beacons' readings at 10 and at 1,000 readings/s (100 and
1,000 beacons, each at most once a second by publish_interval), which B consumes.

Real beacond release builds on private buses, a private Mosquitto on loopback. Needs root. Usage:
scripts/bench/fleet-latency.py [BEACOND]   (default .build/release/beacond)
"""
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "Tests", "Integration"))
import harness  # noqa: E402
import hci  # noqa: E402
import mqtt_test  # noqa: E402

PROBE_UUID = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
FLOOD_UUID = "F7826DA6-4FA2-4E98-8024-BC5B71E0893E"
PROBES = 200
PROBE_INTERVAL = 0.05


class Background(threading.Thread):
    """`beacons` beacons of FLOOD_UUID, each advertising ten times a second (A publishes each once a second)."""

    def __init__(self, fd, beacons, lock):
        super().__init__(daemon=True)
        self.fd = fd
        self.lock = lock
        self.lines = [(hci.ibeacon_line(FLOOD_UUID, 1, minor) + "\n").encode() for minor in range(beacons)]
        self.running = True

    def run(self):
        while self.running:
            started = time.monotonic()
            for chunk in range(0, len(self.lines), 100):
                with self.lock:
                    os.write(self.fd, b"".join(self.lines[chunk:chunk + 100]))
            time.sleep(max(0.0, 0.1 - (time.monotonic() - started)))

    def stop(self):
        self.running = False
        self.join()


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def main():
    beacond = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".build/release/beacond")
    broker = mqtt_test.Broker()
    node_a = node_b = None
    try:
        common = '[monitoring]\nexit_timeout = 60\nmax_regions_per_client = 10000\n\n[mqtt]\nbroker = "mqtt://127.0.0.1:%d"\n' % broker.port
        node_a = harness.World(beacond, settings=common + 'room = "kitchen"\npublish = ["*"]\n')
        node_b = harness.World(beacond, settings=common + 'room = "hall"\n')
        node_a.start_daemon()
        node_b.start_daemon()
        client = node_b.authorized_client("org.example.Demo", "authorizedAlways")
        feeder = node_a.feeder()
        feeder.wait_for_fifo()
        fd = os.open(node_a.fifo, os.O_WRONLY)
        lock = threading.Lock()
        harness.check(harness.pump_until(lambda: any(r["Room"] == "kitchen" and r["Online"]
                                                     for r in node_b.admin.status()["MQTTReceivers"]), 10),
                      "B does not see kitchen online")
        minor = 0
        for rate in (10, 1000):
            background = Background(fd, rate, lock)
            background.start()
            harness.pump_for(2.0)
            first = minor
            for k in range(PROBES):
                client.start_monitoring("p%d" % (first + k), PROBE_UUID, Major=harness.dbus.UInt16(7),
                                        Minor=harness.dbus.UInt16(first + k))
            harness.pump_for(0.5)
            sent = {}
            latencies = []
            for k in range(PROBES):
                line = (hci.ibeacon_line(PROBE_UUID, 7, first + k) + "\n").encode()
                with lock:
                    sent["p%d" % (first + k)] = time.monotonic()
                    os.write(fd, line)
                harness.pump_for(PROBE_INTERVAL)
            deadline = time.monotonic() + 10
            while len(latencies) < PROBES and time.monotonic() < deadline:
                signal = client.collector.wait("DidEnterRegion", path=client.path, timeout=10,
                                               where=lambda s: harness.plain(s.args[0])["Identifier"] in sent)
                latencies.append(signal.time - sent.pop(harness.plain(signal.args[0])["Identifier"]))
            status = node_b.admin.status()
            kitchen = [r for r in status["MQTTReceivers"] if r["Room"] == "kitchen"][0]
            background.stop()
            minor = first + PROBES
            print("%5d readings/s in the background: %d probes, advert at A -> DidEnterRegion at B p50 %.2f ms, "
                  "p99 %.2f ms, max %.2f ms (B has taken %d readings from A, dropped %d)"
                  % (rate, len(latencies), percentile(latencies, 0.5) * 1000, percentile(latencies, 0.99) * 1000,
                     max(latencies) * 1000, int(kitchen["Readings"]), int(status["MQTTReadingsDropped"])))
        os.close(fd)
    finally:
        for world in (node_a, node_b):
            if world:
                world.close()
        broker.close()
        harness.remove_everything()


if __name__ == "__main__":
    main()
