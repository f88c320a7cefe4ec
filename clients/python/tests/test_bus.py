"""Which bus, and a beacond that does not answer: "not running" names the bus the library tried and how to start
beacond on it; a hung beacond (SIGSTOP: it owns its name and answers nothing) is said as such, within the calls'
timeout, instead of a call that waits for ever."""
import asyncio
import os
import signal

import pytest

from beacon_location import BeaconError, BeaconIdentityCondition, LocationManager, Monitor

from conftest import DEMO, DEMO_UUID, until


async def test_not_running_names_the_bus_and_how_to_start_beacond_on_it(world):
    monitor = await Monitor.open(DEMO, bus=world.address)
    message = monitor.session.diagnostic().message
    assert "beacond is not running on the bus at %s" % world.address in message, message
    assert "start it on that bus: `beacond --bus '%s' --config-dir DIR --state-dir DIR`" % world.address in message, \
        message
    manager = await LocationManager.connect(DEMO, bus=world.address)
    with pytest.raises(BeaconError) as refused:
        await manager.request_always_authorization()
    assert refused.value.short_name == "DaemonUnavailable" and refused.value.message == message
    await manager.close()
    await monitor.close()


async def test_the_system_bus_is_named_with_its_address(world, monkeypatch):
    monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", world.address)
    monitor = await Monitor.open(DEMO, bus="system")
    message = monitor.session.diagnostic().message
    assert "beacond is not running on the system bus at %s" % world.address in message, message
    assert "start it: `systemctl start beacond`" in message, message
    await monitor.close()


async def test_a_bus_that_is_not_there_is_named(tmp_path):
    address = "unix:path=%s" % (tmp_path / "no-bus")
    with pytest.raises(BeaconError) as refused:
        await Monitor.open(DEMO, bus=address)
    assert refused.value.short_name == "DaemonUnavailable" and "the bus at %s" % address in refused.value.message


async def test_a_hung_beacond_is_said_as_such(world, monkeypatch):
    import beacon_location._client
    monkeypatch.setattr(beacon_location._client, "CALL_TIMEOUT", 1.0, raising=False)  # 25 s in real life
    world.start_daemon()
    world.grant()
    monitor = await Monitor.open(DEMO, bus=world.address)
    await until(lambda: monitor.session.authorized, "authorizedAlways")
    os.killpg(world.daemon.pid, signal.SIGSTOP)
    second = None
    try:
        with pytest.raises(BeaconError) as hung:
            await asyncio.wait_for(monitor.add(BeaconIdentityCondition(DEMO_UUID), "lobby"), 10)
        assert hung.value.name == "org.freedesktop.DBus.Error.NoReply", hung.value
        assert "did not answer StartMonitoring within 1 s" in hung.value.message, hung.value.message
        assert "hung" in hung.value.message and world.address in hung.value.message, hung.value.message
        # A program that starts meanwhile: its registration is not answered, and it says so (not "not running").
        second = await asyncio.wait_for(Monitor.open(DEMO, bus=world.address), 10)
        diagnostic = second.session.diagnostic()
        assert diagnostic.daemon_unavailable and "did not answer RegisterClient" in diagnostic.message, diagnostic
        assert "not running" not in diagnostic.message, diagnostic
    finally:
        os.killpg(world.daemon.pid, signal.SIGCONT)
    await until(lambda: second.client.is_registered, "registering by itself once beacond answers again")
    await until(lambda: not second.session.diagnostic().blocked, "nothing in the way")
    await second.close()
    await monitor.close()


async def test_a_cancelled_open_leaves_no_client_behind(world):
    """Issue 39: `asyncio.wait_for(Monitor.open(app), 0.5)` cancelled while beacond is slow left a registered client
    and its tasks behind; the newest took over the app's regions, so events went to an object nobody holds. A
    cancelled open now closes what it made: once beacond answers again, the app has no client but the one kept."""
    world.start_daemon()
    world.grant()
    kept = await Monitor.open(DEMO, bus=world.address)
    tasks_before = len(asyncio.all_tasks())
    os.killpg(world.daemon.pid, signal.SIGSTOP)
    try:
        for _ in range(3):
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(Monitor.open(DEMO, bus=world.address), 0.5)
    finally:
        os.killpg(world.daemon.pid, signal.SIGCONT)
    # beacond answers the queued RegisterClient calls of connections that are gone, and drops those clients.
    def clients():
        return world.admin("ListClients", "uu", "0", "100").count('"AppId" s "%s"' % DEMO)
    await until(lambda: clients() == 1, "only the kept client (ListClients: %s)" % world.admin("ListClients", "uu", "0", "100"))
    await asyncio.sleep(0)
    assert len(asyncio.all_tasks()) <= tasks_before, [t for t in asyncio.all_tasks()]
    await kept.add(BeaconIdentityCondition(DEMO_UUID), "lobby")  # the kept monitor still holds the app
    await kept.close()
