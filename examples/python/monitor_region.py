"""The iOS articles' flow on Linux: a manager with a delegate asks for Always, then monitors a region and prints
each entry and exit. beacond's restarts are handled by the library. Usage: monitor_region.py [APP_ID [UUID]]"""
import asyncio, sys
from beacon_location import AuthorizationStatus, BeaconRegion, LocationManager

APP, UUID = (sys.argv[1:] + ["org.example.BeaconDemo", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"][len(sys.argv[1:]):])[:2]


class Delegate:
    async def did_change_authorization(self, manager, status):
        print("authorization:", status, flush=True)
        if status == AuthorizationStatus.AUTHORIZED_ALWAYS:
            await manager.start_monitoring(BeaconRegion(UUID, identifier="lobby"))

    def did_enter_region(self, manager, region):
        print("entered", region.identifier, flush=True)

    def did_exit_region(self, manager, region):
        print("exited", region.identifier, flush=True)


async def main():
    manager = await LocationManager.connect(APP, delegate=Delegate())
    print("request:", await manager.request_always_authorization(), flush=True)
    await manager.wait_closed()

asyncio.run(main())
