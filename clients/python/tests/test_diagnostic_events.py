"""The monitor's event stream says why nothing can happen (CLMonitor's event diagnostics): a denied app, a request
waiting for an administrator, beacond absent or killed, a scanner that cannot scan. The shortest program
(examples/python/monitor_events.py, `print(event)`) prints each reason with its fix, and one state change is one
event however often authorization comes and goes."""
import asyncio
import os
from datetime import datetime, timezone

from beacon_location import (BeaconIdentityCondition, BeaconIdentityConstraint, Diagnostic, LocationManager, Monitor,
                             MonitorEvent, RegionState)

from conftest import DEMO, DEMO_UUID, Beacon, until
from test_examples import Program
from test_location_manager import Recorder

DENIED = ("lobby waiting: org.example.Demo is denied: an administrator allows it with "
          "`beaconctl auth grant org.example.Demo always`")
PENDING = ("lobby waiting: waiting for an administrator to answer org.example.Demo's request: `beaconctl auth pending`, "
           "then `beaconctl auth grant org.example.Demo always`")
CANNOT_SCAN = "it tries again by itself (an administrator sees why in `beaconctl status` and the journal)"


def not_running(world):
    return ("lobby waiting: beacond is not running on the bus at %s (org.beacond has no owner); start it on that bus: "
            "`beacond --bus '%s' --config-dir DIR --state-dir DIR`. This client registers again by itself when it is "
            "back." % (world.address, world.address))


def test_an_event_prints_what_it_says():
    condition = BeaconIdentityCondition(DEMO_UUID)
    now = datetime.now(timezone.utc)
    assert str(MonitorEvent("door", RegionState.INSIDE, now, condition)) == "door inside"
    waiting = MonitorEvent("door", RegionState.UNKNOWN, now, condition,
                           diagnostic=Diagnostic(authorization_denied=True, message="denied: fix it"))
    assert str(waiting) == "door waiting: denied: fix it"
    assert str(MonitorEvent("door", RegionState.INSIDE, now, condition, diagnostic=Diagnostic())) == "door ready"


async def test_the_shortest_monitor_says_a_denied_app_and_the_fix(world):
    world.start_daemon()
    world.grant("denied")
    program = Program(world, "monitor_events.py")
    try:
        await until(lambda: program.says(DENIED), "the denial and its fix: %r" % program.lines)
        world.grant()
        await until(lambda: program.says("lobby ready"), "ready once granted: %r" % program.lines)
        beacon = Beacon(world)
        beacon.on()
        await until(lambda: program.says("lobby inside"), "the entry: %r" % program.lines)
        await beacon.off()
        assert program.stop() == [DENIED, "lobby ready", "lobby inside"]
    finally:
        if program.process.poll() is None:
            program.stop()


async def test_the_shortest_monitor_says_a_request_waits_for_an_administrator(world):
    world.start_daemon()  # prompt = "admin", the default: an administrator answers
    program = Program(world, "monitor_events.py")
    try:
        await until(lambda: program.says(PENDING), "the pending request and its answer: %r" % program.lines)
        world.grant()
        await until(lambda: program.says("lobby ready"), "ready once granted: %r" % program.lines)
        assert program.stop() == [PENDING, "lobby ready"]
    finally:
        if program.process.poll() is None:
            program.stop()


async def test_the_shortest_monitor_says_beacond_is_down_before_and_after_it_ran(world):
    program = Program(world, "monitor_events.py")  # beacond not started yet
    try:
        await until(lambda: program.says(not_running(world)), "beacond absent, and the fix: %r" % program.lines)
        world.start_daemon()
        world.grant()
        await until(lambda: program.says("lobby ready"), "ready once beacond runs: %r" % program.lines)
        world.kill_daemon()
        await until(lambda: program.read().count(not_running(world)) == 2, "beacond killed: %r" % program.lines)
        world.start_daemon()
        await until(lambda: program.read().count("lobby ready") == 2, "ready after the restart: %r" % program.lines)
        lines = program.stop()
        assert lines[0] == not_running(world) and lines[-3:] == ["lobby ready", not_running(world), "lobby ready"], lines
    finally:
        if program.process.poll() is None:
            program.stop()


def regions(world):
    return world.admin("ListRegions", "uu", 0, 10)


async def test_one_event_per_change_through_deny_and_grant(world):
    """deny → grant → deny → grant with the beacon inside all along: one `inside`, and one diagnostic event per
    change of the diagnostic (beacond determines `inside` again after each grant: not a new event)."""
    world.start_daemon()
    world.grant()
    monitor = await Monitor.open(DEMO, bus=world.address)
    await until(lambda: monitor.session.authorized, "authorizedAlways")
    events = []

    async def collect():
        async for event in monitor.events():
            events.append(event)
    collector = asyncio.get_running_loop().create_task(collect())
    await monitor.add(BeaconIdentityCondition(DEMO_UUID), "door")
    beacon = Beacon(world)
    beacon.on()
    await until(lambda: '"State" s "inside"' in regions(world), "door inside")
    for _ in range(2):
        world.grant("denied")
        await until(lambda: "door" not in regions(world), "the region stopped by the denial")
        world.grant()
        await until(lambda: '"State" s "inside"' in regions(world), "door monitored and inside again")
    await asyncio.sleep(0.5)  # what the last determination brings has come
    await beacon.off()
    await monitor.close()
    await asyncio.wait_for(collector, 10)
    states = [(event.identifier, event.state) for event in events if getattr(event, "diagnostic", None) is None]
    assert states == [("door", RegionState.INSIDE)], events
    said = [str(event) for event in events if event.diagnostic is not None]
    denied = ("door waiting: org.example.Demo is denied: an administrator allows it with "
              "`beaconctl auth grant org.example.Demo always`")
    assert said == [denied, "door ready", denied, "door ready"], said
    for event in events:
        if event.diagnostic is not None:
            assert event.state == RegionState.INSIDE and not event.late and event.condition == BeaconIdentityCondition(
                DEMO_UUID) and event.diagnostic.authorization_denied == event.diagnostic.blocked, event
    assert monitor.record("door").last_event.state == RegionState.INSIDE


class ScannerRecorder(Recorder):
    def ranging_beacons_did_fail(self, manager, constraint, error):
        self.calls.append(("ranging failed", (constraint, error.name, error.message)))


async def test_a_scanner_that_cannot_scan_is_said_by_both_faces_and_recovers(world):
    """A directory where beacond's FIFO was (made while nobody scans): scanning fails when it starts (`ScannerState`
    "failed: …"), and is tried again every 30 s. The monitor's events and diagnostics say so, the delegate hears
    `RangingUnavailable` for each ranged constraint (ranging stays started), and once the FIFO is back both go on by
    themselves."""
    world.start_daemon()
    if os.path.lexists(world.fifo):
        os.unlink(world.fifo)  # (beacond makes its FIFO at start; before 0.4, when scanning starts)
    os.mkdir(world.fifo)
    world.grant()
    delegate = ScannerRecorder()
    manager = await LocationManager.connect(DEMO, delegate=delegate, bus=world.address)
    first = BeaconIdentityConstraint(DEMO_UUID, 1)
    await until(lambda: manager.authorization_status == "authorizedAlways", "authorizedAlways")
    await manager.start_ranging_beacons(first)  # starts the scanner, which fails
    await until(lambda: delegate.names("ranging failed"), "RangingUnavailable for the ranged constraint")
    second = BeaconIdentityConstraint(DEMO_UUID, 2)
    await manager.start_ranging_beacons(second)  # started while the scanner cannot scan: said at once too
    await until(lambda: len(delegate.names("ranging failed")) == 2, "RangingUnavailable for the second constraint")
    failures = delegate.names("ranging failed")
    assert [constraint for constraint, _, _ in failures] == [first, second], failures
    for _, name, message in failures:
        assert name == "org.beacond.Client.RangingUnavailable", failures  # as the Swift library names it
        assert message.startswith("beacond cannot scan: %s is a directory" % world.fifo), message
        assert "ranging goes on and beacons come again once it scans (it tries again by itself" in message, message
    assert manager.ranged_beacon_constraints == {first, second}

    monitor = await Monitor.open(DEMO, bus=world.address)
    await until(lambda: monitor.session.authorized, "authorizedAlways")
    events = []

    async def collect():
        async for event in monitor.events():
            events.append(str(event))
    collector = asyncio.get_running_loop().create_task(collect())
    await monitor.add(BeaconIdentityCondition(DEMO_UUID, major=1), "lobby")
    await until(lambda: events, "the scanner's failure as the condition's event")
    assert events[0].startswith("lobby waiting: beacond cannot scan: %s is a directory" % world.fifo) \
        and events[0].endswith("; " + CANNOT_SCAN), events
    diagnostic = monitor.session.diagnostic()
    assert diagnostic.scanner_unavailable and diagnostic.blocked, diagnostic

    os.rmdir(world.fifo)  # the administrator's fix; beacond's next try (within 30 s) scans
    os.mkfifo(world.fifo, 0o660)
    await until(lambda: "lobby ready" in events, "ready once the scanner scans: %r" % events, timeout=45)
    assert not monitor.session.diagnostic().blocked
    beacon = Beacon(world)
    beacon.on()
    await until(lambda: "lobby inside" in events, "the entry once the scanner scans")
    await until(lambda: any(beacons for beacons in delegate.names("range")), "ranging resumed by itself")
    await beacon.off()
    assert len(delegate.names("ranging failed")) == 2, delegate.calls
    assert events[1:] == ["lobby ready", "lobby inside"], events
    await monitor.close()
    await asyncio.wait_for(collector, 10)
    await manager.close()


async def test_a_scanner_state_from_anyone_but_beacond_is_ignored(world):
    """Another program on the bus broadcasts Manager1's PropertiesChanged with a failed ScannerState: the events and
    the delegate must not take it for beacond's."""
    from dbus_fast import Message, MessageType, Variant
    from dbus_fast.aio import MessageBus
    world.start_daemon()
    world.grant()
    delegate = ScannerRecorder()
    manager = await LocationManager.connect(DEMO, delegate=delegate, bus=world.address)
    monitor = await Monitor.open(DEMO, bus=world.address)
    await until(lambda: monitor.session.authorized and manager.authorization_status == "authorizedAlways",
                "authorizedAlways")
    await manager.start_ranging_beacons(BeaconIdentityConstraint(DEMO_UUID, 1))
    await monitor.add(BeaconIdentityCondition(DEMO_UUID), "lobby")
    events = []

    async def collect():
        async for event in monitor.events():
            events.append(str(event))
    collector = asyncio.get_running_loop().create_task(collect())
    intruder = await MessageBus(bus_address=world.address).connect()
    await intruder.send(Message(message_type=MessageType.SIGNAL, path="/org/beacond",
                                interface="org.freedesktop.DBus.Properties", member="PropertiesChanged",
                                signature="sa{sv}as", body=["org.beacond.Manager1",
                                                            {"ScannerState": Variant("s", "failed: forged")}, []]))
    await intruder.call(Message(destination="org.freedesktop.DBus", path="/org/freedesktop/DBus",
                                interface="org.freedesktop.DBus", member="GetId"))  # the bus has sent it on by now
    for client in (manager.client, monitor.client):
        await client.manager_property("Version")  # a round trip: the forged signal was read before its answer
        handled = asyncio.Event()
        client.add_listener(lambda member, args, handled=handled: handled.set() if member == "Mark" else None)
        client.tell_soon("Mark", [])  # told after the signals read before it, so after the forged one
        await asyncio.wait_for(handled.wait(), 20)
    assert not monitor.session.diagnostic().blocked, monitor.session.diagnostic()
    assert events == [] and not delegate.names("ranging failed"), (events, delegate.calls)
    intruder.disconnect()
    await monitor.close()
    await asyncio.wait_for(collector, 10)
    await manager.close()
