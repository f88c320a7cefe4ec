"""The classic face (`LocationManager` and its delegate) against the real beacond on a private bus."""
import pytest

from beacon_location import (AuthorizationStatus, BeaconError, BeaconIdentityConstraint, BeaconRegion,
                             LocationManager, RegionState)

from conftest import DEMO, DEMO_UUID, Beacon, until

LOBBY = BeaconRegion(DEMO_UUID, 1, identifier="lobby")


class Recorder:
    """A delegate that writes down everything it is told, in order."""

    def __init__(self):
        self.calls = []

    def names(self, name):
        return [arguments for called, arguments in self.calls if called == name]

    def did_change_authorization(self, manager, status):
        self.calls.append(("authorization", status))

    def did_start_monitoring(self, manager, region):
        self.calls.append(("start", region.identifier))

    def did_determine_state(self, manager, state, region):
        self.calls.append(("state", (state, region.identifier)))

    def did_enter_region(self, manager, region):
        self.calls.append(("enter", (region.identifier, manager.last_region_event.late)))

    def did_exit_region(self, manager, region):
        self.calls.append(("exit", (region.identifier, manager.last_region_event.late)))

    def did_range(self, manager, beacons, constraint):
        self.calls.append(("range", [(b.major, b.minor, b.proximity) for b in beacons]))

    def monitoring_did_fail(self, manager, region, error):
        self.calls.append(("monitoring failed", (region.identifier, error.short_name)))

    def ranging_beacons_did_fail(self, manager, constraint, error):
        self.calls.append(("ranging failed", error.short_name))

    def did_fail_with_error(self, manager, error):
        self.calls.append(("error", error.short_name))


async def authorized_manager(world, delegate):
    manager = await LocationManager.connect(DEMO, delegate=delegate, bus=world.address)
    world.grant()
    await until(lambda: manager.authorization_status == AuthorizationStatus.AUTHORIZED_ALWAYS, "authorizedAlways")
    return manager


async def test_a_request_answered_by_an_administrator(world):
    world.start_daemon()
    delegate = Recorder()
    manager = await LocationManager.connect(DEMO, delegate=delegate, bus=world.address)
    await until(lambda: delegate.names("authorization"), "the first AuthorizationChanged")
    assert delegate.names("authorization") == [AuthorizationStatus.NOT_DETERMINED]
    # prompt = "admin" (the default): the request waits for an administrator.
    assert await manager.request_always_authorization() == AuthorizationStatus.NOT_DETERMINED
    pending = world.admin("ListPendingRequests", "uu", 0, 10)
    assert DEMO in pending and "always" in pending
    world.admin("SetAuthorization", "ss", DEMO, "authorizedAlways")
    await until(lambda: manager.authorization_status == AuthorizationStatus.AUTHORIZED_ALWAYS, "the grant")
    assert delegate.names("authorization")[-1] == AuthorizationStatus.AUTHORIZED_ALWAYS
    await manager.close()


async def test_monitoring_enter_and_exit(world):
    world.start_daemon()
    delegate = Recorder()
    manager = await authorized_manager(world, delegate)
    await manager.start_monitoring(LOBBY)
    assert LOBBY in manager.monitored_regions
    await until(lambda: delegate.names("start") == ["lobby"], "DidStartMonitoring")
    beacon = Beacon(world)
    beacon.on()
    await until(lambda: delegate.names("enter"), "DidEnterRegion")
    await beacon.off()
    await until(lambda: delegate.names("exit"), "DidExitRegion (exit_timeout 2 s)")
    assert delegate.names("enter") == [("lobby", False)] and delegate.names("exit") == [("lobby", False)]
    assert (RegionState.INSIDE, "lobby") in delegate.names("state")
    await manager.request_state(LOBBY)
    await until(lambda: delegate.names("state")[-1] == (RegionState.OUTSIDE, "lobby"), "RequestState's answer")
    await manager.stop_monitoring(LOBBY)
    assert not manager.monitored_regions
    await manager.close()


async def test_ranging(world):
    world.start_daemon()
    delegate = Recorder()
    manager = await authorized_manager(world, delegate)
    beacon = Beacon(world, major=1, minor=7)
    constraint = BeaconIdentityConstraint(DEMO_UUID, 1)
    await manager.start_ranging_beacons(constraint)
    beacon.on()
    await until(lambda: any(beacons for beacons in delegate.names("range")), "a ranged beacon")
    ranged = [beacons for beacons in delegate.names("range") if beacons][0]
    assert ranged[0][:2] == (1, 7)
    await manager.stop_ranging_beacons(constraint)
    assert not manager.ranged_beacon_constraints
    await beacon.off()
    await manager.close()


async def test_refusals_raise_with_the_fix(world):
    world.start_daemon()
    delegate = Recorder()
    manager = await LocationManager.connect(DEMO, delegate=delegate, bus=world.address)
    with pytest.raises(BeaconError) as refused:
        await manager.start_monitoring(LOBBY)
    assert refused.value.short_name == "NotAuthorized"
    assert "beaconctl auth grant" in refused.value.message or "Always" in refused.value.message
    world.grant("denied")
    await until(lambda: manager.authorization_status == AuthorizationStatus.DENIED, "denied")
    with pytest.raises(BeaconError) as denied:
        await manager.start_ranging_beacons(BeaconIdentityConstraint(DEMO_UUID))
    assert denied.value.short_name == "NotAuthorized"
    with pytest.raises(BeaconError) as unknown:
        await LocationManager.connect("org.example.Nobody", bus=world.address)
    assert unknown.value.short_name == "UnknownApp"
    await manager.close()


async def test_an_administrator_revoking_always_reaches_the_delegate(world):
    world.start_daemon()
    delegate = Recorder()
    manager = await authorized_manager(world, delegate)
    await manager.start_monitoring(LOBBY)
    world.grant("authorizedWhenInUse")
    await until(lambda: delegate.names("monitoring failed"), "MonitoringDidFail")
    assert delegate.names("monitoring failed") == [("lobby", "NotAuthorized")]
    assert not manager.monitored_regions
    await manager.close()


UNPRIVILEGED_PROGRAM = """
import asyncio, sys
from beacon_location import AuthorizationStatus, LocationManager

class Delegate:
    def did_change_authorization(self, manager, status):
        print(status, flush=True)
        if status == AuthorizationStatus.AUTHORIZED_ALWAYS:
            asyncio.get_running_loop().call_soon(sys.exit, 0)

async def main():
    print("uid", __import__("os").getuid(), flush=True)
    manager = await LocationManager.connect("org.example.Unprivileged", delegate=Delegate(), bus=sys.argv[1])
    print("request", await manager.request_always_authorization(), flush=True)
    await manager.wait_closed()

asyncio.run(main())
"""


async def test_the_library_needs_no_root(world):
    """A program running as nobody (an app declared for user nobody) registers, asks and is granted."""
    import subprocess
    import sys
    world.start_daemon()
    program = subprocess.Popen(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c",
                                UNPRIVILEGED_PROGRAM, world.address], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    try:
        await until(lambda: "org.example.Unprivileged" in world.admin("ListPendingRequests", "uu", 0, 10),
                    "the request of the program running as nobody")
        world.grant(app="org.example.Unprivileged")
        output, _ = program.communicate(timeout=20)
    finally:
        if program.poll() is None:
            program.kill()
            program.wait()
    assert "request notDetermined" in output and "authorizedAlways" in output, output
    assert "uid 65534" in output, output
