"""beacon_location: Core Location's beacon API for Linux, on beacond (org.beacond on D-Bus).

Two faces over one connection: `LocationManager` with a delegate (`CLLocationManager`), and `Monitor` with
`ServiceSession` (`CLMonitor`, `CLServiceSession`). Both register again by themselves when beacond restarts.
"""
from ._client import Client
from .manager import LocationManager
from .monitor import Diagnostic, Monitor, MonitorEvent, MonitorRecord, ServiceSession
from .types import (AuthorizationStatus, Beacon, BeaconError, BeaconIdentityCondition, BeaconIdentityConstraint,
                    BeaconKind, BeaconRegion, Proximity, RegionEvent, RegionState)

__all__ = [
    "AuthorizationStatus", "Beacon", "BeaconError", "BeaconIdentityCondition", "BeaconIdentityConstraint",
    "BeaconKind", "BeaconRegion", "Client", "Diagnostic", "LocationManager", "Monitor", "MonitorEvent", "MonitorRecord",
    "Proximity", "RegionEvent", "RegionState", "ServiceSession",
]
__version__ = "0.2.0"
