"""The same app in iOS 17's CLMonitor shape: add a condition, then print its events. The monitor's session asks for
Always; while something is in the way (the app denied, an administrator yet to answer, beacond not running, a
scanner that cannot scan) an event says what, with the fix, and a `ready` one when it is over. beacond's restarts are
handled by the library. Usage: monitor_events.py [APP_ID [UUID]]"""
import asyncio, sys
from beacon_location import BeaconIdentityCondition, Monitor

APP, UUID = (sys.argv[1:] + ["org.example.BeaconDemo", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"][len(sys.argv[1:]):])[:2]


async def main():
    monitor = await Monitor.open(APP)
    await monitor.add(BeaconIdentityCondition(UUID), "lobby")
    async for event in monitor.events():
        print(event, flush=True)  # lobby inside; lobby waiting: <why, and the fix>; lobby ready

asyncio.run(main())
