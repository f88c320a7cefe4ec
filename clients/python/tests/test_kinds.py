"""Every beacon kind through the library: the dictionaries it sends and reads, then the real beacond monitoring an
Eddystone namespace, ranging an AltBeacon and an Eddystone with telemetry, and following a phone by its Identity
Resolving Key across address rotations (docs/devices.md)."""
import asyncio
import uuid

import pytest
from dbus_fast import Variant

from beacon_location import (Beacon, BeaconIdentityCondition, BeaconIdentityConstraint, BeaconKind, BeaconPosition,
                             BeaconRegion, LocationManager, Monitor)

from conftest import ALICE_KEY, DEMO, hci, until

ID1 = "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6"
NAMESPACE = "edd1ebeac04e5defa017"
INSTANCE = "0123456789ab"


# MARK: the dictionaries

def test_each_kind_sends_its_own_keys():
    assert BeaconIdentityConstraint.altbeacon(ID1, 1, 2).to_dbus() == {
        "Kind": Variant("s", "AltBeacon"), "UUID": Variant("s", ID1), "Major": Variant("q", 1),
        "Minor": Variant("q", 2)}
    # Hex of either case goes out as beacond writes it, lowercase.
    assert BeaconIdentityConstraint.eddystone(NAMESPACE.upper()).to_dbus() == {
        "Kind": Variant("s", "Eddystone"), "Namespace": Variant("s", NAMESPACE)}
    assert BeaconIdentityConstraint.eddystone(NAMESPACE, INSTANCE).to_dbus()["Instance"] == Variant("s", INSTANCE)
    assert BeaconIdentityConstraint.private_device("alice-phone").to_dbus() == {
        "Kind": Variant("s", "PrivateDevice"), "Device": Variant("s", "alice-phone")}
    # An iBeacon's dictionary has no Kind: what a client sent before kinds.
    assert "Kind" not in BeaconIdentityConstraint(ID1, 1).to_dbus()


def test_kinds_are_never_confused_and_read_back():
    ibeacon = BeaconIdentityConstraint(ID1, 1, 2)
    altbeacon = BeaconIdentityConstraint.altbeacon(ID1, 1, 2)
    assert ibeacon != altbeacon and ibeacon.kind == BeaconKind.IBEACON and altbeacon.kind == "AltBeacon"
    eddystone = BeaconIdentityConstraint.eddystone(NAMESPACE)
    assert eddystone.uuid is None and eddystone.instance is None
    for constraint in (ibeacon, altbeacon, eddystone, BeaconIdentityConstraint.eddystone(NAMESPACE, INSTANCE),
                       BeaconIdentityConstraint.private_device("alice-phone")):
        assert BeaconIdentityConstraint.from_dbus(constraint.to_dbus()) == constraint
        assert BeaconIdentityConstraint.parse(str(constraint)) == constraint, str(constraint)
        region = BeaconRegion(constraint, identifier="r")
        assert BeaconRegion.from_dbus(region.to_dbus()) == region and region.kind == constraint.kind
        assert "Kind" not in BeaconRegion.from_dbus(region.to_dbus()).extra


@pytest.mark.parametrize("make, words", [
    (lambda: BeaconIdentityConstraint.eddystone("edd1ebeac04e5defa0"), "20 hex digits"),
    (lambda: BeaconIdentityConstraint.eddystone(NAMESPACE, "xyz"), "12 hex digits"),
    (lambda: BeaconIdentityConstraint.private_device("Alice Phone"), "a-z, 0-9"),
    (lambda: BeaconIdentityConstraint(kind="Bluetooth", device="x"), "kind must be one of"),
    (lambda: BeaconIdentityConstraint(ID1, kind=BeaconKind.EDDYSTONE, namespace=NAMESPACE), "uuid does not name"),
    (lambda: BeaconIdentityConstraint(kind=BeaconKind.ALTBEACON), "id1"),
    (lambda: BeaconIdentityConstraint.altbeacon(ID1, None, 3), "a minor needs a major"),
    (lambda: BeaconIdentityConstraint.parse("device:a:b"), "device:NAME"),
    (lambda: BeaconIdentityConstraint.parse("altbeacon:%s:x" % ID1), "numbers 0...65535"),
    (lambda: BeaconRegion(BeaconIdentityConstraint(ID1), 1, identifier="r"), "in the constraint"),
])
def test_bad_identities_are_refused_with_the_form(make, words):
    with pytest.raises(ValueError, match=words):
        make()


def test_beacons_of_every_kind():
    eddystone = Beacon.from_dbus({
        "Kind": Variant("s", "Eddystone"), "Namespace": Variant("s", NAMESPACE), "Instance": Variant("s", INSTANCE),
        "BatteryMillivolts": Variant("q", 2950), "Temperature": Variant("d", 21.5), "RSSI": Variant("n", -60)})
    assert (eddystone.kind, eddystone.namespace, eddystone.instance) == (BeaconKind.EDDYSTONE, NAMESPACE, INSTANCE)
    assert (eddystone.battery_millivolts, eddystone.temperature, eddystone.rssi) == (2950, 21.5, -60)
    assert eddystone.uuid is None and eddystone.major is None
    assert eddystone.constraint == BeaconIdentityConstraint.eddystone(NAMESPACE, INSTANCE)
    phone = Beacon.from_dbus({"Kind": Variant("s", "PrivateDevice"), "Device": Variant("s", "alice-phone")})
    assert phone.device == "alice-phone" and phone.battery_millivolts is None
    ibeacon = Beacon.from_dbus({"UUID": Variant("s", ID1), "Major": Variant("q", 3), "Minor": Variant("q", 4)})
    assert ibeacon.kind == BeaconKind.IBEACON and ibeacon.uuid == uuid.UUID(ID1) and ibeacon.minor == 4
    assert ibeacon.position is None


def test_a_beacon_on_the_floor_plan_has_its_position():
    placed = Beacon.from_dbus({
        "UUID": Variant("s", ID1), "Major": Variant("q", 3), "Minor": Variant("q", 4), "Room": Variant("s", "kitchen"),
        "Position": Variant("a{sv}", {"X": Variant("d", 2.5), "Y": Variant("d", 4.25), "Z": Variant("d", 1.0),
                                      "Floor": Variant("s", "ground"), "Accuracy": Variant("d", 1.8),
                                      "Fixes": Variant("u", 4)})})
    assert placed.position == BeaconPosition(x=2.5, y=4.25, z=1.0, floor="ground", accuracy=1.8, fixes=4)
    assert placed.room == "kitchen"
    # A Position without its X or Y is no position, never a wrong one.
    broken = Beacon.from_dbus({"UUID": Variant("s", ID1), "Major": Variant("q", 3), "Minor": Variant("q", 4),
                               "Position": Variant("a{sv}", {"Y": Variant("d", 1.0)})})
    assert broken.position is None


# MARK: against the real beacond

def eddystone_line(tlm=False):
    data = hci.eddystone_tlm_data(3010, 22.25, 10, 100) if tlm else hci.eddystone_uid_data(NAMESPACE, INSTANCE)
    return hci.line(hci.advertising_event(data, address="C0:FF:EE:00:0E:0D"))


def altbeacon_line():
    return hci.line(hci.advertising_event(hci.altbeacon_data(ID1, 3, 4), address="C0:FF:EE:00:0A:17"))


class Recorder:
    def __init__(self):
        self.entries, self.exits, self.ranged = [], [], []

    def did_enter_region(self, manager, region):
        self.entries.append(region)

    def did_exit_region(self, manager, region):
        self.exits.append(region)

    def did_range(self, manager, beacons, constraint):
        self.ranged.extend((beacon, constraint) for beacon in beacons)


async def keep_sending(world, lines):
    while True:
        for text in lines():
            world.send_line(text)
        await asyncio.sleep(0.2)


async def test_an_eddystone_namespace_region_enters_and_exits(world):
    world.start_daemon()
    world.grant()
    delegate = Recorder()
    manager = await LocationManager.connect(DEMO, delegate=delegate, bus=world.address)
    region = BeaconRegion(BeaconIdentityConstraint.eddystone(NAMESPACE), identifier="tags")
    await manager.start_monitoring(region)
    assert manager.monitored_regions == {region}, "beacond's echo reads back as the Eddystone region it is"
    sender = asyncio.ensure_future(keep_sending(world, lambda: [eddystone_line()]))
    try:
        await until(lambda: [r.identifier for r in delegate.entries] == ["tags"], "the Eddystone region's entry")
    finally:
        sender.cancel()
    assert delegate.entries[0] == region and delegate.entries[0].kind == BeaconKind.EDDYSTONE
    await until(lambda: [r.identifier for r in delegate.exits] == ["tags"], "its exit")
    await manager.close()


async def test_an_altbeacon_and_an_eddystone_with_telemetry_are_ranged(world):
    world.start_daemon()
    world.grant("authorizedWhenInUse")
    delegate = Recorder()
    manager = await LocationManager.connect(DEMO, delegate=delegate, bus=world.address)
    altbeacons = BeaconIdentityConstraint.altbeacon(ID1)
    eddystones = BeaconIdentityConstraint.eddystone(NAMESPACE)
    await manager.start_ranging_beacons(altbeacons)
    await manager.start_ranging_beacons(eddystones)
    # An iBeacon with the AltBeacon's numbers too: ranged for neither constraint.
    sender = asyncio.ensure_future(keep_sending(world, lambda: [
        altbeacon_line(), eddystone_line(), eddystone_line(tlm=True), hci.ibeacon_line(ID1, 3, 4)]))
    try:
        await until(lambda: any(b.constraint == BeaconIdentityConstraint.altbeacon(ID1, 3, 4) and c == altbeacons
                                for b, c in delegate.ranged), "the AltBeacon ranged")
        await until(lambda: any(b.battery_millivolts == 3010 and c == eddystones for b, c in delegate.ranged),
                    "the Eddystone ranged with its battery")
    finally:
        sender.cancel()
    eddystone = [b for b, _ in delegate.ranged if b.temperature is not None][-1]
    assert (eddystone.instance, eddystone.temperature) == (INSTANCE, 22.25) and eddystone.rssi < 0
    assert all(b.kind != BeaconKind.IBEACON for b, _ in delegate.ranged), "only the kinds asked for"
    assert manager.ranged_beacon_constraints == {altbeacons, eddystones}
    await manager.close()


async def test_a_phone_known_by_its_key_is_one_device_across_rotations(make_world):
    # A 4 s exit: a late 0.2 s sleep on a busy machine does not exit her; 8 addresses over 4.8 s outlast it.
    world = make_world("[monitoring]\nexit_timeout = 4\n")
    world.start_daemon()
    world.grant()
    monitor = await Monitor.open(DEMO, bus=world.address)
    states = []

    async def collect():
        async for event in monitor.events():
            states.append((event.identifier, str(event.state)))
    collector = asyncio.ensure_future(collect())
    alice = BeaconIdentityCondition.private_device("alice-phone")
    await monitor.add(alice, "alice")
    await until(lambda: states == [("alice", "outside")], "alice determined outside")
    # A new address every 0.6 s (a phone rotates every ~15 minutes).
    for rotation in range(8):
        address = hci.resolvable_private_address(ALICE_KEY, 0x1234 * (rotation + 1))
        for _ in range(3):
            world.send_line(hci.line(hci.advertising_event(hci.phone_data(8), address=address)))
            await asyncio.sleep(0.2)
    assert states == [("alice", "outside"), ("alice", "inside")], "one entry across 8 addresses"
    assert monitor.record("alice").condition == alice
    # Silence exits her: the exit asserted absent above could have come.
    await until(lambda: states[-1] == ("alice", "outside"), "alice's exit once her phone is silent")
    collector.cancel()
    await monitor.close()
