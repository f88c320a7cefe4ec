"""The modern face (`Monitor`, `ServiceSession`) against the real beacond: diagnostics that say why nothing
comes, the region limit, and events queued while the app had no client, delivered late and in order."""
import asyncio

import pytest

from beacon_location import BeaconError, BeaconIdentityCondition, Monitor, RegionState

from conftest import DEMO, DEMO_UUID, Beacon, until


async def next_diagnostic(iterator, condition, what):
    async def find():
        async for diagnostic in iterator:
            if condition(diagnostic):
                return diagnostic
    return await asyncio.wait_for(find(), 20)


async def test_a_denied_app_is_told_why_and_how_to_fix_it(world):
    world.start_daemon()
    monitor = await Monitor.open(DEMO, bus=world.address)
    diagnostics = monitor.diagnostics()
    world.grant("denied")
    denied = await next_diagnostic(diagnostics, lambda d: d.authorization_denied, "denied")
    assert "beaconctl auth grant org.example.Demo always" in denied.message
    await monitor.add(BeaconIdentityCondition(DEMO_UUID), "lobby")  # kept, not refused: it waits
    assert monitor.identifiers == ["lobby"]
    world.admin("SetLocationServicesEnabled", "b", "false")
    off = await next_diagnostic(diagnostics, lambda d: d.location_services_disabled, "services off")
    assert "beaconctl services on" in off.message
    world.admin("SetLocationServicesEnabled", "b", "true")
    world.grant("authorizedWhenInUse")
    when_in_use = await next_diagnostic(diagnostics, lambda d: d.always_authorization_denied, "WhenInUse")
    assert "always" in when_in_use.message
    world.grant()
    await next_diagnostic(diagnostics, lambda d: not d.blocked, "nothing in the way")
    await until(lambda: "lobby" in world.admin("ListRegions", "uu", 0, 10), "the waiting condition monitored")
    await diagnostics.aclose()
    await monitor.close()


async def test_the_region_limit(make_world):
    world = make_world("[monitoring]\nexit_timeout = 2\nmax_regions_per_client = 2\n")
    world.start_daemon()
    world.grant()
    monitor = await Monitor.open(DEMO, bus=world.address)
    await until(lambda: monitor.session.authorized, "authorizedAlways")
    await monitor.add(BeaconIdentityCondition(DEMO_UUID, major=1), "one")
    await monitor.add(BeaconIdentityCondition(DEMO_UUID, major=2), "two")
    with pytest.raises(BeaconError) as refused:
        await monitor.add(BeaconIdentityCondition(DEMO_UUID, major=3), "three")
    assert refused.value.short_name == "RegionLimitExceeded" and "max_regions_per_client" in refused.value.message
    diagnostic = monitor.session.diagnostic()
    assert diagnostic.region_limit_exceeded and "max_regions_per_client" in diagnostic.message
    assert monitor.identifiers == ["one", "two"]
    await monitor.remove("one")
    assert not monitor.session.diagnostic().blocked, monitor.session.diagnostic()
    await monitor.add(BeaconIdentityCondition(DEMO_UUID, major=3), "three")
    assert monitor.identifiers == ["three", "two"]  # sorted
    await monitor.close()


async def test_conditions_that_waited_and_are_then_refused_are_said(make_world):
    """Three conditions added before the grant, with room for two: the third is refused once the app may monitor,
    and the diagnostics and `refused` say so; an identifier beacond would refuse is refused at once."""
    world = make_world("[monitoring]\nexit_timeout = 2\nmax_regions_per_client = 2\n")
    world.start_daemon()
    monitor = await Monitor.open(DEMO, bus=world.address)
    with pytest.raises(ValueError):
        await monitor.add(BeaconIdentityCondition(DEMO_UUID), "bad\tname")
    for major, name in ((1, "one"), (2, "two"), (3, "three")):
        await monitor.add(BeaconIdentityCondition(DEMO_UUID, major=major), name)
    world.grant()
    await until(lambda: monitor.refused, "the refusal of the third")
    assert list(monitor.refused) == ["three"] and monitor.refused["three"].short_name == "RegionLimitExceeded"
    diagnostic = monitor.session.diagnostic()
    assert diagnostic.blocked and "max_regions_per_client" in diagnostic.message, diagnostic
    await monitor.close()


async def test_events_end_when_iterated_after_close(world):
    world.start_daemon()
    monitor = await Monitor.open(DEMO, bus=world.address)
    await monitor.close()

    async def iterate():
        return [event async for event in monitor.events()]
    assert await asyncio.wait_for(iterate(), 10) == []


async def test_events_queued_while_away_arrive_late_and_in_order(world):
    world.start_daemon()
    world.grant()
    monitor = await Monitor.open(DEMO, bus=world.address)
    await until(lambda: monitor.session.authorized, "authorizedAlways")
    await monitor.add(BeaconIdentityCondition(DEMO_UUID, major=1), "lobby")
    await monitor.close()  # the program exits; the region is the app's and stays monitored

    beacon = Beacon(world)
    beacon.on()
    await until(lambda: "QueuedEvents" in world.admin("ListApps", "uu", 0, 10)
                and '"QueuedEvents" u 1' in world.admin("ListApps", "uu", 0, 10), "the entry queued")
    await beacon.off()
    await until(lambda: '"QueuedEvents" u 2' in world.admin("ListApps", "uu", 0, 10), "the exit queued")

    monitor = await Monitor.open(DEMO, bus=world.address)
    events = []

    async def collect():
        async for event in monitor.events():
            events.append((event.identifier, event.state, event.late))
    collector = asyncio.get_running_loop().create_task(collect())
    await until(lambda: len(events) >= 2, "the queued events")
    assert events[:2] == [("lobby", RegionState.INSIDE, True), ("lobby", RegionState.OUTSIDE, True)], events
    await asyncio.sleep(3)  # a silence window longer than exit_timeout: nothing may repeat
    await monitor.close()
    await asyncio.wait_for(collector, 10)
    assert len(events) == 2, events


async def test_a_when_in_use_session_says_when_it_is_not_in_use(world):
    from beacon_location import ServiceSession
    world.start_daemon()
    session = await ServiceSession.open(DEMO, authorization=ServiceSession.WHEN_IN_USE, bus=world.address)
    world.grant("authorizedWhenInUse")
    await until(lambda: session.authorized and not session.diagnostic().blocked, "WhenInUse, nothing in the way")
    diagnostics = session.diagnostics()
    await session.set_in_use(False)
    paused = await next_diagnostic(diagnostics, lambda d: d.insufficiently_in_use, "not in use")
    assert "paused" in paused.message
    await session.set_in_use(True)
    await next_diagnostic(diagnostics, lambda d: not d.blocked, "in use again")
    await diagnostics.aclose()
    await session.client.close()


async def test_signals_from_anyone_but_beacond_are_ignored(world):
    """Another program on the bus sends the client a DidExitRegion of its own: it must not reach the app."""
    from dbus_fast import Message, MessageType, Variant
    from dbus_fast.aio import MessageBus
    world.start_daemon()
    world.grant()
    monitor = await Monitor.open(DEMO, bus=world.address)
    await until(lambda: monitor.session.authorized, "authorizedAlways")
    await monitor.add(BeaconIdentityCondition(DEMO_UUID, major=1), "lobby")
    events = []

    async def collect():
        async for event in monitor.events():
            events.append((event.identifier, event.state))
    collector = asyncio.get_running_loop().create_task(collect())
    intruder = await MessageBus(bus_address=world.address).connect()
    region = {"Identifier": Variant("s", "lobby"), "UUID": Variant("s", DEMO_UUID), "Major": Variant("q", 1)}
    # A broadcast and a unicast DidExitRegion: neither comes from beacond's unique name.
    for destination in (None, monitor.client._bus.unique_name):
        await intruder.send(Message(message_type=MessageType.SIGNAL, destination=destination,
                                    path=monitor.client.path, interface="org.beacond.LocationManager1",
                                    member="DidExitRegion", signature="a{sv}a{sv}",
                                    body=[region, {"Timestamp": Variant("t", 1)}]))
    await intruder.call(Message(destination="org.freedesktop.DBus", path="/org/freedesktop/DBus",
                                interface="org.freedesktop.DBus", member="GetId"))  # both are delivered by now
    # The real beacon afterwards: its entry is the first and only event.
    beacon = Beacon(world)
    beacon.on()
    await until(lambda: events, "the real entry")
    await beacon.off()
    assert events == [("lobby", RegionState.INSIDE)], events
    intruder.disconnect()
    await monitor.close()
    await asyncio.wait_for(collector, 10)
