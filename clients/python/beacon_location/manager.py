"""The classic face: `LocationManager`, shaped like Core Location's `CLLocationManager` and its delegate.

    manager = await LocationManager.connect("org.example.BeaconDemo", delegate=MyDelegate())
    await manager.request_always_authorization()
    await manager.start_monitoring(BeaconRegion(UUID, identifier="lobby"))

The delegate is any object; it implements only the methods it wants (each may be `async`):

    did_change_authorization(manager, status)       locationManagerDidChangeAuthorization(_:)
    did_start_monitoring(manager, region)           locationManager(_:didStartMonitoringFor:)
    did_determine_state(manager, state, region)     locationManager(_:didDetermineState:for:)
    did_enter_region(manager, region)               locationManager(_:didEnterRegion:)
    did_exit_region(manager, region)                locationManager(_:didExitRegion:)
    did_range(manager, beacons, constraint)         locationManager(_:didRange:satisfying:)
    monitoring_did_fail(manager, region, error)     locationManager(_:monitoringDidFailFor:withError:)
    ranging_beacons_did_fail(manager, constraint, error)  locationManager(_:didFailRangingFor:error:)
    did_fail_with_error(manager, error)             locationManager(_:didFailWithError:): beacond went away or
                                                    refused to register this client

Where Core Location would report a refused start through the delegate, these calls raise `BeaconError` at once,
with beacond's message saying what is missing and how to fix it; failures that come later (an administrator
revokes Always) reach `monitoring_did_fail` and `ranging_beacons_did_fail`. Nothing fails silently: when beacond
cannot scan (its `ScannerState`), each ranged constraint's `ranging_beacons_did_fail` gets `RangingUnavailable`
once, and the ranging stays started (beacons come again once beacond scans, which it tries by itself).
"""
from __future__ import annotations

import inspect
from typing import Any, Optional

from . import _client
from . import _names as names
from ._client import Client
from .types import (AuthorizationStatus, Beacon, BeaconError, BeaconIdentityConstraint, BeaconRegion, RegionEvent,
                    RegionState)

# Told to this manager's listener after a constraint started while beacond cannot scan (`Client.tell_soon`).
_SCANNER_CHECK = "ScannerCheck"


class LocationManager:
    """`CLLocationManager` for beacons, on one `Client` (registered again by itself across beacond's restarts)."""

    def __init__(self, client: Client, delegate: Any = None):
        self.client = client
        self.delegate = delegate
        self._status = AuthorizationStatus.NOT_DETERMINED
        self._regions: dict[str, BeaconRegion] = {}
        #: The `RegionEvent` (time, `late`) of the region event being delivered now, for the delegate to read.
        self.last_region_event: Optional[RegionEvent] = None
        #: Ranged constraints told `RangingUnavailable` since beacond last could scan.
        self._told_blind: set[BeaconIdentityConstraint] = set()
        client.add_listener(self._signal)

    @classmethod
    async def connect(cls, app_id: str, delegate: Any = None, bus: Optional[str] = None) -> "LocationManager":
        """A manager for `app_id` on the system bus (or `bus`: "session", a D-Bus address; `$BEACOND_BUS`)."""
        client = Client(app_id, bus)
        manager = cls(client, delegate)
        await client.start()
        return manager

    # MARK: Authorization

    @property
    def authorization_status(self) -> AuthorizationStatus:
        """The app's effective status, as beacond last said (`AuthorizationChanged`)."""
        return self._status

    async def request_when_in_use_authorization(self) -> AuthorizationStatus:
        """Asks while `notDetermined` (else does nothing); the answer comes to `did_change_authorization`. Returns
        the status now: `notDetermined` while an administrator has to decide."""
        return AuthorizationStatus((await self.client.call("RequestWhenInUseAuthorization"))[0])

    async def request_always_authorization(self) -> AuthorizationStatus:
        """As `request_when_in_use_authorization`, for Always (and the one WhenInUse → Always upgrade)."""
        return AuthorizationStatus((await self.client.call("RequestAlwaysAuthorization"))[0])

    # MARK: Monitoring

    @property
    def monitored_regions(self) -> frozenset[BeaconRegion]:
        """The app's regions this client monitors (beacond keeps them across restarts and client exits)."""
        return frozenset(self._regions.values())

    async def start_monitoring(self, region: BeaconRegion) -> None:
        """Needs `authorizedAlways`. The same identifier again replaces the region."""
        await self.client.call("StartMonitoring", "a{sv}", region.to_dbus())
        self._regions[region.identifier] = region

    async def stop_monitoring(self, region: BeaconRegion | str) -> None:
        identifier = region if isinstance(region, str) else region.identifier
        await self.client.call("StopMonitoring", "s", identifier)
        self._regions.pop(identifier, None)

    async def request_state(self, region: BeaconRegion | str) -> None:
        """The state comes to `did_determine_state` at once."""
        await self.client.call("RequestState", "s", region if isinstance(region, str) else region.identifier)

    # MARK: Ranging

    @property
    def ranged_beacon_constraints(self) -> frozenset[BeaconIdentityConstraint]:
        return frozenset(self.client.ranged)

    async def start_ranging_beacons(self, constraint: BeaconIdentityConstraint) -> None:
        """`startRangingBeacons(satisfying:)`: `did_range` about once a second. Needs `authorizedAlways`, or
        `authorizedWhenInUse` while in use. Started again by itself after beacond restarts."""
        await self.client.call("StartRanging", "a{sv}", constraint.to_dbus())
        self.client.ranged[constraint] = None
        if self.client.scanner_problem:
            self.client.tell_soon(_SCANNER_CHECK, [])  # started while beacond cannot scan: said now, in order

    async def stop_ranging_beacons(self, constraint: BeaconIdentityConstraint) -> None:
        self.client.ranged.pop(constraint, None)
        self._told_blind.discard(constraint)
        await self.client.call("StopRanging", "a{sv}", constraint.to_dbus())

    async def set_in_use(self, in_use: bool) -> None:
        """False when the program goes to the background: a WhenInUse app's ranging pauses until True again."""
        await self.client.set_in_use(in_use)

    async def close(self) -> None:
        """Ends this client; the app's regions stay monitored by beacond (they are the app's, as in Core Location)."""
        await self.client.close()

    async def wait_closed(self) -> None:
        await self.client.wait_closed()

    # MARK: Signals to the delegate

    async def _signal(self, member: str, args: list[Any]) -> None:
        if member == _client.REGISTERED:
            self._told_blind.clear()
            await self._refresh_regions()
            await self._check_scanner()
        elif member == _SCANNER_CHECK or (member == _client.MANAGER_PROPERTIES_CHANGED
                                          and names.SCANNER_STATE in args[0]):
            await self._check_scanner()
        elif member in (_client.DAEMON_GONE, _client.REGISTRATION_FAILED):
            await self._delegate("did_fail_with_error", args[0])
        elif member == _client.DISCONNECTED:
            await self._delegate("did_fail_with_error", self.client.unavailable())
        elif member == "AuthorizationChanged":
            self._status = AuthorizationStatus(args[0])
            await self._delegate("did_change_authorization", self._status)
        elif member == "DidStartMonitoring":
            region = BeaconRegion.from_dbus(args[0])
            self._regions[region.identifier] = region
            await self._delegate("did_start_monitoring", region)
        elif member == "DidDetermineState":
            self.last_region_event = RegionEvent.from_dbus(args[2])
            await self._delegate("did_determine_state", RegionState(args[0]), BeaconRegion.from_dbus(args[1]))
        elif member == "DidEnterRegion":
            self.last_region_event = RegionEvent.from_dbus(args[1])
            await self._delegate("did_enter_region", BeaconRegion.from_dbus(args[0]))
        elif member == "DidExitRegion":
            self.last_region_event = RegionEvent.from_dbus(args[1])
            await self._delegate("did_exit_region", BeaconRegion.from_dbus(args[0]))
        elif member == "DidRangeBeacons":
            await self._delegate("did_range", [Beacon.from_dbus(beacon) for beacon in args[0]],
                                 BeaconIdentityConstraint.from_dbus(args[1]))
        elif member == "MonitoringDidFail":
            region = BeaconRegion.from_dbus(args[0])
            if self._regions.get(region.identifier) == region:
                del self._regions[region.identifier]
            await self._delegate("monitoring_did_fail", region, BeaconError(args[1], args[2]))
        elif member == "RangingDidFail":
            constraint = BeaconIdentityConstraint.from_dbus(args[0])
            self.client.ranged.pop(constraint, None)
            self._told_blind.discard(constraint)
            await self._delegate("ranging_beacons_did_fail", constraint, BeaconError(args[1], args[2]))
        elif member == "PropertiesChanged" and "MonitoredRegions" in (list(args[1]) + list(args[2])):
            await self._refresh_regions()  # a takeover gave this client the regions of the app's other clients

    async def _check_scanner(self) -> None:
        """beacond cannot scan: each ranged constraint's `ranging_beacons_did_fail` says so once, until it scans
        again. The ranging stays started (not removed): beacond resumes it by itself."""
        problem = self.client.scanner_problem
        if not problem:
            self._told_blind.clear()
            return
        for constraint in list(self.client.ranged):
            if constraint in self._told_blind:
                continue
            self._told_blind.add(constraint)
            await self._delegate("ranging_beacons_did_fail", constraint, BeaconError(names.RANGING_UNAVAILABLE, (
                "beacond cannot scan: %s; ranging goes on and beacons come again once it scans (it tries again by "
                "itself; an administrator sees why in `beaconctl status` and the journal)" % problem)))

    async def _refresh_regions(self) -> None:
        try:
            regions = await self.client.client_property("MonitoredRegions")
        except BeaconError:
            return  # beacond went away meanwhile: refreshed again when it is back
        self._regions = {region.identifier: region for region in map(BeaconRegion.from_dbus, regions)}

    async def _delegate(self, method: str, *args: Any) -> None:
        handler = getattr(self.delegate, method, None)
        if handler is None:
            return
        result = handler(self, *args)
        if inspect.isawaitable(result):
            await result
