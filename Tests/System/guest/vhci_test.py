"""Guest scenario: our own scripted controller (Tests/System/vhci_controller.py on /dev/vhci) under the real
kernel and bluetoothd, reporting iBeacons on a schedule, and beacond with the hci scanner and again with the bluez
scanner:

- a stationary beacon at a steady RSSI of -60, 10 reports a second, for more than three exit timeouts: entered
  once, never exited; ranging reports an RSSI around -60 (hci scanner: every report reaches beacond);
- a walk-away: the RSSI falls, then the beacon goes silent: exactly one DidExitRegion;
- 50 beacons at 2 Hz each: all 50 ranged, every second, none drops out;
- malformed reports (truncated events, lengths that overrun, garbage): beacond, bluetoothd and the kernel go on,
  and a beacon after them is still seen;
- `beacond replay` reading btmon's capture live, as docs/daemon.md says to run it.
"""
import json
import os
import signal
import subprocess
import sys
import time

import systest
from systest import check, plain, step

sys.path.insert(0, os.path.join(systest.REPO, "Tests", "System"))
import vhci_controller  # noqa: E402

EXIT_TIMEOUT = 3
STATIONARY_SECONDS = 3 * EXIT_TIMEOUT + 1
CROWD = 50
# Each crowd beacon's rate. Throughput is the benchmark's (docs/performance.md: millions of reports a second on the
# host); here the emulated guest's one CPU runs the controller script, bluetoothd and beacond, and at 10 Hz each
# (500 reports a second) the script alone fell behind on a busy host (one CI run heard 23 of 50 in a second, another
# saw no second with all 50 in 62 s), so the check measured the emulation. At 2 Hz the promise is what it says:
# 50 beacons at once are each ranged and none drops out.
CROWD_HZ = 2.0
CROWD_SECONDS = 5
UUID = systest.BEACON_UUID


def start_stack():
    systest.accounts()
    bus = systest.system_bus()
    systest.btmon()
    log = open(os.path.join(systest.LOGS, "vhci.log"), "a")
    controller = vhci_controller.Controller(log=log)
    index = controller.open()
    check(index == 0, "the controller is hci%d, expected hci0 (no other controller exists)" % index)
    bluetoothd = systest.bluetoothd(bus, debug=False)
    systest.wait_adapter_powered(bus, "hci0")
    return bus, bluetoothd, controller


def beacon(major, minor, rssi=-60, hz=10.0, number=None):
    address, _ = vhci_controller.random_static_address(number if number is not None else major * 1000 + minor)
    return vhci_controller.Beacon(address, vhci_controller.ibeacon_data(UUID, major, minor), rssi, hz)


def bluez_sees_rssi(bus, controller):
    """bluetoothd's own discovery shows the beacon as a Device1 with ManufacturerData and RSSI -60."""
    stationary = controller.add_beacon(beacon(9, 9))
    adapter = "/org/bluez/hci0"
    bus.bluez(adapter, systest.ADAPTER, "SetDiscoveryFilter", "a{sv}",
              {"Transport": "le", "DuplicateData": systest.dbus.Boolean(True)})
    bus.bluez(adapter, systest.ADAPTER, "StartDiscovery")
    try:
        def found():
            objects = bus.bluez_objects()
            match = systest.manufacturer_beacon(objects)
            return match and objects[match[0]][systest.DEVICE].get("RSSI")
        rssi = systest.wait_for(found, systest.STEP_TIMEOUT, "a Device1 with the iBeacon and an RSSI")
    finally:
        bus.bluez(adapter, systest.ADAPTER, "StopDiscovery")
        bus.bluez(adapter, systest.ADAPTER, "SetDiscoveryFilter", "a{sv}", systest.dbus.Dictionary({}, "sv"))
        controller.remove_beacon(stationary)
    check(rssi == -60, "Device1 RSSI %s, the controller reports -60" % rssi)
    systest.remove_devices(bus, "hci0")


def ranged(client, mark, major, minor):
    """RSSI values of (major, minor) in the DidRangeBeacons received since `mark` (0 = not heard that second)."""
    values = []
    for signal in client.collector.since(mark, "DidRangeBeacons", path=client.path):
        for item in plain(signal.args[0]):
            if item.get("Major") == major and item.get("Minor") == minor:
                values.append(item.get("RSSI"))
    return values


def stationary(client, controller, scanner):
    """10 s of reports at -60: no DidExitRegion, no second DidEnterRegion."""
    mark = client.collector.mark()
    systest.pump_for(STATIONARY_SECONDS)
    exits = client.count("DidExitRegion", mark)
    enters = client.count("DidEnterRegion", mark)
    states = [str(s.args[0]) for s in client.collector.since(mark, "DidDetermineState", path=client.path)]
    check(exits == 0 and enters == 0 and not states,
          "during %d s of steady advertising: %d DidExitRegion, %d more DidEnterRegion, DidDetermineState %s"
          % (STATIONARY_SECONDS, exits, enters, states))
    return mark


def ranging_rssi(client, mark, scanner):
    values = [value for value in ranged(client, mark, 1, 1) if value]
    check(values, "no DidRangeBeacons with beacon 1/1 heard (RSSI non-zero) in %d s" % STATIONARY_SECONDS)
    outside = [value for value in values if not -66 <= value <= -54]
    check(not outside, "ranged RSSI values %s, the controller reports -60" % values[:20])
    systest.note("%s: ranged RSSI of the stationary beacon: %s" % (scanner, sorted(set(values))))


def walk_away(client, controller, walker):
    """RSSI -60 → -90 over 3 s, then silence: exactly one DidExitRegion, within the exit timeout of the last
    report (plus TCG's slack)."""
    mark = client.collector.mark()
    for rssi in (-65, -70, -75, -80, -85, -90):
        walker.rssi = rssi
        systest.pump_for(0.5)
    walker.active = False
    silent_since = time.monotonic()
    exited = client.exited(timeout=EXIT_TIMEOUT + systest.STEP_TIMEOUT)
    waited = exited.time - silent_since
    check(waited >= EXIT_TIMEOUT - 0.5, "DidExitRegion %.1f s after the beacon went silent, before exit_timeout %d s"
          % (waited, EXIT_TIMEOUT))
    systest.pump_for(EXIT_TIMEOUT)
    exits = client.count("DidExitRegion", mark)
    check(exits == 1, "%d DidExitRegion for one walk-away" % exits)
    systest.note("DidExitRegion %.1f s after the beacon went silent" % waited)


def crowd(client, controller, scanner):
    """50 beacons (major 2, minors 1…50) at CROWD_HZ each: a DidRangeBeacons lists all 50 with an RSSI, and every
    one of the next CROWD_SECONDS lists all 50.

    A beacon may miss an RSSI in one second (ranging shows it with RSSI 0 and proximity unknown, as Core Location
    does), never in two running, and no beacon may drop out of the list. Under software emulation the guest's
    own controller script, and with bluez bluetoothd too, share the emulated CPU: one CI run on a host with
    nothing else running still saw three hci beacons miss one second ([.., 50, 47, 50, ..]) while the guest was
    stalled. A beacond that loses a beacon's reports misses it again the next second, which this still fails."""
    beacons = [controller.add_beacon(beacon(2, minor, hz=CROWD_HZ)) for minor in range(1, CROWD + 1)]
    mark = client.collector.mark()

    def listed(signal):
        return {item.get("Minor") for item in plain(signal.args[0]) if item.get("Major") == 2}

    def heard(signal):
        return {item.get("Minor") for item in plain(signal.args[0]) if item.get("Major") == 2 and item.get("RSSI")}
    try:
        def all_ranged():
            for index, signal in enumerate(client.collector.since(mark, "DidRangeBeacons", path=client.path)):
                if len(heard(signal)) == CROWD:
                    return index + 1
            return None
        started = time.monotonic()
        first = systest.wait_for(all_ranged, systest.scaled(60),
                                 "a DidRangeBeacons listing all %d beacons with an RSSI" % CROWD)
        systest.note("all %d beacons ranged %.1f s after they started" % (CROWD, time.monotonic() - started))
        sent = controller.reports_sent
        began = time.monotonic()
        # The next CROWD_SECONDS ranging cycles, waited for as events: beacond ranges once a second, but a guest
        # stalled by the emulation (one CI run saw none for 5 s on a host with nothing else running) delays them;
        # a beacond that stops ranging still fails the bound.
        systest.wait_for(lambda: len(client.collector.since(mark, "DidRangeBeacons", path=client.path)) >= first + CROWD_SECONDS,
                         systest.scaled(CROWD_SECONDS * 6), "%d more DidRangeBeacons" % CROWD_SECONDS)
        later = client.collector.since(mark, "DidRangeBeacons", path=client.path)[first:first + CROWD_SECONDS]
        counts = [len(heard(signal)) for signal in later]
        check(all(len(listed(signal)) == CROWD for signal in later),
              "beacons listed per DidRangeBeacons over %d s: %s" % (CROWD_SECONDS, [len(listed(s)) for s in later]))
        missed = [{minor for minor in range(1, CROWD + 1) if minor not in heard(signal)} for signal in later]
        twice = sorted(set().union(*(a & b for a, b in zip(missed, missed[1:])))) if len(missed) > 1 else []
        check(not twice, "beacons without an RSSI in two seconds running: %s (heard per second: %s)"
              % (twice, counts))
        systest.note("%d DidRangeBeacons in %.1f s; beacons heard in each: %s; the controller sent %d reports meanwhile"
                     % (len(counts), time.monotonic() - began, counts, controller.reports_sent - sent))
    finally:
        for item in beacons:
            controller.remove_beacon(item)


MALFORMED = [
    # LE Meta with no subevent at all
    bytes([0x04, 0x3E, 0x00]),
    # Advertising report count 1 but nothing after it
    bytes([0x04, 0x3E, 0x02, 0x02, 0x01]),
    # data length 31 but only 5 bytes of data follow (truncated report)
    bytes([0x04, 0x3E, 0x10, 0x02, 0x01, 0x03, 0x01, 1, 2, 3, 4, 5, 0xC6, 31, 0x02, 0x01, 0x06, 0x1A, 0xFF]),
    # data length 200 (more than any legacy advert) in a short event
    bytes([0x04, 0x3E, 0x0D, 0x02, 0x01, 0x03, 0x01, 1, 2, 3, 4, 5, 0xC6, 200, 0x00, 0xC4]),
    # report count 10, one report's worth of bytes
    bytes([0x04, 0x3E, 0x0D, 0x02, 0x0A, 0x03, 0x01, 1, 2, 3, 4, 5, 0xC6, 0x01, 0x00, 0xC4]),
    # an iBeacon whose AD length overruns its data (0x1A says 26, 10 follow)
    bytes([0x04, 0x3E, 0x18, 0x02, 0x01, 0x03, 0x01, 1, 2, 3, 4, 5, 0xC6, 12, 0x1A, 0xFF, 0x4C, 0x00, 0x02,
           0x15, 0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0xC4]),
    # an iBeacon AD with a length of zero and a length of 255 inside a well-formed report
    bytes([0x04, 0x3E, 0x11, 0x02, 0x01, 0x03, 0x01, 1, 2, 3, 4, 5, 0xC6, 5, 0x00, 0xFF, 0xFF, 0x4C, 0x00, 0xC4]),
    # extended advertising report subevent (0x0D) truncated, from a controller claiming 4.2
    bytes([0x04, 0x3E, 0x04, 0x0D, 0x01, 0x13, 0x00]),
    # event length larger than the packet
    bytes([0x04, 0x3E, 0x40, 0x02, 0x01, 0x03]),
    # not LE Meta: an unknown event code with garbage
    bytes([0x04, 0xF0, 0x03, 0xDE, 0xAD, 0xBE]),
]


def malformed(bus, daemon, client, controller, bluetoothd):
    """Every malformed event, ten times over, between proper reports; then everyone is alive."""
    for _ in range(10):
        for packet in MALFORMED:
            controller.inject(packet)
        systest.pump_for(0.1)
    systest.pump_for(2)
    daemon.alive()
    check(bluetoothd.running(), "bluetoothd exited")
    if controller.write_errors:
        systest.note("the kernel refused %d of the malformed writes on /dev/vhci" % controller.write_errors)


def live_replay():
    """The command docs/daemon.md gives for watching a live capture, `btmon -w >(beacond replay --json -)
    >/dev/null` (btmon writes its decoded text to standard output too, so not `btmon -w /dev/stdout`): while the
    stationary beacon advertises, its observations come out of replay while btmon still runs, RSSI -60."""
    # bash's >(…) is a /dev/fd path; the guest's minimal /dev lacks the link every full system has (udev makes it).
    if not os.path.exists("/dev/fd"):
        os.symlink("/proc/self/fd", "/dev/fd")
    out_path = os.path.join(systest.LOGS, "live-replay.jsonl")
    errors = open(os.path.join(systest.LOGS, "live-replay.stderr"), "a")
    pipeline = subprocess.Popen(["bash", "-c", 'btmon -w >("$0" replay --json - > "$1") > /dev/null',
                                 systest.BEACOND, out_path], start_new_session=True, stderr=errors)

    def observed():
        beacon = []
        try:
            with open(out_path) as file:
                for line in file:
                    try:
                        item = json.loads(line)
                    except ValueError:
                        continue  # a line still being written
                    if item.get("major") == 1 and item.get("minor") == 1:
                        beacon.append(item)
        except OSError:
            return None
        return beacon if len(beacon) >= 5 else None
    try:
        lines = systest.wait_for(observed, systest.STEP_TIMEOUT, "5 observations of beacon 1/1 from btmon, live")
        check(pipeline.poll() is None, "btmon and replay ended before their lines were read: not live")
        wrong = [item for item in lines if item.get("uuid") != UUID.upper() or item.get("rssi") != -60]
        check(not wrong, "observations that are not beacon 1/1 at -60: %r" % wrong[:3])
        systest.note("live replay from btmon: %d observations of beacon 1/1 while btmon ran" % len(lines))
    finally:
        os.killpg(pipeline.pid, signal.SIGTERM)
        pipeline.wait(timeout=systest.scaled(10))


def scanner_scenario(bus, bluetoothd, controller, scanner):
    name = "beacond --scanner %s" % scanner
    label = "beacond-vhci-" + scanner.replace(":", "-")
    daemon = step("%s: starts and owns org.beacond" % name, systest.Beacond, bus, scanner, label,
                  exit_timeout=EXIT_TIMEOUT)
    if daemon is None:
        return
    walker = controller.add_beacon(beacon(1, 1))
    try:
        client = step("%s: a client monitors the region of beacon 1/1 and ranges the UUID" % name,
                      systest.Monitor, ranging=True, Major=1, Minor=1)
        if client is None:
            return
        if step("%s: DidEnterRegion for the stationary beacon (RSSI -60, 10 Hz)" % name, client.entered) is None:
            return
        if scanner.startswith("hci"):
            step("btmon -w >(beacond replay --json -): the beacon's observations come out live", live_replay)
        mark = step("%s: no DidExitRegion (nor re-entry) while it advertises for %d s (%d exit timeouts)"
                    % (name, STATIONARY_SECONDS, STATIONARY_SECONDS // EXIT_TIMEOUT), stationary, client,
                    controller, scanner)
        if mark is not None and scanner.startswith("hci"):
            step("%s: DidRangeBeacons reports its RSSI around -60" % name, ranging_rssi, client, mark, scanner)
        elif mark is not None:
            values = [value for value in ranged(client, mark, 1, 1) if value]
            systest.note("%s: ranged RSSI of the stationary beacon (not asserted: bluetoothd reports changes "
                         "only): %s" % (name, sorted(set(values))))
        step("%s: walk-away (RSSI falling, then silence): exactly one DidExitRegion" % name, walk_away, client,
             controller, walker)
        step("%s: %d beacons at %g Hz each: all ranged, every second for %d s (an RSSI missed one second at most)"
             % (name, CROWD, CROWD_HZ, CROWD_SECONDS),
             crowd, client, controller, scanner)
        step("%s: malformed reports: beacond, bluetoothd and the kernel keep running" % name, malformed, bus,
             daemon, client, controller, bluetoothd)
        walker.active = True
        walker.rssi = -60
        step("%s: after them a beacon is still seen (DidEnterRegion again)" % name, client.entered)
        client.close()
    finally:
        controller.remove_beacon(walker)
        step("%s: still running, then exits 0 on SIGTERM" % name, lambda: (daemon.alive(), daemon.stop()))
        systest.remove_devices(bus, "hci0")


def main():
    stack = step("our controller on /dev/vhci is initialised by the kernel and powered by bluetoothd", start_stack)
    if stack is None:
        systest.finish()
    bus, bluetoothd, controller = stack
    systest.note("kernel commands answered: %s" % " ".join("%04x" % opcode for opcode in
                                                            dict.fromkeys(controller.commands)))
    if step("bluetoothd's discovery shows the beacon with RSSI -60 (Device1)", bluez_sees_rssi, bus, controller):
        for scanner in ("hci:hci0", "bluez:hci0"):
            scanner_scenario(bus, bluetoothd, controller, scanner)
    step("bluetoothd still runs", lambda: check(bluetoothd.running(), "bluetoothd exited"))
    systest.run(["dmesg"], log="dmesg")
    controller.close()
    systest.finish()


if __name__ == "__main__":
    os.chdir(systest.REPO)
    main()
