"""Guest scenario: two virtual controllers from BlueZ's btvirt, hci1 advertising an iBeacon (btmgmt add-adv), hci0
scanning: the advert reaches bluetoothd's Device1, then beacond with the hci scanner and again with the bluez
scanner reports DidEnterRegion to a D-Bus client, and DidExitRegion after the advertiser stops (btmgmt rm-adv).

Then the other beacon kinds, as a real stack builds and carries them (docs/devices.md): hci1 advertises an
AltBeacon (manufacturer data of company 0x0118, beacon code BE AC) and an Eddystone-UID (16-bit UUID list and
service data for 0xFEAA) as two more advertising sets. bluetoothd's Device1 carries them (ManufacturerData,
ServiceData and UUIDs: the bluez scanner's input); beacond with the hci scanner enters an AltBeacon region (id1,
id2, id3) and an Eddystone region (namespace, instance), and not a lookalike of another kind or instance, ranges
both kinds with every identifier and the TX power as advertised, and exits both once they stop. hci0's reports
of the two adverts are kept as a btsnoop capture (LOGS/kinds-adverts.btsnoop, btmon's records as received), which
beacond replay decodes. The bluez scanner is not run for them: see the note in scanner_scenario.

btvirt's controllers send one advertising report (RSSI 127, unknown) per advertising set when the scanner enables
scanning, or when the advertiser enables the set while the other scans (BlueZ's emulator/btdev.c), and never
repeat it in between. bluetoothd's LE discovery restarts about every 10 s (the kernel's discovery timeout), which
enables scanning again and so brings one more report of each set. A report that comes with the scan enable can
beat the kernel's own "discovery under way" and is then not passed to bluetoothd (the hci scanner's raw socket
gets it all the same), so the other kinds are advertised once hci0 scans (see start_bluez_discovery). With an
exit_timeout of 3 s, regions here go in and out between those reports: the exits here prove only that a region
leaves after silence; a beacon that keeps advertising is vhci_test.py's job (our own controller repeats its
reports). btvirt aborts (buffer overflow) on an advert longer than a legacy one's 31 bytes, which the kernel
accepts from btmgmt on an extended-advertising controller: each advert here is 28 bytes, beside the kernel's
3-byte Flags.
"""
import json
import os

import systest
from systest import TestFailure, check, plain, step

MAJOR, MINOR = 1, 11
ADVERT = 1  # btmgmt add-adv instance
EXIT_TIMEOUT = 3

# The other kinds: one advertising set each (btvirt's controllers have 3), every field distinct from the iBeacon's.
ALTBEACON_ADVERT, EDDYSTONE_ADVERT = 2, 3
ALTBEACON_ID1 = "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6"
ALTBEACON_ID2, ALTBEACON_ID3 = 2, 22
ALTBEACON_REFERENCE_RSSI = -61  # at 1 m
NAMESPACE = "edd1ebeac04e5defa017"
INSTANCE = "0b7e57000003"
OTHER_INSTANCE = "0b7e57000004"
EDDYSTONE_TX_AT_ZERO = -20  # beacond subtracts 41 dB for the power at 1 m: -61
ALTBEACON_DATA = systest.altbeacon_advertising_data(ALTBEACON_ID1, ALTBEACON_ID2, ALTBEACON_ID3,
                                                    ALTBEACON_REFERENCE_RSSI)
EDDYSTONE_DATA = systest.eddystone_uid_advertising_data(NAMESPACE, INSTANCE, EDDYSTONE_TX_AT_ZERO)
ALTBEACON_REGION = {"Kind": "AltBeacon", "Major": ALTBEACON_ID2, "Minor": ALTBEACON_ID3}  # and UUID: id1
EDDYSTONE_REGION = {"Kind": "Eddystone", "Namespace": NAMESPACE, "Instance": INSTANCE}
ALTBEACON_CONSTRAINT = {"Kind": "AltBeacon", "UUID": ALTBEACON_ID1}  # every id2 and id3: ranging shows them
EDDYSTONE_CONSTRAINT = {"Kind": "Eddystone", "Namespace": NAMESPACE}  # every instance
# Regions the adverts must not enter: an iBeacon with the AltBeacon's numbers (another kind), and another instance.
LOOKALIKES = {
    "ibeacon-with-altbeacon-numbers": {"UUID": ALTBEACON_ID1, "Major": ALTBEACON_ID2, "Minor": ALTBEACON_ID3},
    "eddystone-other-instance": {"Kind": "Eddystone", "Namespace": NAMESPACE, "Instance": OTHER_INSTANCE},
}
KINDS_CAPTURE = "kinds-adverts.btsnoop"


def start_stack():
    systest.accounts()
    bus = systest.system_bus()
    systest.btmon()
    btvirt = systest.Process("btvirt", ["btvirt", "-l2"])
    systest.wait_for(lambda: systest.adapters() == ["hci0", "hci1"] or not btvirt.running(),
                     systest.START_TIMEOUT, "btvirt's hci0 and hci1")
    check(btvirt.running(), "btvirt exited: %s" % btvirt.log()[-500:])
    bluetoothd = systest.bluetoothd(bus)
    for adapter in ("hci0", "hci1"):
        systest.wait_adapter_powered(bus, adapter)
    return bus, bluetoothd


def advertise():
    """hci1 advertises the iBeacon (general discoverable: the kernel adds the Flags structure itself and
    refuses data that carries one)."""
    systest.btmgmt(1, "add-adv", "-d", systest.ibeacon_advertising_data(MAJOR, MINOR), "-g", str(ADVERT))


def stop_advertising():
    systest.btmgmt(1, "rm-adv", str(ADVERT))


def advertise_while_discovering(bus):
    """hci1 advertises the iBeacon once bluetoothd's own discovery runs on hci0 (start_bluez_discovery says why
    in this order: a report that comes with the scan enable can beat the kernel's discovery state and be lost)."""
    start_bluez_discovery(bus)
    try:
        advertise()
    except TestFailure:
        stop_bluez_discovery(bus)
        raise


def bluez_sees_the_beacon(bus):
    """bluetoothd's discovery (LE, duplicates reported) on hci0 shows a Device1 carrying the iBeacon in
    ManufacturerData: the advert went through the kernel, the controller and bluetoothd."""
    try:
        found = systest.wait_for(lambda: systest.manufacturer_beacon(bus.bluez_objects()), systest.STEP_TIMEOUT,
                                 "a Device1 with the iBeacon in ManufacturerData")
    finally:
        stop_bluez_discovery(bus)
    path, major, minor = found
    check((major, minor) == (MAJOR, MINOR), "%s carries major %d minor %d, advertised %d %d"
          % (path, major, minor, MAJOR, MINOR))
    systest.note("bluetoothd's %s carried the iBeacon %s major %d minor %d" % (path, systest.BEACON_UUID,
                                                                                major, minor))


def discovering(bus):
    return bool(bus.bluez("/org/bluez/hci0", systest.PROPERTIES, "Get", "ss", systest.ADAPTER, "Discovering"))


def scanner_scenario(bus, scanner):
    name = "beacond --scanner %s" % scanner
    label = "beacond-" + scanner.replace(":", "-")
    daemon = step("%s: starts and owns org.beacond on the system bus" % name, systest.Beacond, bus, scanner, label,
                  exit_timeout=EXIT_TIMEOUT)
    if daemon is None:
        return
    try:
        client = step("%s: a client registers, is authorized Always and monitors the beacon's region" % name,
                      systest.Monitor)
        if client is None:
            return
        step("%s: ScannerState is scanning" % name, systest.wait_scanning, daemon)
        step("%s: bluetoothd runs LE discovery on hci0 for it (Adapter1.Discovering)" % name,
             systest.wait_for, lambda: discovering(bus), systest.STEP_TIMEOUT, "hci0 Discovering")
        if scanner.startswith("hci"):
            if step("%s: DidEnterRegion for the advertised iBeacon" % name, client.entered):
                step("%s: the advertiser stops (btmgmt rm-adv)" % name, stop_advertising)
                step("%s: DidExitRegion after the advertiser stopped" % name, client.exited,
                     timeout=EXIT_TIMEOUT + systest.STEP_TIMEOUT)
        else:
            # beacond's discovery filter carries an RSSI threshold (so bluetoothd reports RSSI changes); the
            # kernel then drops every report whose RSSI is 127 (unknown), which is all btvirt sends. The bluez
            # scanner's enter and exit are vhci_test.py's, whose controller reports real RSSI values.
            systest.note("%s: enter/exit not asserted with btvirt (RSSI 127 reports fail the kernel's RSSI "
                         "filter); see the vhci scenarios" % name)
        step("%s: when the client stops monitoring, beacond stops scanning and bluetoothd's discovery" % name,
             stop_and_idle, bus, daemon, client)
        client.close()
    finally:
        step("%s: still running, then exits 0 on SIGTERM" % name, lambda: (daemon.alive(), daemon.stop()))
        systest.remove_devices(bus, "hci0")


def stop_and_idle(bus, daemon, client):
    client.lm("StopMonitoring", "s", client.identifier)
    systest.wait_for(lambda: daemon.status().get("Scanning") is False, systest.STEP_TIMEOUT, "Scanning false")
    systest.wait_for(lambda: not discovering(bus), systest.STEP_TIMEOUT, "hci0 Discovering false")


# MARK: AltBeacon and Eddystone-UID

def advertise_altbeacon():
    """hci1's second advertising set: the AltBeacon (general discoverable, as the iBeacon)."""
    systest.btmgmt(1, "add-adv", "-d", ALTBEACON_DATA, "-g", str(ALTBEACON_ADVERT))


def advertise_eddystone():
    """hci1's third advertising set: the Eddystone-UID."""
    systest.btmgmt(1, "add-adv", "-d", EDDYSTONE_DATA, "-g", str(EDDYSTONE_ADVERT))


def stop_kinds_advertising():
    for instance in (ALTBEACON_ADVERT, EDDYSTONE_ADVERT):
        systest.btmgmt(1, "rm-adv", str(instance))


def start_bluez_discovery(bus):
    """A discovery of bluetoothd's own (LE, duplicates reported) on hci0, until bluetoothd says Discovering.

    The adverts start only then: btvirt sends a set's report as the scan is enabled, and the kernel passes a
    report to bluetoothd (Device Found) only once its discovery is under way, which it marks after the enable
    completes; a report that comes first is dropped, and that race goes either way. A set enabled while hci0
    already scans is reported at once, and the kernel takes it."""
    adapter = "/org/bluez/hci0"
    bus.bluez(adapter, systest.ADAPTER, "SetDiscoveryFilter", "a{sv}",
              {"Transport": "le", "DuplicateData": systest.dbus.Boolean(True)})
    bus.bluez(adapter, systest.ADAPTER, "StartDiscovery")
    try:
        systest.wait_for(lambda: discovering(bus), systest.STEP_TIMEOUT, "hci0 Discovering")
    except TestFailure:
        stop_bluez_discovery(bus)
        raise


def stop_bluez_discovery(bus):
    """Ends start_bluez_discovery's discovery; hci0's devices are forgotten, so the next look starts afresh. Quiet
    when there is nothing to end (the discovery stopped, hci0 is gone): the checks have said what went wrong."""
    adapter = "/org/bluez/hci0"
    for action in (lambda: bus.bluez(adapter, systest.ADAPTER, "StopDiscovery"),
                   lambda: bus.bluez(adapter, systest.ADAPTER, "SetDiscoveryFilter", "a{sv}",
                                     systest.dbus.Dictionary({}, "sv")),
                   lambda: systest.remove_devices(bus, "hci0")):
        try:
            action()
        except systest.dbus.exceptions.DBusException:
            pass


def bluez_sees_the_altbeacon(bus):
    """bluetoothd's Device1 carries the AltBeacon in ManufacturerData under its company, every byte after the
    company as advertised: what the bluez scanner reads."""
    path, company, id2, id3, reference, length = systest.wait_for(
        lambda: systest.manufacturer_altbeacon(bus.bluez_objects(), ALTBEACON_ID1), systest.STEP_TIMEOUT,
        "a Device1 with the AltBeacon %s in ManufacturerData" % ALTBEACON_ID1)
    got = (company, id2, id3, reference, length)
    wanted = (systest.ALTBEACON_COMPANY, ALTBEACON_ID2, ALTBEACON_ID3, ALTBEACON_REFERENCE_RSSI, 24)
    check(got == wanted, "%s carries (company, id2, id3, reference RSSI, length) %r, advertised %r"
          % (path, got, wanted))
    systest.note("bluetoothd's %s carries the AltBeacon of company 0x%04x, id1 %s id2 %d id3 %d"
                 % (path, company, ALTBEACON_ID1, id2, id3))


def bluez_sees_the_eddystone(bus):
    """bluetoothd's Device1 carries the Eddystone-UID frame in ServiceData under 0xFEAA's UUID, and 0xFEAA among
    its UUIDs (from the complete list of 16-bit service UUIDs)."""
    path, instance, tx_power, length, uuids = systest.wait_for(
        lambda: systest.service_data_eddystone(bus.bluez_objects(), NAMESPACE), systest.STEP_TIMEOUT,
        "a Device1 with the Eddystone namespace %s in ServiceData[%s]" % (NAMESPACE, systest.EDDYSTONE_UUID))
    got = (instance, tx_power, length)
    wanted = (INSTANCE, EDDYSTONE_TX_AT_ZERO, 20)
    check(got == wanted, "%s carries (instance, TX power at 0 m, length) %r, advertised %r" % (path, got, wanted))
    check(systest.EDDYSTONE_UUID in uuids, "%s's UUIDs %r lack %s" % (path, uuids, systest.EDDYSTONE_UUID))
    systest.note("bluetoothd's %s carries the Eddystone-UID namespace %s instance %s" % (path, NAMESPACE, instance))


def kinds_client():
    """A client of APP_ID monitoring the AltBeacon's and the Eddystone's regions (every identifier given) and the
    two lookalikes, and ranging both kinds."""
    client = systest.Monitor("altbeacon", ALTBEACON_ID1, **ALTBEACON_REGION)
    client.start_monitoring("eddystone", None, **EDDYSTONE_REGION)
    for identifier, region in LOOKALIKES.items():
        client.start_monitoring(identifier, region.get("UUID"),
                                **{key: value for key, value in region.items() if key != "UUID"})
    client.start_ranging(None, **ALTBEACON_CONSTRAINT)
    client.start_ranging(None, **EDDYSTONE_CONSTRAINT)
    return client


def ranged(client, kind):
    """The first ranged beacon of `kind` in a DidRangeBeacons of this client's constraint for it."""
    signal = client.wait("DidRangeBeacons",
                         where=lambda s: plain(s.args[1]).get("Kind") == kind
                         and any(beacon.get("Kind") == kind for beacon in plain(s.args[0])),
                         timeout=systest.STEP_TIMEOUT, what="DidRangeBeacons listing an %s" % kind)
    return [beacon for beacon in plain(signal.args[0]) if beacon.get("Kind") == kind][0], plain(signal.args[1])


def ranges_the_altbeacon(client):
    """The ranged AltBeacon (its constraint names id1 only) carries id1, id2, id3 and the reference RSSI as
    advertised: the frame arrived intact through the controller, the kernel and beacond's decoder."""
    beacon, constraint = ranged(client, "AltBeacon")
    check(constraint == ALTBEACON_CONSTRAINT, "constraint %r, ranged %r" % (constraint, ALTBEACON_CONSTRAINT))
    got = {key: beacon.get(key) for key in ("Kind", "UUID", "Major", "Minor", "TxPower")}
    got["UUID"] = str(got["UUID"]).upper()
    wanted = {"Kind": "AltBeacon", "UUID": ALTBEACON_ID1, "Major": ALTBEACON_ID2, "Minor": ALTBEACON_ID3,
              "TxPower": ALTBEACON_REFERENCE_RSSI}
    check(got == wanted, "the ranged AltBeacon is %r, advertised %r (whole: %r)" % (got, wanted, beacon))


def ranges_the_eddystone(client):
    """The ranged Eddystone-UID (its constraint names the namespace only) carries the namespace, the instance and
    the TX power at 1 m (at 0 m as advertised, minus 41 dB)."""
    beacon, constraint = ranged(client, "Eddystone")
    check(constraint == EDDYSTONE_CONSTRAINT, "constraint %r, ranged %r" % (constraint, EDDYSTONE_CONSTRAINT))
    got = {key: beacon.get(key) for key in ("Kind", "Namespace", "Instance", "TxPower")}
    got["Namespace"], got["Instance"] = str(got["Namespace"]).lower(), str(got["Instance"]).lower()
    wanted = {"Kind": "Eddystone", "Namespace": NAMESPACE, "Instance": INSTANCE, "TxPower": EDDYSTONE_TX_AT_ZERO - 41}
    check(got == wanted, "the ranged Eddystone-UID is %r, advertised %r (whole: %r)" % (got, wanted, beacon))


def region_events(client, identifier):
    return client.collector.since(0, path=client.path, where=lambda s: s.member in ("DidEnterRegion", "DidExitRegion")
                                  and plain(s.args[0]).get("Identifier") == identifier)


def no_lookalike_entered(client):
    """Neither lookalike region was entered, by the time both real ones were: beacond decodes a report for every
    region at once, so a wrong match would have come with the right ones."""
    entered = {identifier: len(region_events(client, identifier)) for identifier in LOOKALIKES}
    check(not any(entered.values()), "lookalike regions entered or exited: %r" % entered)


def kinds_exit(client):
    """Both regions end outside once the advertisers stopped: each one's latest event is a DidExitRegion."""
    def outside():
        return all(region_events(client, identifier) and region_events(client, identifier)[-1].member == "DidExitRegion"
                   for identifier in ("altbeacon", "eddystone"))
    systest.wait_for(outside, EXIT_TIMEOUT + systest.STEP_TIMEOUT, "DidExitRegion as the latest event of both regions")


def kinds_stop_and_idle(bus, daemon, client):
    for identifier in ["altbeacon", "eddystone"] + list(LOOKALIKES):
        client.lm("StopMonitoring", "s", identifier)
    for constraint in (ALTBEACON_CONSTRAINT, EDDYSTONE_CONSTRAINT):
        client.lm("StopRanging", "a{sv}", constraint)
    systest.wait_for(lambda: daemon.status().get("Scanning") is False, systest.STEP_TIMEOUT, "Scanning false")
    systest.wait_for(lambda: not discovering(bus), systest.STEP_TIMEOUT, "hci0 Discovering false")


def kinds_scenario(bus, scanner):
    """beacond scans first, then hci1 enables the two advertising sets: btvirt reports each set to a scanning
    controller as it is enabled, so the report comes once beacond listens, its regions and ranging in place."""
    name = "beacond --scanner %s (AltBeacon, Eddystone-UID)" % scanner
    label = "beacond-kinds-" + scanner.replace(":", "-")
    daemon = step("%s: starts and owns org.beacond on the system bus" % name, systest.Beacond, bus, scanner, label,
                  exit_timeout=EXIT_TIMEOUT)
    if daemon is None:
        return
    try:
        client = step("%s: a client monitors an AltBeacon region (id1, id2, id3), an Eddystone region (namespace, "
                      "instance) and two lookalikes, and ranges both kinds" % name, kinds_client)
        if client is None:
            return
        step("%s: ScannerState is scanning" % name, systest.wait_scanning, daemon)
        step("%s: bluetoothd runs LE discovery on hci0 for it (Adapter1.Discovering)" % name,
             systest.wait_for, lambda: discovering(bus), systest.STEP_TIMEOUT, "hci0 Discovering")
        if not (step("%s: hci1 advertises the AltBeacon again (btmgmt add-adv)" % name, advertise_altbeacon)
                and step("%s: hci1 advertises the Eddystone-UID again (btmgmt add-adv)" % name, advertise_eddystone)):
            return
        entered = step("%s: DidEnterRegion for the AltBeacon region" % name, client.entered, identifier="altbeacon")
        entered = step("%s: DidEnterRegion for the Eddystone region" % name, client.entered,
                       identifier="eddystone") and entered
        step("%s: DidRangeBeacons lists the AltBeacon with its id1, id2, id3 and reference RSSI" % name,
             ranges_the_altbeacon, client)
        step("%s: DidRangeBeacons lists the Eddystone-UID with its namespace, instance and TX power" % name,
             ranges_the_eddystone, client)
        if entered:
            step("%s: no DidEnterRegion for an iBeacon with the AltBeacon's numbers or another Eddystone instance"
                 % name, no_lookalike_entered, client)
        if step("%s: the advertisers stop (btmgmt rm-adv)" % name, stop_kinds_advertising) and entered:
            step("%s: DidExitRegion for both regions after the advertisers stopped" % name, kinds_exit, client)
        step("%s: when the client stops monitoring and ranging, beacond stops scanning and bluetoothd's discovery"
             % name, kinds_stop_and_idle, bus, daemon, client)
        client.close()
    finally:
        step("%s: still running, then exits 0 on SIGTERM" % name, lambda: (daemon.alive(), daemon.stop()))
        systest.remove_devices(bus, "hci0")


def keep_kinds_capture():
    """hci0's advertising reports of the two adverts, cut from btmon's capture into LOGS/kinds-adverts.btsnoop (a
    real stack's frames, to ship as a fixture), and what beacond replay decodes from it: both beacons, every
    identifier and TX power as advertised, nothing else."""
    destination = os.path.join(systest.LOGS, KINDS_CAPTURE)
    reports = systest.keep_advertising_reports(os.path.join(systest.LOGS, "btmon.btsnoop"), destination, 0,
                                               [bytes.fromhex(ALTBEACON_DATA), bytes.fromhex(EDDYSTONE_DATA)])
    check(reports >= 2, "%d advertising reports of the AltBeacon or the Eddystone-UID on hci0 in btmon's capture"
          % reports)
    status, output = systest.run([systest.BEACOND, "replay", "--json", destination], log="kinds-replay")
    check(status == 0, "beacond replay %s exited %s: %s" % (destination, status, output[-500:]))
    seen = set()
    for line in output.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if item.get("kind") == "AltBeacon":
            seen.add(("AltBeacon", str(item.get("uuid")).upper(), item.get("major"), item.get("minor"),
                      item.get("txPower")))
        elif item.get("kind") == "Eddystone":
            seen.add(("Eddystone", str(item.get("namespace")).lower(), str(item.get("instance")).lower(),
                      item.get("txPower")))
        else:
            seen.add(("other", line[:200]))
    wanted = {("AltBeacon", ALTBEACON_ID1, ALTBEACON_ID2, ALTBEACON_ID3, ALTBEACON_REFERENCE_RSSI),
              ("Eddystone", NAMESPACE, INSTANCE, EDDYSTONE_TX_AT_ZERO - 41)}
    check(seen == wanted, "beacond replay of %s gives %r, advertised %r" % (KINDS_CAPTURE, sorted(seen, key=str),
                                                                           sorted(wanted, key=str)))
    systest.note("%d advertising reports of the AltBeacon and the Eddystone-UID kept in %s (%s on the host)"
                 % (reports, KINDS_CAPTURE, destination))


def kinds(bus):
    """The AltBeacon and Eddystone-UID part; the iBeacon's set is removed first, so only theirs advertise."""
    try:
        stop_advertising()
    except TestFailure:
        pass
    if step("bluetoothd discovers on hci0 (LE, duplicates reported) before hci1 advertises the other kinds",
            start_bluez_discovery, bus):
        try:
            if step("hci1 advertises an AltBeacon (btmgmt add-adv: company 0x0118, beacon code BE AC)",
                    advertise_altbeacon):
                step("the AltBeacon reaches bluetoothd's Device1 ManufacturerData on hci0, every field as advertised",
                     bluez_sees_the_altbeacon, bus)
            if step("hci1 advertises an Eddystone-UID (btmgmt add-adv: service UUID 0xFEAA, its service data)",
                    advertise_eddystone):
                step("the Eddystone-UID reaches bluetoothd's Device1 ServiceData and UUIDs on hci0, every field as "
                     "advertised", bluez_sees_the_eddystone, bus)
        finally:
            stop_bluez_discovery(bus)
    # beacond's scenario starts from no advert, so the reports come once it scans (see kinds_scenario).
    for instance in (ALTBEACON_ADVERT, EDDYSTONE_ADVERT):
        try:
            systest.btmgmt(1, "rm-adv", str(instance))
        except TestFailure:
            pass
    kinds_scenario(bus, "hci:hci0")
    # The bluez scanner would get nothing here: see the note in scanner_scenario; bluetoothd's Device1 above is
    # its input.
    systest.note("AltBeacon and Eddystone-UID: beacond's bluez scanner not run with btvirt (RSSI 127 reports fail "
                 "the kernel's RSSI filter); bluetoothd's Device1 checked instead")
    step("hci0's reports of the AltBeacon and the Eddystone-UID are kept as a btsnoop capture (%s), and beacond "
         "replay decodes both from it" % KINDS_CAPTURE, keep_kinds_capture)


def main():
    stack = step("system dbus-daemon with beacond's policy, bluetoothd, btvirt's hci0 and hci1 powered",
                 start_stack)
    if stack is None:
        systest.finish()
    bus, bluetoothd = stack
    if step("hci1 advertises an iBeacon (btmgmt add-adv) once bluetoothd discovers on hci0",
            advertise_while_discovering, bus) and \
            step("the iBeacon reaches bluetoothd's Device1 ManufacturerData on hci0", bluez_sees_the_beacon,
                 bus):
        for scanner in ("hci:hci0", "bluez:hci0"):
            # Each scanner starts from a fresh advert: btvirt reports it once per scan enable.
            try:
                stop_advertising()
            except TestFailure:
                pass
            if step("hci1 advertises again for %s" % scanner, advertise):
                scanner_scenario(bus, scanner)
    kinds(bus)
    step("bluetoothd still runs", lambda: check(bluetoothd.running(), "bluetoothd exited"))
    systest.finish()


if __name__ == "__main__":
    os.chdir(systest.REPO)
    main()
