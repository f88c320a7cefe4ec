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


class BeaconKind(str, enum.Enum):
    """Which kind of beacon a constraint, region or ranged beacon names (beacond's `Kind`, docs/devices.md). A
    constraint made from a UUID names an iBeacon, as in Core Location."""

    IBEACON = "iBeacon"
    ALTBEACON = "AltBeacon"
    EDDYSTONE = "Eddystone"
    PRIVATE_DEVICE = "PrivateDevice"

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
    if value is not None and not (isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 0xFFFF):
        raise ValueError("%s must be an integer in 0...65535, not %r" % (name, value))
    return value


_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
_DEVICE_NAME_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-")


def _hex(name: str, value: Any, digits: int, example: str) -> str:
    if not isinstance(value, str) or len(value) != digits or not set(value) <= _HEX_DIGITS:
        raise ValueError("an Eddystone %s is %d hex digits, e.g. %s; not %r" % (name, digits, example, value))
    return value.lower()


def _device_name(value: Any) -> str:
    if not isinstance(value, str) or not 1 <= len(value) <= 64 or not set(value) <= _DEVICE_NAME_CHARACTERS:
        raise ValueError("a device name is 1-64 of a-z, 0-9, '_' and '-', as declared in [devices], e.g. "
                         "alice-phone; not %r" % (value,))
    return value


@dataclass(frozen=True)
class BeaconIdentityConstraint:
    """`CLBeaconIdentityConstraint(uuid:major:minor:)`: which beacons to range (or a region to match).

    An iBeacon (the default, Core Location's only kind) is a UUID with an optional major and minor; beacond's
    other kinds are made with `altbeacon(id1, id2, id3)`, `eddystone(namespace, instance)` and
    `private_device(name)`, or `parse(text)`. A constraint names one kind: ranging or monitoring it yields only
    beacons of that kind. `uuid` is None for Eddystone and private devices, which have none."""

    uuid: Optional[uuidlib.UUID]
    major: Optional[int] = None
    minor: Optional[int] = None
    kind: BeaconKind = BeaconKind.IBEACON
    namespace: Optional[str] = None
    instance: Optional[str] = None
    device: Optional[str] = None

    def __init__(self, uuid: uuidlib.UUID | str | None = None, major: Optional[int] = None,
                 minor: Optional[int] = None, *, kind: BeaconKind | str = BeaconKind.IBEACON,
                 namespace: Optional[str] = None, instance: Optional[str] = None, device: Optional[str] = None):
        try:
            kind = BeaconKind(kind)
        except ValueError:
            raise ValueError("kind must be one of %s, not %r" % (", ".join(k.value for k in BeaconKind), kind)) \
                from None
        given = {"uuid": uuid, "major": major, "minor": minor, "namespace": namespace, "instance": instance,
                 "device": device}
        allowed = {BeaconKind.IBEACON: ("uuid", "major", "minor"), BeaconKind.ALTBEACON: ("uuid", "major", "minor"),
                   BeaconKind.EDDYSTONE: ("namespace", "instance"), BeaconKind.PRIVATE_DEVICE: ("device",)}[kind]
        stray = [name for name, value in given.items() if value is not None and name not in allowed]
        if stray:
            raise ValueError("%s does not name a%s %s: it is named by %s" % (
                stray[0], "n" if kind in (BeaconKind.IBEACON, BeaconKind.ALTBEACON, BeaconKind.EDDYSTONE) else "", kind.value,
                ", ".join(allowed)))
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "uuid", None)
        object.__setattr__(self, "major", None)
        object.__setattr__(self, "minor", None)
        object.__setattr__(self, "namespace", None)
        object.__setattr__(self, "instance", None)
        object.__setattr__(self, "device", None)
        if kind in (BeaconKind.IBEACON, BeaconKind.ALTBEACON):
            if uuid is None:
                raise ValueError("a%s %s needs its %s" % ("n" if kind == BeaconKind.IBEACON else "n", kind.value,
                                                          "UUID" if kind == BeaconKind.IBEACON else "id1 (a UUID)"))
            object.__setattr__(self, "uuid", _uuid(uuid))
            object.__setattr__(self, "major", _check_16_bit("major", major))
            object.__setattr__(self, "minor", _check_16_bit("minor", minor))
            if minor is not None and major is None:
                raise ValueError("a minor needs a major (as in Core Location)")
        elif kind == BeaconKind.EDDYSTONE:
            object.__setattr__(self, "namespace", _hex("namespace", namespace, 20, "edd1ebeac04e5defa017"))
            if instance is not None:
                object.__setattr__(self, "instance", _hex("instance", instance, 12, "0123456789ab"))
        else:
            object.__setattr__(self, "device", _device_name(device))

    @classmethod
    def altbeacon(cls, id1: uuidlib.UUID | str, id2: Optional[int] = None,
                  id3: Optional[int] = None) -> "BeaconIdentityConstraint":
        """AltBeacons by their id1 (a UUID), optionally id2 and id3 (0...65535; id3 needs id2)."""
        return cls(id1, id2, id3, kind=BeaconKind.ALTBEACON)

    @classmethod
    def eddystone(cls, namespace: str, instance: Optional[str] = None) -> "BeaconIdentityConstraint":
        """Eddystone-UID beacons: every instance of `namespace` (20 hex digits), or one `instance` (12)."""
        return cls(kind=BeaconKind.EDDYSTONE, namespace=namespace, instance=instance)

    @classmethod
    def private_device(cls, name: str) -> "BeaconIdentityConstraint":
        """A phone (or other device) with a resolvable private address, by the name its Identity Resolving Key is
        declared under in the app's `[devices]` or the administrator's `devices.d/` (docs/devices.md)."""
        return cls(kind=BeaconKind.PRIVATE_DEVICE, device=name)

    @classmethod
    def parse(cls, text: str) -> "BeaconIdentityConstraint":
        """From the text `str()` gives (and beaconctl takes): `UUID[:MAJOR[:MINOR]]` for an iBeacon,
        `altbeacon:ID1[:ID2[:ID3]]`, `eddystone:NAMESPACE[:INSTANCE]`, `device:NAME`."""
        forms = "give UUID[:MAJOR[:MINOR]], altbeacon:ID1[:ID2[:ID3]], eddystone:NAMESPACE[:INSTANCE] or device:NAME"
        parts = str(text).split(":")
        head = parts[0].lower()
        if head == "eddystone":
            if len(parts) not in (2, 3):
                raise ValueError("%r: %s" % (text, forms))
            return cls.eddystone(parts[1], parts[2] if len(parts) == 3 else None)
        if head == "device":
            if len(parts) != 2:
                raise ValueError("%r: %s" % (text, forms))
            return cls.private_device(parts[1])
        kind = BeaconKind.ALTBEACON if head == "altbeacon" else BeaconKind.IBEACON
        numbers = parts[1:] if kind == BeaconKind.ALTBEACON else parts
        if not 1 <= len(numbers) <= 3:
            raise ValueError("%r: %s" % (text, forms))
        try:
            values = [int(part) for part in numbers[1:]]
        except ValueError:
            raise ValueError("%r: a major (id2) and minor (id3) are numbers 0...65535; %s" % (text, forms)) from None
        return cls(numbers[0], *values, kind=kind)

    def __str__(self) -> str:
        if self.kind == BeaconKind.EDDYSTONE:
            return ":".join(["eddystone", self.namespace or ""] + ([self.instance] if self.instance else []))
        if self.kind == BeaconKind.PRIVATE_DEVICE:
            return "device:" + (self.device or "")
        numbers = ":".join([str(self.uuid).upper()] + [str(n) for n in (self.major, self.minor) if n is not None])
        return ("altbeacon:" if self.kind == BeaconKind.ALTBEACON else "") + numbers

    def to_dbus(self) -> dict[str, Variant]:
        result: dict[str, Variant] = {}
        if self.kind != BeaconKind.IBEACON:
            result[names.KEY_KIND] = Variant("s", self.kind.value)
        if self.kind == BeaconKind.EDDYSTONE:
            result[names.KEY_NAMESPACE] = Variant("s", self.namespace)
            if self.instance is not None:
                result[names.KEY_INSTANCE] = Variant("s", self.instance)
        elif self.kind == BeaconKind.PRIVATE_DEVICE:
            result[names.KEY_DEVICE] = Variant("s", self.device)
        else:
            result[names.KEY_UUID] = Variant("s", str(self.uuid).upper())
            if self.major is not None:
                result[names.KEY_MAJOR] = Variant("q", self.major)
            if self.minor is not None:
                result[names.KEY_MINOR] = Variant("q", self.minor)
        return result

    @classmethod
    def from_dbus(cls, dictionary: Mapping[str, Any]) -> "BeaconIdentityConstraint":
        values = plain(dictionary)
        kind = BeaconKind(values.get(names.KEY_KIND, BeaconKind.IBEACON.value))
        if kind == BeaconKind.EDDYSTONE:
            return cls.eddystone(values[names.KEY_NAMESPACE], values.get(names.KEY_INSTANCE))
        if kind == BeaconKind.PRIVATE_DEVICE:
            return cls.private_device(values[names.KEY_DEVICE])
        return cls(values[names.KEY_UUID], values.get(names.KEY_MAJOR), values.get(names.KEY_MINOR), kind=kind)


# Core Location's name for the same condition in CLMonitor.
BeaconIdentityCondition = BeaconIdentityConstraint


@dataclass(frozen=True)
class BeaconRegion:
    """`CLBeaconRegion(uuid:major:minor:identifier:)`: a region monitored for entry and exit. The first argument
    is an iBeacon's UUID (with `major` and `minor`) or a `BeaconIdentityConstraint` of any kind, e.g.
    `BeaconRegion(BeaconIdentityConstraint.eddystone("edd1ebeac04e5defa017"), identifier="tags")`.

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
        if isinstance(uuid, BeaconIdentityConstraint):
            if major is not None or minor is not None:
                raise ValueError("give major and minor in the constraint, not beside it")
            constraint = uuid
        else:
            constraint = BeaconIdentityConstraint(uuid, major, minor)
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
    def kind(self) -> BeaconKind:
        return self.constraint.kind

    @property
    def uuid(self) -> Optional[uuidlib.UUID]:
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
        known = {names.KEY_IDENTIFIER, names.KEY_UUID, names.KEY_MAJOR, names.KEY_MINOR, names.KEY_KIND,
                 names.KEY_NAMESPACE, names.KEY_INSTANCE, names.KEY_DEVICE, names.KEY_NOTIFY_ON_ENTRY,
                 names.KEY_NOTIFY_ON_EXIT}
        return cls(BeaconIdentityConstraint.from_dbus(values), identifier=values[names.KEY_IDENTIFIER],
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
class BeaconPosition:
    """Where beacond places a ranged beacon on its floor plan (`floorplan.toml`, docs/position.md): `x`, `y`, `z` in
    metres on the plan, the `floor`'s id, `accuracy` in metres (the true position is within it about two times in
    three) and `fixes`, how many receivers' readings placed it."""

    x: float
    y: float
    z: float
    floor: str
    accuracy: float
    fixes: int

    @classmethod
    def from_dbus(cls, dictionary: Mapping[str, Any]) -> Optional["BeaconPosition"]:
        values = plain(dictionary)
        try:
            return cls(x=float(values["X"]), y=float(values["Y"]), z=float(values.get("Z", 0.0)),
                       floor=str(values.get("Floor", "")), accuracy=float(values.get("Accuracy", -1.0)),
                       fixes=int(values.get("Fixes", 0)))
        except (KeyError, TypeError, ValueError):
            return None


@dataclass(frozen=True)
class Beacon:
    """`CLBeacon`: one ranged beacon, of the kind its constraint names. `rssi` is 0 when it was not heard this
    cycle, as in Core Location; `accuracy` is metres (-1 when unknown). With beacond's `[mqtt]` fleet, `room` and
    `receivers` say where, and with a floor plan `position` (a `BeaconPosition`; None without one). `uuid`, `major`, `minor` are an iBeacon's (an AltBeacon's id1, id2, id3) and None for the
    other kinds; an Eddystone has `namespace` and `instance` (and, when it sends TLM frames, `battery_millivolts` and
    `temperature` in °C), a private device the `device` name it was ranged by."""

    uuid: Optional[uuidlib.UUID]
    major: Optional[int]
    minor: Optional[int]
    rssi: int
    accuracy: float
    proximity: Proximity
    timestamp: datetime
    room: str = ""
    receivers: Mapping[str, float] = field(default_factory=dict, compare=False)
    kind: BeaconKind = BeaconKind.IBEACON
    namespace: Optional[str] = None
    instance: Optional[str] = None
    device: Optional[str] = None
    battery_millivolts: Optional[int] = None
    temperature: Optional[float] = None
    position: Optional[BeaconPosition] = None

    @property
    def constraint(self) -> BeaconIdentityConstraint:
        """This beacon exactly, as a constraint (to range or monitor it alone)."""
        return BeaconIdentityConstraint(self.uuid, self.major, self.minor, kind=self.kind, namespace=self.namespace,
                                        instance=self.instance, device=self.device)

    @classmethod
    def from_dbus(cls, dictionary: Mapping[str, Any]) -> "Beacon":
        values = plain(dictionary)
        identity = BeaconIdentityConstraint.from_dbus(values)
        battery = values.get(names.KEY_BATTERY_MILLIVOLTS)
        temperature = values.get(names.KEY_TEMPERATURE)
        position = values.get("Position")
        return cls(uuid=identity.uuid, major=identity.major, minor=identity.minor, rssi=int(values.get("RSSI", 0)),
                   accuracy=float(values.get("Accuracy", -1.0)),
                   proximity=Proximity(values.get("Proximity", "unknown")),
                   timestamp=_time(values.get(names.KEY_TIMESTAMP, 0)), room=values.get("Room", ""),
                   receivers=dict(values.get("Receivers", {})), kind=identity.kind, namespace=identity.namespace,
                   instance=identity.instance, device=identity.device,
                   battery_millivolts=None if battery is None else int(battery),
                   temperature=None if temperature is None else float(temperature),
                   position=BeaconPosition.from_dbus(position) if isinstance(position, dict) else None)


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
