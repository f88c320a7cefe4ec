"""beacon_location: Core Location's beacon API for Linux, on beacond (org.beacond on D-Bus).

Two faces over one connection: `LocationManager` with a delegate (`CLLocationManager`), and `Monitor` with
`ServiceSession` (`CLMonitor`, `CLServiceSession`). Both register again by themselves when beacond restarts.
"""
import importlib.metadata as _metadata

from ._client import Client
from .manager import LocationManager
from .monitor import Diagnostic, Monitor, MonitorEvent, MonitorRecord, ServiceSession
from .types import (AuthorizationStatus, Beacon, BeaconError, BeaconIdentityCondition, BeaconIdentityConstraint,
                    BeaconKind, BeaconPosition, BeaconRegion, Proximity, RegionEvent, RegionState)

__all__ = [
    "AuthorizationStatus", "Beacon", "BeaconError", "BeaconPosition", "BeaconIdentityCondition", "BeaconIdentityConstraint",
    "BeaconKind", "BeaconRegion", "Client", "Diagnostic", "LocationManager", "Monitor", "MonitorEvent", "MonitorRecord",
    "Proximity", "RegionEvent", "RegionState", "ServiceSession",
]

# beacond's version (the build reads it from Sources/BeacondAPI/BeacondVersion.swift), from the installed package.
try:
    __version__ = _metadata.version("beacon-location")
except _metadata.PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"
