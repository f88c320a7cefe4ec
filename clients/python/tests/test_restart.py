"""beacond killed (-9) and started again mid-stream, and beacond absent when the program starts: both faces
register again by themselves, lose nothing and repeat nothing, and ranging resumes."""
import asyncio

from beacon_location import (AuthorizationStatus, BeaconIdentityCondition, BeaconIdentityConstraint, BeaconRegion,
                             LocationManager, Monitor, RegionState)

from conftest import DEMO, DEMO_UUID, Beacon, until
from test_location_manager import Recorder


async def test_location_manager_survives_kill_9(world):
    world.start_daemon()
    delegate = Recorder()
    manager = await LocationManager.connect(DEMO, delegate=delegate, bus=world.address)
    world.grant()
    await until(lambda: manager.authorization_status == AuthorizationStatus.AUTHORIZED_ALWAYS, "authorizedAlways")
    await manager.start_monitoring(BeaconRegion(DEMO_UUID, 1, identifier="lobby"))
    await manager.start_ranging_beacons(BeaconIdentityConstraint(DEMO_UUID, 1))
    beacon = Beacon(world)
    beacon.on()
    await until(lambda: delegate.names("enter"), "the entry before the crash")
    await until(lambda: any(delegate.names("range")), "ranging before the crash")

    world.kill_daemon()
    await until(lambda: ("error", "DaemonUnavailable") in delegate.calls, "the library noticing beacond is gone")
    assert not manager.client.is_registered
    mark = len(delegate.calls)
    world.start_daemon()
    await until(lambda: manager.client.is_registered, "registering again")
    # Ranging resumes without the program asking again; the region is the app's, taken over with its state.
    await until(lambda: any(call == "range" and beacons for call, beacons in delegate.calls[mark:]),
                "a ranged beacon after the restart")
    assert [region.identifier for region in manager.monitored_regions] == ["lobby"]
    await beacon.off()
    await until(lambda: delegate.names("exit"), "the exit after the restart")
    await asyncio.sleep(3)  # a silence window longer than exit_timeout: nothing may repeat
    # The beacon never left before the crash: exactly one entry, exactly one exit, neither late nor repeated.
    assert delegate.names("enter") == [("lobby", False)], delegate.calls
    assert delegate.names("exit") == [("lobby", False)], delegate.calls
    await manager.close()


async def test_monitor_survives_kill_9(world):
    world.start_daemon()
    world.grant()
    monitor = await Monitor.open(DEMO, bus=world.address)
    events = []

    async def collect():
        async for event in monitor.events():
            events.append(event)
    collector = asyncio.get_running_loop().create_task(collect())
    await monitor.add(BeaconIdentityCondition(DEMO_UUID, major=1), "lobby")
    beacon = Beacon(world)
    beacon.on()
    await until(lambda: "lobby inside" in map(str, events), "inside before the crash")
    world.kill_daemon()
    await until(lambda: not monitor.client.is_registered, "the library noticing beacond is gone")
    world.start_daemon()
    await until(lambda: monitor.client.is_registered, "registering again")
    await beacon.off()
    await until(lambda: "lobby outside" in map(str, events), "outside after the restart")
    await asyncio.sleep(3)  # a silence window longer than exit_timeout: nothing may repeat
    assert monitor.identifiers == ["lobby"]
    states = [(event.identifier, event.state) for event in events if event.diagnostic is None]
    assert states == [("lobby", RegionState.INSIDE), ("lobby", RegionState.OUTSIDE)], events
    # Between the two, the events said that beacond was gone, and that it was back (the state: still inside).
    said = [(str(event).split(" (")[0], event.state) for event in events if event.diagnostic is not None]
    assert said == [("lobby waiting: beacond is not running on the bus at %s" % world.address, RegionState.INSIDE),
                    ("lobby ready", RegionState.INSIDE)], said
    assert monitor.record("lobby").last_event.state == RegionState.OUTSIDE
    await monitor.close()
    await asyncio.wait_for(collector, 10)


async def test_daemon_absent_at_start(world):
    """The program starts first: it says why nothing comes, and registers once beacond is there."""
    monitor = await Monitor.open(DEMO, bus=world.address)
    diagnostic = monitor.session.diagnostic()
    assert diagnostic.daemon_unavailable and "beacond --bus '%s'" % world.address in diagnostic.message
    await monitor.add(BeaconIdentityCondition(DEMO_UUID), "anywhere")  # kept until it can be monitored
    world.start_daemon()
    await until(lambda: monitor.client.is_registered, "registering once beacond is there")
    # The session asked for Always at once; with prompt = "admin" it waits for an administrator, and says so.
    await until(lambda: monitor.session.diagnostic().authorization_request_in_progress, "the pending request")
    assert "beaconctl auth grant org.example.Demo always" in monitor.session.diagnostic().message
    world.grant()
    await until(lambda: not monitor.session.diagnostic().blocked, "nothing in the way")
    await until(lambda: "anywhere" in world.admin("ListRegions", "uu", 0, 10), "the kept condition monitored")
    await monitor.close()


async def test_not_in_use_is_said_again_after_a_restart(world):
    """A WhenInUse program in the background stays paused across a restart (its new client is not in use), and
    its ranging comes back when it is in use again."""
    world.start_daemon()
    delegate = Recorder()
    manager = await LocationManager.connect(DEMO, delegate=delegate, bus=world.address)
    world.grant("authorizedWhenInUse")
    await until(lambda: manager.authorization_status == AuthorizationStatus.AUTHORIZED_WHEN_IN_USE, "WhenInUse")
    await manager.start_ranging_beacons(BeaconIdentityConstraint(DEMO_UUID))
    await manager.set_in_use(False)
    assert '"InUse" b false' in world.admin("ListClients", "uu", 0, 10)
    world.kill_daemon()
    world.start_daemon()
    await until(lambda: manager.client.is_registered, "registering again")
    await until(lambda: '"InUse" b false' in world.admin("ListClients", "uu", 0, 10), "the new client not in use")
    assert '"InUse" b true' not in world.admin("ListClients", "uu", 0, 10)
    assert not delegate.names("ranging failed"), delegate.calls
    assert manager.ranged_beacon_constraints
    beacon = Beacon(world)
    beacon.on()
    await manager.set_in_use(True)
    await until(lambda: any(delegate.names("range")), "ranging again once in use")
    await beacon.off()
    await manager.close()


async def test_a_forged_owner_change_is_ignored(world):
    """Another program tells the client beacond changed owner (a forged NameOwnerChanged): it must stay registered
    where it is, and keep hearing its regions."""
    from dbus_fast import Message, MessageType
    from dbus_fast.aio import MessageBus
    world.start_daemon()
    world.grant()
    delegate = Recorder()
    manager = await LocationManager.connect(DEMO, delegate=delegate, bus=world.address)
    await until(lambda: manager.authorization_status == AuthorizationStatus.AUTHORIZED_ALWAYS, "authorizedAlways")
    await manager.start_monitoring(BeaconRegion(DEMO_UUID, 1, identifier="lobby"))
    path, owner = manager.client.path, manager.client.owner
    intruder = await MessageBus(bus_address=world.address).connect()
    for new_owner in ("", intruder.unique_name):
        await intruder.send(Message(message_type=MessageType.SIGNAL, destination=manager.client._bus.unique_name,
                                    path="/org/freedesktop/DBus", interface="org.freedesktop.DBus",
                                    member="NameOwnerChanged", signature="sss",
                                    body=["org.beacond", owner, new_owner]))
    await manager.request_state("lobby")  # a round trip: the forged signals were read before its answer
    await until(lambda: delegate.names("state"), "RequestState's answer")
    assert (manager.client.path, manager.client.owner) == (path, owner)
    assert '"ClientCount" u 1' in world.admin("GetStatus"), world.admin("GetStatus")
    beacon = Beacon(world)
    beacon.on()
    await until(lambda: delegate.names("enter"), "the entry, heard by the one real client")
    await beacon.off()
    assert ("error", "DaemonUnavailable") not in delegate.calls, delegate.calls
    intruder.disconnect()
    await manager.close()


async def test_a_delegate_may_close_its_manager(world):
    world.start_daemon()

    class Closer:
        async def did_change_authorization(self, manager, status):
            await manager.close()
    manager = await LocationManager.connect(DEMO, delegate=Closer(), bus=world.address)
    await asyncio.wait_for(manager.wait_closed(), 20)
    assert manager.client.is_closed


async def test_losing_the_bus_ends_the_client_loudly(world):
    """The bus itself goes away: the events end, `wait_closed` returns, and calls say why."""
    import os
    import signal

    import pytest

    from beacon_location import BeaconError
    world.start_daemon()
    monitor = await Monitor.open(DEMO, bus=world.address)
    # Settled first (the request made): a call written as the bus dies fails inside dbus-fast, which then warns
    # at exit that nobody read its send's error.
    await until(lambda: monitor.session.diagnostic().authorization_request_in_progress, "the pending request")

    async def drain():
        async for _ in monitor.events():
            pass
    draining = asyncio.get_running_loop().create_task(drain())
    os.kill(world.bus_pid, signal.SIGKILL)
    await asyncio.wait_for(monitor.client.wait_closed(), 20)
    await asyncio.wait_for(draining, 20)
    with pytest.raises(BeaconError) as refused:
        await monitor.add(BeaconIdentityCondition(DEMO_UUID), "lobby")
    assert "connection was lost" in refused.value.message and "closed" in refused.value.message


async def test_losing_the_bus_reaches_the_delegate(world):
    import os
    import signal
    world.start_daemon()
    delegate = Recorder()
    manager = await LocationManager.connect(DEMO, delegate=delegate, bus=world.address)
    await until(lambda: delegate.names("authorization"), "the first AuthorizationChanged")  # settled, as above
    os.kill(world.bus_pid, signal.SIGKILL)
    await asyncio.wait_for(manager.wait_closed(), 20)
    assert ("error", "Disconnected") in delegate.calls, delegate.calls
