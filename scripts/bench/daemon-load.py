#!/usr/bin/env python3
"""beacond under load, measured end to end (issue 5, "fast under load, idle when idle"):

- advert → D-Bus signal latency: a probe beacon written to the fifo scanner (an HCI event line, as the
  controller would deliver it) until the client's DidEnterRegion arrives, p50/p99 over many probes, while a
  background flood of other beacons runs at 10 and at 2,700 adverts/s (one controller's physical ceiling);
- CPU of the daemon (utime+stime from /proc) with scanning on and no traffic, and at each rate;
- wake-ups of the idle daemon: context switches of all its threads over the idle window.

The daemon is the real beacond on a private dbus-daemon (the integration harness); the client is Python
(dbus-python on GLib), so latencies include the client's own overhead. Needs root (the harness's apps are
declared for root). Usage: scripts/bench/daemon-load.py [BEACOND]   (default .build/release/beacond)
"""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Tests", "Integration"))
import harness  # noqa: E402
import hci  # noqa: E402

PROBE_UUID = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
FLOOD_UUID = "F7826DA6-4FA2-4E98-8024-BC5B71E0893E"
PROBES = 200
PROBE_INTERVAL = 0.05
WINDOW = 10.0
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as file:
        fields = file.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def context_switches(pid):
    """Per thread: threads of the runtime's pool come and go, so deltas are taken per thread id."""
    counts = {}
    for task in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/status" % (pid, task)) as file:
                counts[task] = sum(int(line.split()[1]) for line in file
                                   if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")))
        except FileNotFoundError:  # the thread ended meanwhile
            pass
    return counts


def switches_between(before, after):
    return sum(after[task] - before.get(task, 0) for task in after)


class Flood(threading.Thread):
    """Writes `rate` adverts/s of beacons of FLOOD_UUID (100 minors) in 10 ms batches, plus probes on request."""

    def __init__(self, fifo, rate):
        super().__init__(daemon=True)
        self.fd = os.open(fifo, os.O_WRONLY)
        self.rate = rate
        self.running = True
        self.lines = [(hci.ibeacon_line(FLOOD_UUID, 1, minor) + "\n").encode() for minor in range(100)]
        self.written = 0
        self.lock = threading.Lock()

    def probe(self, minor):
        line = (hci.ibeacon_line(PROBE_UUID, 7, minor) + "\n").encode()
        with self.lock:
            sent = time.monotonic()
            os.write(self.fd, line)
        return sent

    def run(self):
        start = time.monotonic()
        while self.running:
            due = int((time.monotonic() - start) * self.rate) - self.written
            if due > 0:
                batch = b"".join(self.lines[(self.written + i) % 100] for i in range(due))
                with self.lock:
                    os.write(self.fd, batch)
                self.written += due
            time.sleep(0.01)

    def stop(self):
        self.running = False
        self.join()
        os.close(self.fd)


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def main():
    beacond = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".build/release/beacond")
    world = harness.World(beacond, settings="[monitoring]\nexit_timeout = 60\nmax_regions_per_client = 10000\nmax_regions_per_app = 10000\n")
    try:
        world.start_daemon()
        pid = world.daemon.pid
        client = world.authorized_client("org.example.Demo", "authorizedAlways")
        client.start_monitoring("flood", FLOOD_UUID)
        print("beacond %s, pid %d; %d probes per rate, one every %d ms" % (beacond, pid, PROBES, PROBE_INTERVAL * 1000))

        # Idle: scanning on (a region is monitored), no traffic.
        harness.pump_for(1.0)
        cpu, switches = cpu_seconds(pid), context_switches(pid)
        harness.pump_for(WINDOW)
        idle_cpu = (cpu_seconds(pid) - cpu) / WINDOW * 100
        idle_switches = switches_between(switches, context_switches(pid))
        print("idle, scanning on: CPU %.2f %% of one core, %d context switches in %.0f s (all threads)"
              % (idle_cpu, idle_switches, WINDOW))

        minor = 0
        for rate in (10, 2700):
            flood = Flood(world.fifo, rate)
            flood.start()
            harness.pump_for(1.0)
            # CPU with the flood alone (the probes' region events and signals are measured separately below).
            cpu, flood_start = cpu_seconds(pid), flood.written
            harness.pump_for(WINDOW)
            flood_cpu = (cpu_seconds(pid) - cpu) / WINDOW * 100
            flood_rate = (flood.written - flood_start) / WINDOW
            # Probe regions, registered before their probes are written.
            first = minor
            for k in range(PROBES):
                client.start_monitoring("p%d" % (first + k), PROBE_UUID, Major=harness.dbus.UInt16(7),
                                        Minor=harness.dbus.UInt16(first + k))
            harness.pump_for(0.5)
            cpu = cpu_seconds(pid)
            began = time.monotonic()
            sent = {}
            latencies = []

            def arrived(signal):
                region = harness.plain(signal.args[0])
                return region.get("Identifier", "").startswith("p")
            for k in range(PROBES):
                minor = first + k
                sent["p%d" % minor] = flood.probe(minor)
                harness.pump_for(PROBE_INTERVAL)
            deadline = time.monotonic() + 5
            while len(latencies) < PROBES and time.monotonic() < deadline:
                signal = client.collector.wait("DidEnterRegion", path=client.path, where=arrived, timeout=5)
                latencies.append(signal.time - sent[harness.plain(signal.args[0])["Identifier"]])
            elapsed = time.monotonic() - began
            cpu_percent = (cpu_seconds(pid) - cpu) / elapsed * 100
            written = flood.written
            flood.stop()
            minor += 1
            print("%5d adverts/s: CPU %.2f %% of one core with the flood alone (%.0f adverts/s measured over %.0f s)"
                  % (rate, flood_cpu, flood_rate, WINDOW))
            print("%5d adverts/s: %d probes, latency p50 %.2f ms, p99 %.2f ms, max %.2f ms; CPU %.2f %% while probing"
                  " (%d flood adverts in all)"
                  % (rate, len(latencies), percentile(latencies, 0.5) * 1000, percentile(latencies, 0.99) * 1000,
                     max(latencies) * 1000, cpu_percent, written))
    finally:
        world.close()
        harness.remove_everything()


if __name__ == "__main__":
    main()
