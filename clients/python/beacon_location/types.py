"""Core Location's beacon vocabulary, as values: statuses, states, regions, constraints, ranged beacons, errors.

Each type converts itself to and from the D-Bus dictionaries beacond speaks (docs/dbus-api.md, "Dictionaries"),
so nothing else in the package knows a dictionary key.
"""
from __future__ import annotations

import enum
import uuid as uuidlib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Mapping, Optional

from dbus_fast import Variant

from . import _names as names


class AuthorizationStatus(str, enum.Enum):
    """`CLAuthorizationStatus`: the app's effective status (`restricted` while location services are off)."""

    NOT_DETERMINED = "notDetermined"
    RESTRICTED = "restricted"
    DENIED = "denied"
    AUTHORIZED_WHEN_IN_USE = "authorizedWhenInUse"
    AUTHORIZED_ALWAYS = "authorizedAlways"

    def __str__(self) -> str:
        return self.value


class RegionState(str, enum.Enum):
    """`CLRegionState`."""

    UNKNOWN = "unknown"
    INSIDE = "inside"
    OUTSIDE = "outside"

    def __str__(self) -> str:
        return self.value


class Proximity(str, enum.Enum):
    """`CLProximity`."""

    UNKNOWN = "unknown"
    IMMEDIATE = "immediate"
    NEAR = "near"
    FAR = "far"

    def __str__(self) -> str:
        return self.value


def _uuid(value: uuidlib.UUID | str) -> uuidlib.UUID:
    if isinstance(value, uuidlib.UUID):
        return value
    try:
        return uuidlib.UUID(str(value))
    except ValueError:
        raise ValueError("%r is not a UUID: give it as E2C56DB5-DFFB-48D2-B060-D0F5A71096E0" % (value,)) from None


def _check_16_bit(name: str, value: Optional[int]) -> Optional[int]:
    if value is not None and not (isinstance(value, int) and 0 <= value <= 0xFFFF):
        raise ValueError("%s must be an integer in 0...65535, not %r" % (name, value))
    return value


@dataclass(frozen=True)
class BeaconIdentityConstraint:
    """`CLBeaconIdentityConstraint(uuid:major:minor:)`: which beacons to range (or a region to match)."""

    uuid: uuidlib.UUID
    major: Optional[int] = None
    minor: Optional[int] = None

    def __init__(self, uuid: uuidlib.UUID | str, major: Optional[int] = None, minor: Optional[int] = None):
        object.__setattr__(self, "uuid", _uuid(uuid))
        object.__setattr__(self, "major", _check_16_bit("major", major))
        object.__setattr__(self, "minor", _check_16_bit("minor", minor))
        if minor is not None and major is None:
            raise ValueError("a minor needs a major (as in Core Location)")

    def to_dbus(self) -> dict[str, Variant]:
        result = {names.KEY_UUID: Variant("s", str(self.uuid).upper())}
        if self.major is not None:
            result[names.KEY_MAJOR] = Variant("q", self.major)
        if self.minor is not None:
            result[names.KEY_MINOR] = Variant("q", self.minor)
        return result

    @classmethod
    def from_dbus(cls, dictionary: Mapping[str, Any]) -> "BeaconIdentityConstraint":
        values = plain(dictionary)
        return cls(values[names.KEY_UUID], values.get(names.KEY_MAJOR), values.get(names.KEY_MINOR))


# Core Location's name for the same condition in CLMonitor.
BeaconIdentityCondition = BeaconIdentityConstraint


@dataclass(frozen=True)
class BeaconRegion:
    """`CLBeaconRegion(uuid:major:minor:identifier:)`: a region monitored for entry and exit.

    `extra` holds beacond's own region keys (`EnterRSSI`, `AbsentRSSI`, `Room`, `EntryDelay`, `ExitDelay`:
    docs/dbus-api.md), passed through as given."""

    identifier: str
    constraint: BeaconIdentityConstraint
    notify_on_entry: bool = True
    notify_on_exit: bool = True
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __init__(self, uuid: uuidlib.UUID | str | BeaconIdentityConstraint, major: Optional[int] = None,
                 minor: Optional[int] = None, *, identifier: str, notify_on_entry: bool = True,
                 notify_on_exit: bool = True, extra: Optional[Mapping[str, Any]] = None):
        constraint = uuid if isinstance(uuid, BeaconIdentityConstraint) else BeaconIdentityConstraint(uuid, major, minor)
        if not isinstance(identifier, str) or not 1 <= len(identifier.encode()) <= 256:
            raise ValueError("a region needs an identifier of 1...256 bytes of printable text, not %r" % (identifier,))
        control = [c for c in identifier if ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F]
        if control:
            raise ValueError("a region identifier is printable text: %r has the control character %r"
                             % (identifier, control[0]))
        object.__setattr__(self, "identifier", identifier)
        object.__setattr__(self, "constraint", constraint)
        object.__setattr__(self, "notify_on_entry", bool(notify_on_entry))
        object.__setattr__(self, "notify_on_exit", bool(notify_on_exit))
        object.__setattr__(self, "extra", dict(extra or {}))

    @property
    def uuid(self) -> uuidlib.UUID:
        return self.constraint.uuid

    @property
    def major(self) -> Optional[int]:
        return self.constraint.major

    @property
    def minor(self) -> Optional[int]:
        return self.constraint.minor

    def to_dbus(self) -> dict[str, Variant]:
        result = {names.KEY_IDENTIFIER: Variant("s", self.identifier)}
        result.update(self.constraint.to_dbus())
        result[names.KEY_NOTIFY_ON_ENTRY] = Variant("b", self.notify_on_entry)
        result[names.KEY_NOTIFY_ON_EXIT] = Variant("b", self.notify_on_exit)
        for key, value in self.extra.items():
            result[key] = value if isinstance(value, Variant) else _variant(key, value)
        return result

    @classmethod
    def from_dbus(cls, dictionary: Mapping[str, Any]) -> "BeaconRegion":
        values = plain(dictionary)
        known = {names.KEY_IDENTIFIER, names.KEY_UUID, names.KEY_MAJOR, names.KEY_MINOR, names.KEY_NOTIFY_ON_ENTRY,
                 names.KEY_NOTIFY_ON_EXIT}
        return cls(values[names.KEY_UUID], values.get(names.KEY_MAJOR), values.get(names.KEY_MINOR),
                   identifier=values[names.KEY_IDENTIFIER],
                   notify_on_entry=values.get(names.KEY_NOTIFY_ON_ENTRY, True),
                   notify_on_exit=values.get(names.KEY_NOTIFY_ON_EXIT, True),
                   extra={key: value for key, value in values.items() if key not in known})


def _variant(key: str, value: Any) -> Variant:
    """The D-Bus type beacond expects for one of its extra region keys."""
    if isinstance(value, bool):
        return Variant("b", value)
    if key in ("EnterRSSI", "AbsentRSSI"):
        return Variant("n", int(value))
    if isinstance(value, (int, float)) and key in ("EntryDelay", "ExitDelay"):
        return Variant("d", float(value))
    if isinstance(value, str):
        return Variant("s", value)
    if isinstance(value, int):
        return Variant("x", value)
    if isinstance(value, float):
        return Variant("d", value)
    raise ValueError("region key %s: cannot send %r; give a dbus_fast.Variant" % (key, value))


@dataclass(frozen=True)
class RegionEvent:
    """What beacond says of when a region event happened: `Late` when it waited in the app's queue while the app
    had no client (delivered when a client registers), `dropped_before` when events were lost before it."""

    timestamp: datetime
    late: bool = False
    dropped_before: int = 0

    @classmethod
    def from_dbus(cls, dictionary: Mapping[str, Any]) -> "RegionEvent":
        values = plain(dictionary)
        return cls(timestamp=_time(values.get(names.KEY_TIMESTAMP, 0)), late=bool(values.get(names.KEY_LATE, False)),
                   dropped_before=int(values.get(names.KEY_DROPPED_BEFORE, 0)))


@dataclass(frozen=True)
class Beacon:
    """`CLBeacon`: one ranged beacon. `rssi` is 0 when it was not heard this cycle, as in Core Location;
    `accuracy` is metres (-1 when unknown). With beacond's `[mqtt]` fleet, `room` and `receivers` say where."""

    uuid: uuidlib.UUID
    major: int
    minor: int
    rssi: int
    accuracy: float
    proximity: Proximity
    timestamp: datetime
    room: str = ""
    receivers: Mapping[str, float] = field(default_factory=dict, compare=False)

    @classmethod
    def from_dbus(cls, dictionary: Mapping[str, Any]) -> "Beacon":
        values = plain(dictionary)
        return cls(uuid=uuidlib.UUID(values[names.KEY_UUID]), major=int(values[names.KEY_MAJOR]),
                   minor=int(values[names.KEY_MINOR]), rssi=int(values.get("RSSI", 0)),
                   accuracy=float(values.get("Accuracy", -1.0)),
                   proximity=Proximity(values.get("Proximity", "unknown")),
                   timestamp=_time(values.get(names.KEY_TIMESTAMP, 0)), room=values.get("Room", ""),
                   receivers=dict(values.get("Receivers", {})))


def _time(microseconds: int) -> datetime:
    return datetime.fromtimestamp(int(microseconds) / 1_000_000, tz=timezone.utc)


def plain(value: Any) -> Any:
    """A D-Bus value with its variants unwrapped, recursively."""
    if isinstance(value, Variant):
        return plain(value.value)
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


class BeaconError(Exception):
    """A refusal from beacond (`org.beacond.Error.*`, docs/dbus-api.md "Errors"), or the daemon being away.

    `name` is the D-Bus error name, `message` beacond's text: it says what is missing and how to fix it."""

    def __init__(self, name: str, message: str):
        super().__init__("%s: %s" % (name, message))
        self.name = name
        self.message = message

    @property
    def short_name(self) -> str:
        """`NotAuthorized` for `org.beacond.Error.NotAuthorized`."""
        return self.name.rsplit(".", 1)[-1]
