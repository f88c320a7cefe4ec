"""The same app in iOS 17's CLMonitor shape: add a condition, then read its events; the monitor's session asks for
Always, and its diagnostics say why nothing comes. beacond's restarts are handled by the library.
Usage: monitor_events.py [APP_ID [UUID]]"""
import asyncio, sys
from beacon_location import BeaconIdentityCondition, Monitor

APP, UUID = (sys.argv[1:] + ["org.example.BeaconDemo", "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"][len(sys.argv[1:]):])[:2]


async def explain(monitor):
    async for diagnostic in monitor.diagnostics():
        print("waiting:" if diagnostic.blocked else "ready", diagnostic.message, flush=True)


async def main():
    monitor = await Monitor.open(APP)
    await monitor.add(BeaconIdentityCondition(UUID), "lobby")
    asyncio.ensure_future(explain(monitor))
    async for event in monitor.events():
        print(event.identifier, event.state, flush=True)

asyncio.run(main())
