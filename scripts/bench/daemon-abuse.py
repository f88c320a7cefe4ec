#!/usr/bin/python3
"""beacond under abuse, measured end to end (issue 5, "bounded under abuse"):

- flood: about 1,000,000 distinct UUID/major/minor identities in a minute through the fifo scanner, half of
  them matching a ranged UUID (so the ranging table is full and evicting all the time), while a client
  monitors one real beacon's region and another ranges its UUID;
- register: one connection calls RegisterClient thousands of times (pipelined), first keeping what it gets
  (the per-connection cap refuses the rest), then closing each client as soon as it has it (churn);
- monitor-spam: one client calls StartMonitoring/StopMonitoring as fast as the bus lets it, past
  max_regions_per_client;
- many-clients: 1,000 clients, each on its own bus connection, register and monitor at once, hold, leave,
  and do it again;
- slow-client: one connection with 32 clients ranging a busy UUID that never reads its socket.

For each: a well-behaved client's call latency (Get of its AuthorizationStatus property) and event latency
(probe beacon written to the fifo → its DidEnterRegion), p50/p99, before and during; the daemon's VmRSS,
VmHWM, open descriptors and CPU (utime+stime) sampled every 0.5 s; dbus-daemon's RSS beside it.

The daemon is the real beacond on a private dbus-daemon (the integration harness), the clients dbus-python
on GLib; abusers, flood writer and ranging watcher run as separate processes (this script with --worker),
so they do not share the measuring client's interpreter. Needs root. Usage:

    scripts/bench/daemon-abuse.py [--beacond PATH] [--identities N] [--flood-seconds S] [--no-flood-ranging]
                                  [--clients N] [--abuse-seconds S] [SCENARIO ...]

SCENARIO is any of flood, register, monitor-spam, many-clients, slow-client (default: all of them).
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
INTEGRATION = os.path.join(HERE, "..", "..", "Tests", "Integration")
sys.path.insert(0, INTEGRATION)

REAL_UUID = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"   # the real beacon (1, 1), also the ranged UUID
PROBE_UUID = "B9407F30-F5F8-466E-AFF9-25556B57FE6D"  # probes for event latency (major 7, minor n)
OTHER_PREFIX = "F7826DA6-4FA2-4E98-8024-"            # + 12 hex digits: flood identities of other UUIDs
BUS_NAME = "org.beacond"
MANAGER_PATH = "/org/beacond"
MANAGER = "org.beacond.Manager1"
LOCATION_MANAGER = "org.beacond.LocationManager1"
TICKS = os.sysconf("SC_CLK_TCK")
SAMPLE_INTERVAL = 0.5
PROBES = 100
# Users of the many-clients scenario: dbus-daemon's built-in max_connections_per_user is 256 (the system
# bus keeps it), so 1,000 connections need four users, as they would on a real system bus.
MANY_USERS = [(0, "root"), (1, "daemon"), (2, "bin"), (3, "sys")]


# MARK: Fifo lines

def line_maker(hci):
    """A fast maker of iBeacon HCI lines (identity only varies) that gives exactly hci.ibeacon_line's text."""
    template = hci.ibeacon_line(REAL_UUID, 0, 0)
    uuid_at, minor_end = 3 * 23, 3 * 43  # byte offsets of the UUID and of what follows the minor
    prefix, suffix = template[:uuid_at], template[minor_end:]

    def make(beacon_uuid_hex_spaced, major, minor):
        return "%s%s %02X %02X %02X %02X %s" % (prefix, beacon_uuid_hex_spaced, major >> 8, major & 0xFF,
                                                minor >> 8, minor & 0xFF, suffix)
    return make


def spaced(uuid_text):
    digits = uuid_text.replace("-", "")
    return " ".join(digits[i:i + 2] for i in range(0, 32, 2)).upper()


def flood_identity(i):
    """Identity number i of the flood: even ones share REAL_UUID (never major 1), odd ones have their own UUID."""
    if i % 2 == 0:
        j = i // 2
        return REAL_UUID, 2 + (j >> 16), j & 0xFFFF
    return OTHER_PREFIX + "%012X" % i, 1, 1


# MARK: /proc

def proc_sample(pid):
    """VmRSS and VmHWM in kB, open descriptors, CPU seconds; None once the process is gone."""
    try:
        with open("/proc/%d/status" % pid) as file:
            fields = dict(line.split(":", 1) for line in file if ":" in line)
        with open("/proc/%d/stat" % pid) as file:
            stat = file.read().rsplit(")", 1)[1].split()
        fds = len(os.listdir("/proc/%d/fd" % pid))
    except (FileNotFoundError, ProcessLookupError):
        return None
    return {"rss": int(fields["VmRSS"].split()[0]), "hwm": int(fields["VmHWM"].split()[0]), "fds": fds,
            "cpu": (int(stat[11]) + int(stat[12])) / TICKS, "time": time.monotonic()}


class Sampler(threading.Thread):
    """Samples the daemon and the bus every SAMPLE_INTERVAL; `window` summarises a stretch of time."""

    def __init__(self, daemon_pid, bus_pid):
        super().__init__(daemon=True)
        self.daemon_pid, self.bus_pid = daemon_pid, bus_pid
        self.samples = []  # (daemon sample, bus sample)
        self.running = True

    def run(self):
        while self.running:
            daemon, bus = proc_sample(self.daemon_pid), proc_sample(self.bus_pid)
            if daemon is None:
                break
            self.samples.append((daemon, bus))
            time.sleep(SAMPLE_INTERVAL)  # sampling cadence, not a timing assertion

    def stop(self):
        self.running = False
        self.join()

    def mark(self):
        return time.monotonic()

    def window(self, since, until=None):
        until = until or time.monotonic()
        inside = [s for s in self.samples if since <= s[0]["time"] <= until]
        if len(inside) < 2:
            return None
        first, last = inside[0][0], inside[-1][0]
        span = last["time"] - first["time"]
        return {"rss_first": first["rss"], "rss_last": last["rss"], "rss_max": max(s[0]["rss"] for s in inside),
                "hwm": last["hwm"], "fds_first": first["fds"], "fds_max": max(s[0]["fds"] for s in inside),
                "fds_last": last["fds"], "cpu": (last["cpu"] - first["cpu"]) / span * 100 if span > 0 else 0.0,
                "bus_rss_max": max(s[1]["rss"] for s in inside if s[1]) if any(s[1] for s in inside) else 0,
                "bus_cpu": ((inside[-1][1]["cpu"] - inside[0][1]["cpu"]) / span * 100
                            if span > 0 and inside[0][1] and inside[-1][1] else 0.0)}


def describe_window(name, window):
    if window is None:
        return "%-22s (no samples)" % name
    return ("%-22s beacond RSS %6.1f → %6.1f MB (max %6.1f, HWM %6.1f), fds %d → %d (max %d), CPU %5.1f %%;"
            " dbus-daemon RSS max %6.1f MB, CPU %5.1f %%"
            % (name, window["rss_first"] / 1024, window["rss_last"] / 1024, window["rss_max"] / 1024,
               window["hwm"] / 1024, window["fds_first"], window["fds_last"], window["fds_max"], window["cpu"],
               window["bus_rss_max"] / 1024, window["bus_cpu"]))


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


# MARK: The measuring side (root, the harness)

class Bench:
    def __init__(self, beacond, settings, apps=None):
        import harness
        import hci
        self.harness, self.hci = harness, hci
        self.world = harness.World(beacond, settings=settings, apps=apps)
        self.world.start_daemon()
        self.pid = self.world.daemon.pid
        self.fd = None
        self.lock = threading.Lock()
        self.make = line_maker(hci)
        self.real_line = self.make(spaced(REAL_UUID), 1, 1).encode()
        self.probe_minor = 0
        self.workers = []
        self.beacon_running = False
        self.good = None
        self.false_events = 0

    def start(self):
        """The well-behaved client (Demo, Always) monitoring the real beacon's region; the real beacon on air."""
        harness = self.harness
        self.good = self.world.authorized_client("org.example.Demo", "authorizedAlways")
        self.world.admin.set_authorization("org.example.Other", "authorizedAlways")
        self.good.start_monitoring("real", REAL_UUID, Major=harness.dbus.UInt16(1), Minor=harness.dbus.UInt16(1))
        self.world.feeder().wait_for_fifo()  # the daemon creates the FIFO when it starts scanning
        self.fd = os.open(self.world.fifo, os.O_RDWR)
        self.beacon_running = True
        threading.Thread(target=self._real_beacon, daemon=True).start()
        self.good.wait("DidEnterRegion", where=lambda s: harness.plain(s.args[0])["Identifier"] == "real")
        self.sampler = Sampler(self.pid, self.world.bus.pid)
        self.sampler.start()

    def _real_beacon(self):
        """The real beacon advertises 10 times a second (Apple's recommended 100 ms interval)."""
        while self.beacon_running:
            self.write(self.real_line)
            time.sleep(0.1)  # advertising interval, not a timing assertion

    def count_false_events(self):
        """An entry into the region nobody advertises, or an exit from the real beacon's: both would be wrong."""
        plain = self.harness.plain
        for signal in self.good.collector.signals:
            identifier = plain(signal.args[0]).get("Identifier") if signal.args and isinstance(
                signal.args[0], dict) else None
            if (signal.member == "DidEnterRegion" and identifier == "absent") or \
                    (signal.member == "DidExitRegion" and identifier == "real"):
                self.false_events += 1

    def write(self, data):
        with self.lock:
            os.write(self.fd, data)

    def responsiveness(self, label, probes=PROBES):
        """Call latency (Get AuthorizationStatus) and advert → DidEnterRegion latency of the good client."""
        harness = self.harness
        calls, events, missed, failed_calls = [], [], 0, []
        # Where a slow call waits: the bus alone (NameHasOwner, answered by dbus-daemon), beacond's Get, and its
        # StartMonitoring (a saved change); `calls` is the last two together.
        split = {"bus": [], "get": [], "start": []}
        for _ in range(probes):
            try:
                began = time.monotonic()
                self.good.name_has_owner("org.beacond")
                split["bus"].append(time.monotonic() - began)
            except harness.dbus.exceptions.DBusException:
                pass
            began = time.monotonic()
            try:
                self.good.prop("AuthorizationStatus")
                split["get"].append(time.monotonic() - began)
                self.probe_minor += 1
                minor = self.probe_minor
                self.good.start_monitoring("probe", PROBE_UUID, Major=harness.dbus.UInt16(7),
                                           Minor=harness.dbus.UInt16(minor))
                split["start"].append(time.monotonic() - began - split["get"][-1])
            except harness.dbus.exceptions.DBusException as error:
                # No answer within the call timeout (10 s): the daemon is not serving this client.
                calls.append(time.monotonic() - began)
                failed_calls.append(error.get_dbus_name())
                missed += 1
                continue
            calls.append(time.monotonic() - began)
            line = self.make(spaced(PROBE_UUID), 7, minor).encode()
            sent = time.monotonic()
            self.write(line)

            def arrived(signal, minor=minor):
                region = harness.plain(signal.args[0])
                return region.get("Identifier") == "probe" and region.get("Minor") == minor
            try:
                signal = self.good.wait("DidEnterRegion", where=arrived, timeout=10)
                events.append(signal.time - sent)
            except harness.TestFailure:
                missed += 1
            # Keep the collector small: everything before now has been looked at (false events counted first).
            self.count_false_events()
            self.good.collector.signals.clear()
            self.good.collector.taken.clear()
            harness.pump_for(0.02)
        result = {"label": label, "calls": len(calls), "failed_calls": len(failed_calls),
                  "call_p50": percentile(calls, 0.5) * 1000,
                  "call_p99": percentile(calls, 0.99) * 1000, "call_max": max(calls) * 1000,
                  "events": len(events), "missed": missed}
        if events:
            result.update(event_p50=percentile(events, 0.5) * 1000, event_p99=percentile(events, 0.99) * 1000,
                          event_max=max(events) * 1000)
        print("  %-30s call p50 %6.2f ms p99 %7.2f ms max %7.2f ms | event p50 %6.2f ms p99 %7.2f ms max %7.2f ms"
              " (%d/%d probes)%s"
              % (label, result["call_p50"], result["call_p99"], result["call_max"], result.get("event_p50", -1),
                 result.get("event_p99", -1), result.get("event_max", -1), len(events), probes,
                 "; %d calls failed: %s" % (len(failed_calls), failed_calls[0]) if failed_calls else ""), flush=True)
        print("  %-30s   of which: bus alone p99 %7.2f ms max %7.2f ms | Get p99 %7.2f ms max %7.2f ms | "
              "StartMonitoring p99 %7.2f ms max %7.2f ms"
              % ("", *[value * 1000 for key in ("bus", "get", "start")
                       for value in (percentile(split[key], 0.99) if split[key] else -0.001,
                                     max(split[key]) if split[key] else -0.001)]), flush=True)
        result.update({"%s_p99" % key: percentile(values, 0.99) * 1000 for key, values in split.items() if values})
        return result

    def worker(self, kind, *arguments, user=None):
        command = [sys.executable, os.path.abspath(__file__), "--worker", kind, self.world.address] + \
            [str(argument) for argument in arguments]
        if user is not None and user[0] != 0:
            command = ["setpriv", "--reuid=%d" % user[0], "--regid=%d" % user[0], "--clear-groups"] + command
        process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, start_new_session=True)
        self.harness._live_processes.append((process.pid, True))
        self.workers.append(process)
        return process

    def collect(self, process, timeout=120):
        """The worker's JSON result (its last stdout line)."""
        try:
            out, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            out, _ = process.communicate()
            return {"error": "worker did not finish within %d s" % timeout}
        lines = [line for line in out.splitlines() if line.startswith("{")]
        return json.loads(lines[-1]) if lines else {"error": "worker exited %s without a result" % process.returncode}

    def alive(self):
        self.world.alive()

    def log_lines(self, *words):
        text = self.world.daemon.stderr()
        return [line for line in text.splitlines() if all(word in line for word in words)]

    def close(self):
        self.beacon_running = False
        for process in self.workers:
            if process.poll() is None:
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                process.wait()
        if getattr(self, "sampler", None):
            self.sampler.stop()
        if self.fd is not None:
            os.close(self.fd)
        self.world.close()


def print_timeline(bench, since, until, every=5.0):
    """beacond's and dbus-daemon's RSS and CPU every `every` seconds, to see growth and stalls as they happen."""
    previous = None
    for daemon, bus in bench.sampler.samples:
        if not since <= daemon["time"] <= until or (previous and daemon["time"] - previous[0]["time"] < every):
            continue
        if previous:
            span = daemon["time"] - previous[0]["time"]
            print("    t=%5.1f s  beacond RSS %6.1f MB CPU %5.1f %%  fds %d | dbus-daemon RSS %6.1f MB CPU %5.1f %%"
                  % (daemon["time"] - since, daemon["rss"] / 1024, (daemon["cpu"] - previous[0]["cpu"]) / span * 100,
                     daemon["fds"], (bus or {}).get("rss", 0) / 1024,
                     ((bus["cpu"] - previous[1]["cpu"]) / span * 100) if bus and previous[1] else 0))
        previous = (daemon, bus)


def report_windows(bench, windows):
    for name, (since, until) in windows:
        print("  " + describe_window(name, bench.sampler.window(since, until)), flush=True)


# MARK: Scenarios

def scenario_flood(beacond, options):
    identities, seconds = options.identities, options.flood_seconds
    print("\n== flood: %d distinct identities in %d s (%.0f adverts/s), half of them of the ranged UUID"
          % (identities, seconds, identities / seconds), flush=True)
    bench = Bench(beacond, "[monitoring]\nexit_timeout = 5\n")
    try:
        bench.start()
        harness = bench.harness
        bench.good.start_monitoring("absent", REAL_UUID, Major=harness.dbus.UInt16(1), Minor=harness.dbus.UInt16(2))
        ranger = bench.worker("ranger", seconds + 25) if options.flood_ranging else None
        harness.pump_for(3)
        t0 = time.monotonic()
        before = bench.responsiveness("before")
        t1 = time.monotonic()
        flood = bench.worker("flood", bench.world.fifo, identities, seconds)
        harness.pump_for(3)
        during = [bench.responsiveness("during flood (%d)" % k) for k in (1, 2, 3)]
        # Until the flood ends, keep checking that nothing false arrives for the region nobody advertises.
        while flood.poll() is None:
            harness.pump_for(0.5)
        flood_result = bench.collect(flood)
        t2 = time.monotonic()
        harness.pump_for(10)  # flood beacons expire from the ranging table after 10 s
        after = bench.responsiveness("after flood")
        t3 = time.monotonic()
        ranger_result = bench.collect(ranger) if ranger else "not ranging (--no-flood-ranging)"
        bench.good.lm("RequestState", "s", "absent")
        absent = bench.good.wait("DidDetermineState",
                                 where=lambda s: harness.plain(s.args[1])["Identifier"] == "absent")
        bench.alive()
        bench.count_false_events()  # what arrived since the last measurement round
        print("  flood writer: %s" % json.dumps(flood_result))
        print("  ranging watcher: %s" % json.dumps(ranger_result))
        report_windows(bench, [("idle, before", (t0, t1)), ("flood", (t1, t2)), ("after flood", (t2, t3))])
        flood_window = [s[0] for s in bench.sampler.samples if t1 <= s[0]["time"] <= t2]
        if flood_window:
            third = max(1, len(flood_window) // 3)
            print("  RSS over the flood: first third max %.1f MB, last third max %.1f MB; HWM at end %.1f MB"
                  % (max(s["rss"] for s in flood_window[:third]) / 1024,
                     max(s["rss"] for s in flood_window[-third:]) / 1024, flood_window[-1]["hwm"] / 1024))
        print("  region nobody advertises: state %s after the flood; false DidEnterRegion/DidExitRegion during"
              " the run: %d" % (absent.args[0], bench.false_events))
        return {"before": before, "during": during, "after": after, "flood": flood_result, "ranger": ranger_result}
    finally:
        bench.close()


def scenario_register(beacond, options):
    print("\n== register: one connection calls RegisterClient thousands of times (64 in flight)", flush=True)
    bench = Bench(beacond, "[monitoring]\nexit_timeout = 5\n")
    try:
        bench.start()
        harness = bench.harness
        results = {}
        for mode in ("hold", "churn"):
            t0 = time.monotonic()
            results[mode + " before"] = bench.responsiveness("before (%s)" % mode)
            t1 = time.monotonic()
            abuser = bench.worker("register", mode, options.abuse_seconds)
            harness.pump_for(2)
            results[mode + " during"] = bench.responsiveness("during %s" % mode)
            outcome = bench.collect(abuser)
            t2 = time.monotonic()
            print("  abuser (%s): %s" % (mode, json.dumps(outcome)))
            report_windows(bench, [("before", (t0, t1)), ("during " + mode, (t1, t2))])
            harness.pump_for(2)
        bench.alive()
        clients = bench.world.admin.clients()
        print("  clients left once the abuser is gone: %d" % len(clients))
        return results
    finally:
        bench.close()


def scenario_monitor_spam(beacond, options):
    print("\n== monitor-spam: one client, StartMonitoring/StopMonitoring 64 in flight, past the limit", flush=True)
    bench = Bench(beacond, "[monitoring]\nexit_timeout = 5\n")
    try:
        bench.start()
        harness = bench.harness
        t0 = time.monotonic()
        before = bench.responsiveness("before")
        t1 = time.monotonic()
        abuser = bench.worker("monitor-spam", options.abuse_seconds)
        harness.pump_for(2)
        during = bench.responsiveness("during spam")
        outcome = bench.collect(abuser)
        t2 = time.monotonic()
        harness.pump_for(2)
        after = bench.responsiveness("after")
        t3 = time.monotonic()
        print("  abuser: %s" % json.dumps(outcome))
        report_windows(bench, [("before", (t0, t1)), ("during spam", (t1, t2)), ("after", (t2, t3))])
        bench.alive()
        return {"before": before, "during": during, "after": after, "abuser": outcome}
    finally:
        bench.close()


MANY_APP = ('app_id = "org.example.Many"\nusers = [%s]\nwhen_in_use_usage = "Many."\nalways_usage = "Many."\n'
            % ", ".join('"%s"' % name for _, name in MANY_USERS))


def scenario_many_clients(beacond, options):
    count = options.clients
    per_user = count // len(MANY_USERS)
    print("\n== many-clients: %d clients on %d connections (%d users × %d), register + monitor, hold 3 s, leave,"
          " again" % (per_user * len(MANY_USERS), per_user * len(MANY_USERS), len(MANY_USERS), per_user), flush=True)
    apps = dict(bench_apps())
    apps["many.toml"] = MANY_APP
    bench = Bench(beacond, "[monitoring]\nexit_timeout = 5\n", apps=apps)
    try:
        bench.start()
        harness = bench.harness
        bench.world.admin.set_authorization("org.example.Many", "authorizedAlways")
        t0 = time.monotonic()
        before = bench.responsiveness("before")
        t1 = time.monotonic()
        abusers = [bench.worker("many", per_user, options.abuse_seconds, user=user) for user in MANY_USERS]
        harness.pump_for(1)
        during = [bench.responsiveness("during 1,000 clients (%d)" % k) for k in (1, 2)]
        outcomes = [bench.collect(abuser) for abuser in abusers]
        t2 = time.monotonic()
        harness.pump_for(3)
        t3 = time.monotonic()
        status_began = time.monotonic()
        status = bench.world.admin.status()
        status_ms = (time.monotonic() - status_began) * 1000
        after = bench.responsiveness("after")
        t4 = time.monotonic()
        for user, outcome in zip(MANY_USERS, outcomes):
            print("  abusers as %s: %s" % (user[1], json.dumps(outcome)))
        report_windows(bench, [("before", (t0, t1)), ("during", (t1, t2)), ("settled", (t3, t4))])
        print("  afterwards: %d clients listed (detached Always clients keep their regions), %d regions;"
              " GetStatus took %.1f ms" % (len(status["Clients"]), len(status["Regions"]), status_ms))
        bench.alive()
        return {"before": before, "during": during, "after": after, "abusers": outcomes}
    finally:
        bench.close()


def scenario_slow_client(beacond, options):
    print("\n== slow-client: one connection, 32 clients each ranging a UUID with 2,000 beacons around"
          " (2,700 adverts/s), never reads its socket", flush=True)
    bench = Bench(beacond, "[monitoring]\nexit_timeout = 5\n")
    try:
        bench.start()
        harness = bench.harness
        crowd = bench.worker("crowd", bench.world.fifo, 2000, 2700, options.abuse_seconds + 30)
        harness.pump_for(3)
        t0 = time.monotonic()
        before = bench.responsiveness("before (crowd on air)")
        t1 = time.monotonic()
        slow = bench.worker("slow", options.abuse_seconds)
        during = []
        began = time.monotonic()
        while time.monotonic() - began < options.abuse_seconds - 5:
            during.append(bench.responsiveness("slow client, from t=%.0f s" % (time.monotonic() - began), probes=50))
        outcome = bench.collect(slow)
        t2 = time.monotonic()
        harness.pump_for(3)
        after = bench.responsiveness("after")
        t3 = time.monotonic()
        crowd.send_signal(signal.SIGTERM)
        print("  slow client: %s" % json.dumps(outcome))
        report_windows(bench, [("before", (t0, t1)), ("slow client", (t1, t2)), ("after", (t2, t3))])
        print_timeline(bench, t1, t3)
        errors = bench.log_lines("could not send")
        print("  beacond log lines 'could not send': %d%s" % (len(errors), (": " + errors[0][:200]) if errors else ""))
        bench.alive()
        return {"before": before, "during": during, "after": after, "slow": outcome}
    finally:
        bench.close()


def bench_apps():
    import harness
    return harness.DEFAULT_APPS.items()


SCENARIOS = {"flood": scenario_flood, "register": scenario_register, "monitor-spam": scenario_monitor_spam,
             "many-clients": scenario_many_clients, "slow-client": scenario_slow_client}


# MARK: Workers (separate processes)

def worker_main(kind, address, arguments):
    if kind in ("flood", "crowd"):
        return worker_writer(kind, arguments)
    import dbus
    import dbus.mainloop.glib
    from gi.repository import GLib
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    globals().update(dbus=dbus, GLib=GLib)
    return {"ranger": worker_ranger, "register": worker_register, "monitor-spam": worker_monitor_spam,
            "many": worker_many, "slow": worker_slow}[kind](address, arguments)


def worker_writer(kind, arguments):
    """flood: N distinct identities over S seconds, each once. crowd: N identities of REAL_UUID cycled at R/s
    for S seconds. Writes whole lines in chunks of at most PIPE_BUF, so they never interleave with the
    measuring side's single-line writes."""
    import hci
    make = line_maker(hci)
    fifo = arguments[0]
    fd = os.open(fifo, os.O_WRONLY)
    if kind == "flood":
        total, seconds = int(arguments[1]), float(arguments[2])
        rate, duration = total / seconds, seconds
        cache = {}

        def line(i):
            beacon_uuid, major, minor = flood_identity(i)
            text = cache.get(beacon_uuid)
            if text is None:
                if len(cache) > 4:
                    cache.clear()
                text = cache[beacon_uuid] = spaced(beacon_uuid)
            return make(text, major, minor)
    else:
        count, rate, duration = int(arguments[1]), float(arguments[2]), float(arguments[3])
        total = None
        real = spaced(REAL_UUID)
        lines = [make(real, 100 + k // 1000, k % 1000) for k in range(count)]

        def line(i):
            return lines[i % count]
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    start = time.monotonic()
    written = 0
    chunks = 0
    while not stop:
        elapsed = time.monotonic() - start
        if elapsed >= duration or (total is not None and written >= total):
            break
        due = int(elapsed * rate) - written
        if total is not None:
            due = min(due, total - written)
        chunk = []
        size = 0
        for _ in range(due):
            text = line(written)
            if size + len(text) > 4096:
                os.write(fd, "".join(chunk).encode())
                chunks += 1
                chunk, size = [], 0
            chunk.append(text)
            size += len(text)
            written += 1
        if chunk:
            os.write(fd, "".join(chunk).encode())
            chunks += 1
        time.sleep(0.005)  # pacing, not a timing assertion
    elapsed = time.monotonic() - start
    os.close(fd)
    return {"written": written, "seconds": round(elapsed, 1), "rate": round(written / elapsed), "writes": chunks}


class WorkerClient:
    """A raw client for workers: its own connection, no signal collector unless asked."""

    def __init__(self, address):
        self.bus = dbus.bus.BusConnection(address)

    def call(self, path, interface, method, signature, *args, timeout=30):
        return self.bus.call_blocking(BUS_NAME, path, interface, method, signature, list(args), timeout=timeout)

    def register(self, app):
        return str(self.call(MANAGER_PATH, MANAGER, "RegisterClient", "s", app))


def run_loop_for(seconds):
    loop = GLib.MainLoop()
    GLib.timeout_add(int(seconds * 1000), loop.quit)
    loop.run()


def region(identifier, beacon_uuid, major=None, minor=None):
    value = {"Identifier": identifier, "UUID": beacon_uuid}
    if major is not None:
        value["Major"] = dbus.UInt16(major)
    if minor is not None:
        value["Minor"] = dbus.UInt16(minor)
    return dbus.Dictionary(value, signature="sv")


def worker_ranger(address, arguments):
    """Ranges REAL_UUID (app Other, Always) and tallies each DidRangeBeacons: size, and whether the real
    beacon (1, 1) is in it as heard."""
    seconds = float(arguments[0])
    client = WorkerClient(address)
    path = client.register("org.example.Other")
    cycles = []

    def ranged(beacons, constraint):
        real = [b for b in beacons if int(b["Major"]) == 1 and int(b["Minor"]) == 1]
        cycles.append((time.monotonic(), len(beacons), bool(real) and int(real[0]["RSSI"]) != 0))
    client.bus.add_signal_receiver(ranged, "DidRangeBeacons", LOCATION_MANAGER, path=path)
    client.call(path, LOCATION_MANAGER, "StartRanging", "a{sv}", dbus.Dictionary({"UUID": REAL_UUID}, signature="sv"))
    run_loop_for(seconds)
    gaps = [b[0] - a[0] for a, b in zip(cycles, cycles[1:])]
    return {"cycles": len(cycles), "real_heard": sum(1 for c in cycles if c[2]),
            "largest": max((c[1] for c in cycles), default=0), "max_gap_s": round(max(gaps, default=0), 2)}


def pipelined(count_in_flight, seconds, issue):
    """Keeps `count_in_flight` async calls going for `seconds`; `issue(done)` starts one and calls done()."""
    state = {"stop": False, "inflight": 0}
    loop = GLib.MainLoop()

    def done():
        state["inflight"] -= 1
        if not state["stop"]:
            state["inflight"] += 1
            issue(done)
        elif state["inflight"] == 0:
            loop.quit()

    def finish():
        state["stop"] = True
        if state["inflight"] == 0:
            loop.quit()
        GLib.timeout_add(15000, loop.quit)  # replies still missing after 15 s: give up on them
        return False
    for _ in range(count_in_flight):
        state["inflight"] += 1
        issue(done)
    GLib.timeout_add(int(seconds * 1000), finish)
    loop.run()


def worker_register(address, arguments):
    """RegisterClient as fast as 64 calls in flight allow. hold: keep every client (the cap refuses the rest);
    churn: Close() each client as soon as it is registered."""
    mode, seconds = arguments[0], float(arguments[1])
    client = WorkerClient(address)
    tally = {"registered": 0, "refused": 0, "closed": 0, "other_errors": 0, "error_names": {}}
    began = time.monotonic()

    def issue(done):
        def registered(path):
            tally["registered"] += 1
            if mode == "churn":
                client.bus.call_async(BUS_NAME, str(path), LOCATION_MANAGER, "Close", "", [],
                                      lambda *_: (tally.__setitem__("closed", tally["closed"] + 1), done()),
                                      lambda error: (count_error(error), done()), timeout=30)
            else:
                done()

        def count_error(error):
            name = error.get_dbus_name()
            tally["error_names"][name] = tally["error_names"].get(name, 0) + 1
            if name == "org.beacond.Error.InvalidArguments":
                tally["refused"] += 1
            else:
                tally["other_errors"] += 1

        client.bus.call_async(BUS_NAME, MANAGER_PATH, MANAGER, "RegisterClient", "s", ["org.example.Demo"],
                              registered, lambda error: (count_error(error), done()), timeout=30)
    pipelined(64, seconds, issue)
    elapsed = time.monotonic() - began
    tally["calls_per_s"] = round((tally["registered"] + tally["refused"] + tally["other_errors"]) / elapsed)
    return tally


def worker_monitor_spam(address, arguments):
    """One client (Other, Always): StartMonitoring of 25 identifiers in turn (5 past the default limit of
    20), each matching the real beacon, and StopMonitoring of each, 64 calls in flight."""
    seconds = float(arguments[0])
    client = WorkerClient(address)
    path = client.register("org.example.Other")
    tally = {"started": 0, "stopped": 0, "limit_refusals": 0, "unknown_region": 0, "other_errors": 0,
             "signals": 0}
    client.bus.add_signal_receiver(lambda *_: tally.__setitem__("signals", tally["signals"] + 1), path=path)
    counter = [0]

    def issue(done):
        k = counter[0]
        counter[0] += 1
        identifier = "spam%d" % (k % 25)

        def failed(error):
            name = error.get_dbus_name()
            key = {"org.beacond.Error.RegionLimitExceeded": "limit_refusals",
                   "org.beacond.Error.UnknownRegion": "unknown_region"}.get(name, "other_errors")
            tally[key] += 1
            done()
        if (k // 25) % 2 == 0:
            client.bus.call_async(BUS_NAME, path, LOCATION_MANAGER, "StartMonitoring", "a{sv}",
                                  [region(identifier, REAL_UUID, 1, 1)],
                                  lambda *_: (tally.__setitem__("started", tally["started"] + 1), done()), failed,
                                  timeout=30)
        else:
            client.bus.call_async(BUS_NAME, path, LOCATION_MANAGER, "StopMonitoring", "s", [identifier],
                                  lambda *_: (tally.__setitem__("stopped", tally["stopped"] + 1), done()), failed,
                                  timeout=30)
    began = time.monotonic()
    pipelined(64, seconds, issue)
    elapsed = time.monotonic() - began
    tally["calls_per_s"] = round(sum(tally[k] for k in ("started", "stopped", "limit_refusals", "unknown_region",
                                                        "other_errors")) / elapsed)
    return tally


def worker_many(address, arguments):
    """`count` connections of this user: each registers org.example.Many and monitors the real beacon's
    region (async, all at once); waits for every DidEnterRegion, holds 3 s, closes them all; again until
    `seconds` have passed."""
    import resource
    count, seconds = int(arguments[0]), float(arguments[1])
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, count + 64)), hard))
    tally = {"rounds": 0, "connected": 0, "registered": 0, "monitoring": 0, "entered": 0, "errors": 0,
             "error_names": {}, "round_seconds": []}
    began = time.monotonic()
    while time.monotonic() - began < seconds:
        round_began = time.monotonic()
        buses = []
        state = {"entered": 0, "pending": 0, "monitoring": 0}

        def error(failure):
            tally["errors"] += 1
            name = failure.get_dbus_name()
            tally["error_names"][name] = tally["error_names"].get(name, 0) + 1
            state["pending"] -= 1
        for _ in range(count):
            try:
                bus = dbus.bus.BusConnection(address)
            except dbus.exceptions.DBusException as failure:
                tally["errors"] += 1
                name = failure.get_dbus_name()
                tally["error_names"][name] = tally["error_names"].get(name, 0) + 1
                continue
            tally["connected"] += 1
            buses.append(bus)

            def entered(*_):
                state["entered"] += 1

            def registered(path, bus=bus):
                tally["registered"] += 1
                bus.add_signal_receiver(entered, "DidEnterRegion", LOCATION_MANAGER, path=str(path))
                bus.call_async(BUS_NAME, str(path), LOCATION_MANAGER, "StartMonitoring", "a{sv}",
                               [region("real", REAL_UUID, 1, 1)],
                               lambda *_: (tally.__setitem__("monitoring", tally["monitoring"] + 1),
                                           state.__setitem__("monitoring", state["monitoring"] + 1),
                                           state.__setitem__("pending", state["pending"] - 1)), error, timeout=60)
            state["pending"] += 1
            bus.call_async(BUS_NAME, MANAGER_PATH, MANAGER, "RegisterClient", "s", ["org.example.Many"],
                           registered, error, timeout=60)
        context = GLib.MainContext.default()
        wake = GLib.timeout_add(50, lambda: True)  # so the wait below re-checks its deadline
        deadline = time.monotonic() + 60
        while (state["pending"] > 0 or state["entered"] < state["monitoring"]) and time.monotonic() < deadline:
            context.iteration(True)
        tally["entered"] += state["entered"]
        tally["round_seconds"].append(round(time.monotonic() - round_began, 2))
        hold = time.monotonic() + 3
        while time.monotonic() < hold:
            context.iteration(True)
        GLib.source_remove(wake)
        for bus in buses:
            bus.close()
        tally["rounds"] += 1
    return tally


def worker_slow(address, arguments):
    """32 clients on one connection, each ranging REAL_UUID, then never reads its socket for `seconds`;
    finally reports whether the bus still has it and how much it had to read."""
    seconds = float(arguments[0])
    client = WorkerClient(address)
    paths = [client.register("org.example.Other") for _ in range(32)]
    for path in paths:
        client.call(path, LOCATION_MANAGER, "StartRanging", "a{sv}", dbus.Dictionary({"UUID": REAL_UUID},
                                                                                      signature="sv"))
    unique = client.bus.get_unique_name()
    received = [0]
    # Subscribed before the abuse: afterwards this connection's AddMatch reply waits behind everything queued.
    client.bus.add_signal_receiver(lambda *_: received.__setitem__(0, received[0] + 1), "DidRangeBeacons",
                                   LOCATION_MANAGER)
    time.sleep(seconds)  # the abuse itself: no main loop iteration, so nothing is read from the socket
    # Now read what is waiting, for a bounded time, and see whether the bus still knows this connection.
    context = GLib.MainContext.default()
    drain_until = time.monotonic() + 10
    while time.monotonic() < drain_until:
        if not context.iteration(False):
            time.sleep(0.01)
    try:
        other = dbus.bus.BusConnection(address)
        still = bool(other.call_blocking("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                         "NameHasOwner", "s", [unique], timeout=5))
    except dbus.exceptions.DBusException as failure:
        still = "unknown: %s" % failure
    return {"clients": len(paths), "connection_alive_afterwards": still,
            "range_signals_read_in_10s_after": received[0], "connected": client.bus.get_is_connected()
            if hasattr(client.bus, "get_is_connected") else None}


# MARK: Main

def main():
    if len(sys.argv) > 3 and sys.argv[1] == "--worker":
        sys.path.insert(0, INTEGRATION)
        result = worker_main(sys.argv[2], sys.argv[3], sys.argv[4:])
        print(json.dumps(result), flush=True)
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--beacond", default=".build/release/beacond")
    parser.add_argument("--identities", type=int, default=1_000_000)
    parser.add_argument("--flood-seconds", type=int, default=60)
    parser.add_argument("--no-flood-ranging", dest="flood_ranging", action="store_false",
                        help="flood without a client ranging the flooded UUID (to tell ranging's cost apart)")
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--abuse-seconds", type=int, default=20)
    parser.add_argument("scenarios", nargs="*", metavar="SCENARIO", help=", ".join(SCENARIOS))
    options = parser.parse_args()
    unknown = [name for name in options.scenarios if name not in SCENARIOS]
    if unknown:
        parser.error("unknown scenario %s (choose from %s)" % (", ".join(unknown), ", ".join(SCENARIOS)))
    if os.geteuid() != 0:
        sys.exit("daemon-abuse.py needs root (the harness's apps are declared for root; workers switch users)")
    beacond = os.path.abspath(options.beacond)
    import harness

    def interrupted(signum, frame):
        harness.remove_everything()
        os._exit(128 + signum)
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, interrupted)
    print("beacond %s; machine: %d cores, load %s" % (beacond, os.cpu_count(),
                                                    " ".join("%.2f" % x for x in os.getloadavg())), flush=True)
    try:
        for name in options.scenarios or list(SCENARIOS):
            SCENARIOS[name](beacond, options)
    finally:
        harness.remove_everything()
    return 0


if __name__ == "__main__":
    sys.exit(main())
