"""Guest scenario: the adapter's lifecycle under beacond, with the hci and then the bluez scanner, while our
controller (vhci_controller.py) keeps reporting a stationary beacon that is inside the monitored region:

- bluetoothd killed (SIGKILL), kept away for two exit timeouts, started again;
- the controller closed (the kernel removes hci0, as when a dongle is unplugged) and opened again.

beacond must keep running, say in GetStatus that it cannot scan, turn the region `unknown`
(DidDetermineState('unknown')) instead of inventing a DidExitRegion, and scan again by itself within a few
seconds of the adapter being usable, where the region comes back `inside` without any DidExitRegion.
"""
import os
import signal
import sys
import time

import systest
from systest import check, step

sys.path.insert(0, os.path.join(systest.REPO, "Tests", "System"))
import vhci_controller  # noqa: E402

EXIT_TIMEOUT = 3
BLIND_SECONDS = 2 * EXIT_TIMEOUT
RESUME_BOUND = systest.scaled(5)  # the daemon promises 2 s; software emulation gets slack
UUID = systest.BEACON_UUID


class World:
    def __init__(self):
        systest.accounts()
        self.bus = systest.system_bus()
        systest.btmon()
        self.log = open(os.path.join(systest.LOGS, "vhci.log"), "a")
        self.controller = None
        self.beacon = None
        self.open_controller()
        self.bluetoothd = systest.bluetoothd(self.bus, debug=False)
        systest.wait_adapter_powered(self.bus, "hci0")

    def open_controller(self):
        self.controller = vhci_controller.Controller(log=self.log)
        index = self.controller.open()
        check(index == 0, "the controller is hci%d, expected hci0" % index)
        address, _ = vhci_controller.random_static_address(1001)
        self.beacon = self.controller.add_beacon(
            vhci_controller.Beacon(address, vhci_controller.ibeacon_data(UUID, 1, 1), -60, 10.0))

    def close_controller(self):
        self.controller.close()
        systest.wait_for(lambda: "hci0" not in systest.adapters(), systest.STEP_TIMEOUT, "hci0 removed")


def set_rfkill(blocked):
    """Soft-blocks (or unblocks) every Bluetooth rfkill switch, as `rfkill block bluetooth` does."""
    found = False
    for entry in os.listdir("/sys/class/rfkill"):
        base = os.path.join("/sys/class/rfkill", entry)
        with open(os.path.join(base, "type")) as kind:
            if kind.read().strip() != "bluetooth":
                continue
        with open(os.path.join(base, "soft"), "w") as soft:
            soft.write("1" if blocked else "0")
        found = True
    check(found, "no Bluetooth rfkill switch in /sys/class/rfkill")


def discovering(bus):
    try:
        return bool(bus.bluez("/org/bluez/hci0", systest.PROPERTIES, "Get", "ss", systest.ADAPTER, "Discovering"))
    except systest.dbus.exceptions.DBusException:
        return False


def scanner_state(daemon):
    return daemon.alive().get("ScannerState")


def blind_then_back(world, daemon, client, name, take_away, give_back, what, steady):
    """take_away(); the region goes unknown and GetStatus says beacond cannot scan; no DidExitRegion for
    BLIND_SECONDS; give_back(); scanning within RESUME_BOUND seconds of the adapter being powered, bluetoothd
    discovering, the region inside again, and still no DidExitRegion `steady` seconds later."""
    mark = client.collector.mark()
    take_away()
    step("%s: %s: beacond keeps running and its ScannerState says it cannot scan" % (name, what),
         systest.wait_for, lambda: scanner_state(daemon) != "scanning", systest.STEP_TIMEOUT,
         "ScannerState other than scanning")
    systest.note("%s: %s: ScannerState %r" % (name, what, scanner_state(daemon)))
    step("%s: %s: the region becomes unknown (DidDetermineState('unknown'))" % (name, what), client.state,
         "unknown")
    systest.pump_for(BLIND_SECONDS)
    step("%s: %s: no DidExitRegion while blind for %d s" % (name, what, BLIND_SECONDS),
         lambda: check(client.count("DidExitRegion", mark) == 0, "DidExitRegion while blind"))
    give_back()
    powered = time.monotonic()

    def scanning():
        return scanner_state(daemon) == "scanning"
    if step("%s: %s: scanning resumes by itself within %g s of the adapter being powered" % (name, what,
                                                                                           RESUME_BOUND),
            systest.wait_for, scanning, RESUME_BOUND, "ScannerState scanning again"):
        systest.note("%s: %s: scanning again %.1f s after the adapter was powered"
                     % (name, what, time.monotonic() - powered))
    step("%s: %s: the region is inside again (DidDetermineState('inside'))" % (name, what), client.state,
         "inside", timeout=systest.STEP_TIMEOUT)
    step("%s: %s: bluetoothd's hci0 is discovering again (Adapter1.Discovering)" % (name, what),
         systest.wait_for, lambda: discovering(world.bus), systest.STEP_TIMEOUT, "hci0 Discovering")
    systest.pump_for(steady)
    exits = client.count("DidExitRegion", mark)
    enters = client.count("DidEnterRegion", mark)
    step("%s: %s: no DidExitRegion from start to %d s after the return" % (name, what, steady),
         lambda: check(exits == 0, "%d DidExitRegion" % exits))
    systest.note("%s: %s: DidEnterRegion sent again on the way back: %d" % (name, what, enters))


def scanner_scenario(world, scanner):
    name = "beacond --scanner %s" % scanner
    daemon = step("%s: starts" % name, systest.Beacond, world.bus, scanner, "beacond-life-" + scanner.split(":")[0],
                  exit_timeout=EXIT_TIMEOUT)
    if daemon is None:
        return
    try:
        client = step("%s: a client monitors the beacon's region" % name, systest.Monitor, Major=1, Minor=1)
        if client is None or step("%s: DidEnterRegion" % name, client.entered) is None:
            return

        def kill_bluetoothd():
            world.bluetoothd.signal(signal.SIGKILL)
            world.bluetoothd.wait(systest.scaled(10))

        def start_bluetoothd():
            world.bluetoothd = systest.bluetoothd(world.bus, debug=False)
            systest.wait_adapter_powered(world.bus, "hci0")
        # A killed bluetoothd leaves the kernel's discovery running (up to 10.24 s); the new one's start is
        # refused as Busy meanwhile. Watching past that shows whether discovery really came back.
        blind_then_back(world, daemon, client, name, kill_bluetoothd, start_bluetoothd,
                        "bluetoothd killed and restarted", 11 + EXIT_TIMEOUT)

        def reopen():
            world.open_controller()
            systest.wait_adapter_powered(world.bus, "hci0")
        blind_then_back(world, daemon, client, name, world.close_controller, reopen,
                        "the controller closed and reopened", EXIT_TIMEOUT + 2)

        # rfkill: a soft block powers the controller down under bluetoothd; unblocking and powering it on
        # (bluetoothd does not re-power an adapter after a block by itself) makes it usable again.
        def block():
            set_rfkill(True)

        def unblock():
            set_rfkill(False)
            systest.btmgmt(0, "power", "on")
            systest.wait_adapter_powered(world.bus, "hci0")
        blind_then_back(world, daemon, client, name, block, unblock, "rfkill blocked and unblocked", EXIT_TIMEOUT + 2)

        # Discovery is shared politely: another bluetoothd client (this test's own connection) starts and
        # stops its discovery while beacond scans, and neither disturbs the other.
        mark = client.collector.mark()
        step("%s: another client's StartDiscovery succeeds while beacond scans" % name,
             lambda: world.bus.bluez("/org/bluez/hci0", systest.ADAPTER, "StartDiscovery"))
        systest.pump_for(EXIT_TIMEOUT + 1)
        step("%s: the other client's StopDiscovery leaves beacond's discovery running" % name,
             lambda: (world.bus.bluez("/org/bluez/hci0", systest.ADAPTER, "StopDiscovery"),
                      systest.pump_for(2), check(discovering(world.bus), "hci0 stopped discovering")))
        step("%s: beacond saw no exit while the other client came and went" % name,
             lambda: check(client.count("DidExitRegion", mark) == 0, "DidExitRegion"))
        # StopMonitoring ends the app's only region, so nobody needs scanning (Close() alone would leave the region
        # to the app, as a disconnect does, and scanning going); then the client closes.
        step("%s: with beacond's client closed, another client's discovery keeps running" % name,
             lambda: (world.bus.bluez("/org/bluez/hci0", systest.ADAPTER, "StartDiscovery"),
                      client.lm("StopMonitoring", "s", client.identifier), client.lm("Close"),
                      client.close(),
                      systest.pump_for(3), check(discovering(world.bus), "beacond stopped the other client's discovery")))
        step("%s: when the other client stops too, nobody discovers (beacond released its session)" % name,
             lambda: (world.bus.bluez("/org/bluez/hci0", systest.ADAPTER, "StopDiscovery"),
                      systest.wait_for(lambda: not discovering(world.bus), systest.STEP_TIMEOUT, "hci0 Discovering false")))
    finally:
        step("%s: still running, then exits 0 on SIGTERM" % name, lambda: (daemon.alive(), daemon.stop()))
        systest.remove_devices(world.bus, "hci0")


def main():
    world = step("our controller, bluetoothd, hci0 powered", World)
    if world is None:
        systest.finish()
    for scanner in ("hci:hci0", "bluez:hci0"):
        scanner_scenario(world, scanner)
    systest.run(["dmesg"], log="dmesg")
    world.controller.close()
    systest.finish()


if __name__ == "__main__":
    os.chdir(systest.REPO)
    main()
