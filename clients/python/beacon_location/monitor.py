"""The modern face: `Monitor` and `ServiceSession`, shaped like iOS 17/18's `CLMonitor` and `CLServiceSession`.

    monitor = await Monitor.open("org.example.BeaconDemo")
    await monitor.add(BeaconIdentityCondition(UUID, major=1), "lobby")
    async for event in monitor.events():
        print(event)            # lobby inside, or lobby waiting: <what is in the way, and the fix>

A condition added before the app may monitor (authorization not yet given, location services off) is kept and
monitored as soon as it may. A state event is yielded when a condition's state changes: its first determination,
then each change between inside and outside. A region that becomes `unknown` again only because beacond restarted
(it cannot tell until it has looked), or that stopped while the app was denied, yields nothing: the next known
state that differs does. Why nothing can happen (the app denied, a request waiting for an administrator, beacond
away, a scanner that cannot scan) comes in the same stream as diagnostic events (`CLMonitor.Event`'s diagnostics),
so a program that only reads events learns it: one per condition when the session's diagnostic changes (a ready
one when it is over), and one when a condition is added while it is blocked.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, AsyncIterator, Callable, Optional

from . import _client
from . import _names as names
from ._client import Client
from .types import (AuthorizationStatus, BeaconError, BeaconIdentityConstraint, BeaconRegion, RegionEvent,
                    RegionState)

ERROR = names.ERROR_PREFIX


@dataclass(frozen=True)
class Diagnostic:
    """Why events may not arrive (`CLServiceSession.Diagnostic`, plus what beacond adds). `blocked` is False and
    `message` empty when nothing stands in the way."""

    daemon_unavailable: bool = False
    authorization_denied: bool = False
    authorization_restricted: bool = False
    location_services_disabled: bool = False
    authorization_request_in_progress: bool = False
    always_authorization_denied: bool = False
    insufficiently_in_use: bool = False
    region_limit_exceeded: bool = False
    #: A condition added while the app could not monitor was refused by beacond once it could (`Monitor.refused`).
    condition_refused: bool = False
    #: beacond cannot scan (no adapter, bluetoothd gone, a scanner that failed): nothing is seen, so no event comes
    #: and ranging is empty until it scans again, which it tries by itself.
    scanner_unavailable: bool = False
    #: What is missing and how to fix it, in beacond's words where it said them.
    message: str = ""

    @property
    def blocked(self) -> bool:
        return bool(self.message)


class ServiceSession:
    """`CLServiceSession(authorization:)`: holds the authorization the app needs, asks for it once (it is asked
    only while `notDetermined`, as iOS does), and reports through `diagnostics()` why it is not there yet."""

    WHEN_IN_USE = "whenInUse"
    ALWAYS = "always"

    def __init__(self, client: Client, authorization: str = ALWAYS):
        if authorization not in (self.WHEN_IN_USE, self.ALWAYS):
            raise ValueError("authorization is ServiceSession.ALWAYS or ServiceSession.WHEN_IN_USE")
        self.client = client
        self.authorization = authorization
        self.status = AuthorizationStatus.NOT_DETERMINED
        self._requested = False
        self._upgrade_requested = False
        self._services_enabled = True
        # Signals taken so far of the status and the services switch: a call's answer that was out meanwhile is
        # older than the signal (an administrator may answer a request first), and must not overwrite it.
        self._status_news = 0
        self._services_news = 0
        self._limit_message = ""
        self._refusal_message = ""
        self._request_error = ""
        self._watchers: list[asyncio.Queue[Diagnostic]] = []
        self._last: Optional[Diagnostic] = None
        #: Told each change that is news (`Monitor`'s diagnostic events), and what they were told last (at first,
        #: ready: a program that starts with nothing in the way hears nothing).
        self._followers: list[Callable[[Diagnostic], None]] = []
        self._last_told = Diagnostic()
        #: Registered, and beacond's AuthorizationChanged (which follows at once) not here yet: the status is the
        #: last beacond's, so the diagnostic now is no news.
        self._awaiting_status = False
        self._closed = False
        client.add_listener(self._signal)

    @classmethod
    async def open(cls, app_id: str, authorization: str = ALWAYS, bus: Optional[str] = None) -> "ServiceSession":
        client = Client(app_id, bus)
        session = cls(client, authorization)
        await client.start()
        return session

    @property
    def authorized(self) -> bool:
        if self.authorization == self.ALWAYS:
            return self.status == AuthorizationStatus.AUTHORIZED_ALWAYS
        return self.status in (AuthorizationStatus.AUTHORIZED_ALWAYS, AuthorizationStatus.AUTHORIZED_WHEN_IN_USE)

    def diagnostic(self) -> Diagnostic:
        """What stands in the way now."""
        if not self.client.is_registered:
            error = self.client.unavailable()
            return Diagnostic(daemon_unavailable=error.name in (names.DAEMON_UNAVAILABLE, names.NO_REPLY),
                              message=error.message)
        status = self.status
        if not self._services_enabled:
            return Diagnostic(location_services_disabled=True, authorization_restricted=True, message=(
                "location services are off on this host: an administrator switches them on with "
                "`beaconctl services on` (and `location_services = true` in beacond.toml)"))
        if status == AuthorizationStatus.DENIED:
            return Diagnostic(authorization_denied=True, message=(
                "%s is denied: an administrator allows it with `beaconctl auth grant %s %s`"
                % (self.client.app_id, self.client.app_id, self._grant())))
        if status == AuthorizationStatus.RESTRICTED:
            return Diagnostic(authorization_restricted=True, message=(
                "%s is restricted by an administrator: `beaconctl auth grant %s %s` lifts it"
                % (self.client.app_id, self.client.app_id, self._grant())))
        if self._request_error:
            return Diagnostic(message=self._request_error)
        if status == AuthorizationStatus.NOT_DETERMINED:
            return Diagnostic(authorization_request_in_progress=self._requested, message=(
                "waiting for an administrator to answer %s's request: `beaconctl auth pending`, then "
                "`beaconctl auth grant %s %s`" % (self.client.app_id, self.client.app_id, self._grant())
                if self._requested else "authorization not requested yet"))
        if self.authorization == self.ALWAYS and status == AuthorizationStatus.AUTHORIZED_WHEN_IN_USE:
            return Diagnostic(always_authorization_denied=True, message=(
                "%s has WhenInUse, and monitoring needs Always: `beaconctl auth grant %s always`"
                % (self.client.app_id, self.client.app_id)))
        reason = self.client.scanner_problem
        if reason:
            return Diagnostic(scanner_unavailable=True, message=(
                "beacond cannot scan: %s; it tries again by itself (an administrator sees why in `beaconctl status` "
                "and the journal)" % reason))
        if self._limit_message:
            return Diagnostic(region_limit_exceeded=True, message=self._limit_message)
        if self._refusal_message:
            return Diagnostic(condition_refused=True, message=self._refusal_message)
        if status == AuthorizationStatus.AUTHORIZED_WHEN_IN_USE and not self.client.in_use:
            return Diagnostic(insufficiently_in_use=True, message=(
                "ranging is paused while this WhenInUse client is not in use (set_in_use(True) resumes it)"))
        return Diagnostic()

    def _grant(self) -> str:
        return "always" if self.authorization == self.ALWAYS else "when-in-use"

    async def diagnostics(self) -> AsyncIterator[Diagnostic]:
        """The diagnostic now, then each time it changes (`CLServiceSession.diagnostics`)."""
        queue: asyncio.Queue[Diagnostic] = asyncio.Queue()
        self._watchers.append(queue)
        try:
            current = self.diagnostic()
            yield current
            while True:
                diagnostic = await queue.get()
                if diagnostic != current:
                    current = diagnostic
                    yield diagnostic
        finally:
            self._watchers.remove(queue)

    async def set_in_use(self, in_use: bool) -> None:
        """False when the program goes to the background: a WhenInUse app's ranging pauses (`insufficiently_in_use`)."""
        await self.client.set_in_use(in_use)

    def note_limit(self, message: str) -> None:
        """The last monitoring call met the region limit (`message`), or did not (`""`)."""
        self._limit_message = message
        self._publish()

    def note_refusal(self, message: str) -> None:
        """A condition that waited was refused when it could be monitored (`message`), or none is (`""`)."""
        self._refusal_message = message
        self._publish()

    def follow(self, follower: Callable[[Diagnostic], None]) -> None:
        """`follower(diagnostic)` at each change that is news (`news`), as `Monitor` makes its diagnostic events."""
        self._followers.append(follower)

    @property
    def news(self) -> bool:
        """Whether the diagnostic now is news: not the moments between a registration and beacond's status, and
        between "not determined" and the request the session makes at once; nor the program's own `close()`."""
        requesting = (self.client.is_registered and self.status == AuthorizationStatus.NOT_DETERMINED
                      and not self._requested and not self._request_error)
        return not self._awaiting_status and not requesting and not self._closed

    def _publish(self) -> None:
        diagnostic = self.diagnostic()
        if diagnostic != self._last:
            self._last = diagnostic
            for queue in self._watchers:
                queue.put_nowait(diagnostic)
        if self.news and diagnostic != self._last_told:
            self._last_told = diagnostic
            for follower in list(self._followers):
                follower(diagnostic)

    async def _request(self) -> None:
        member = "RequestAlwaysAuthorization" if self.authorization == self.ALWAYS else "RequestWhenInUseAuthorization"
        news = self._status_news
        try:
            status = AuthorizationStatus((await self.client.call(member))[0])
            if self._status_news == news:
                self.status = status
            self._requested = True
            self._request_error = ""
        except BeaconError as error:
            self._request_error = error.message  # MissingUsageDescription: the app's declaration lacks the text

    async def _read_services_switch(self) -> None:
        news = self._services_news
        try:
            enabled = bool(await self.client.manager_property("LocationServicesEnabled"))
        except BeaconError:
            return
        if self._services_news == news:  # else a PropertiesChanged taken meanwhile is newer
            self._services_enabled = enabled

    async def _signal(self, member: str, args: list[Any]) -> None:
        if member == _client.REGISTERED:
            self._awaiting_status = True
            await self._read_services_switch()
        elif member == _client.MANAGER_PROPERTIES_CHANGED:
            if "LocationServicesEnabled" in args[0]:
                self._services_enabled = bool(args[0]["LocationServicesEnabled"])
                self._services_news += 1
        elif member == "AuthorizationChanged":
            self._awaiting_status = False
            self.status = AuthorizationStatus(args[0])
            self._status_news += 1
            if self.status == AuthorizationStatus.RESTRICTED or not self._services_enabled:
                await self._read_services_switch()
            if self.status == AuthorizationStatus.NOT_DETERMINED and not self._requested:
                await self._request()
            elif self.authorization == self.ALWAYS and self.status == AuthorizationStatus.AUTHORIZED_WHEN_IN_USE \
                    and not self._upgrade_requested:
                self._upgrade_requested = True
                await self._request()  # the one WhenInUse → Always upgrade request
        elif member in (_client.DAEMON_GONE, _client.REGISTRATION_FAILED, _client.DISCONNECTED):
            self._awaiting_status = False
        elif member == _client.CLOSED:
            self._closed = True
        self._publish()


@dataclass(frozen=True)
class MonitorEvent:
    """`CLMonitor.Event`: a condition's new state, or (with `diagnostic`) why it cannot be monitored now. `print`
    prints either: `door inside`, or `door waiting: <what is in the way and the fix>` (`door ready` once over)."""

    identifier: str
    #: The new state; for a diagnostic event, the condition's last known state (`unknown` before one).
    state: RegionState
    date: datetime
    condition: BeaconIdentityConstraint
    #: True when beacond queued it while the app had no client (delivered when it came back).
    late: bool = False
    #: None for a state change; else the session's diagnostic: blocked (its `message` says the fix), or ready.
    diagnostic: Optional[Diagnostic] = None

    def __str__(self) -> str:
        if self.diagnostic is None:
            return "%s %s" % (self.identifier, self.state.value)
        if self.diagnostic.blocked:
            return "%s waiting: %s" % (self.identifier, self.diagnostic.message)
        return "%s ready" % self.identifier


@dataclass
class MonitorRecord:
    """`CLMonitor.Record`: a condition and its last event (None before its first determination)."""

    condition: BeaconIdentityConstraint
    last_event: Optional[MonitorEvent] = None


class Monitor:
    """`CLMonitor` for beacon identity conditions. beacond keeps them for the app (across this program's exits
    and beacond's restarts); `identifiers` lists them."""

    def __init__(self, client: Client, session: Optional[ServiceSession] = None):
        self.client = client
        self.session = session or ServiceSession(client, ServiceSession.ALWAYS)
        self._records: dict[str, MonitorRecord] = {}
        self._wanted: dict[str, BeaconIdentityConstraint] = {}
        self._watchers: list[asyncio.Queue[Optional[MonitorEvent]]] = []
        #: Events that came while nobody iterated `events()` (the app's queued events come right at registration,
        #: before `open` returns): the next iterator gets them first, so none is lost.
        self._backlog: list[MonitorEvent] = []
        self._ended = False
        #: Records beacond dropped when authorization went (MonitoringDidFail NotAuthorized): kept here with their
        #: last event, so the state determined again after the grant is an event only if it differs.
        self._dropped: set[str] = set()
        self._diagnostic_changes = 0
        #: Conditions that waited for authorization and were then refused by beacond, with why.
        self.refused: dict[str, BeaconError] = {}
        client.add_listener(self._signal)
        self.session.follow(self._diagnostic_changed)

    #: At most this many events wait for an iterator (beacond's own queue_limit default); the oldest go first.
    BACKLOG_LIMIT = 1000

    @classmethod
    async def open(cls, app_id: str, bus: Optional[str] = None) -> "Monitor":
        """A monitor for `app_id` on the system bus (or `bus`; `$BEACOND_BUS`), with a session for Always."""
        client = Client(app_id, bus)
        monitor = cls(client)
        await client.start()
        return monitor

    @property
    def identifiers(self) -> list[str]:
        return sorted(set(self._records) | set(self._wanted))

    def record(self, identifier: str) -> Optional[MonitorRecord]:
        return self._records.get(identifier)

    async def add(self, condition: BeaconIdentityConstraint, identifier: str) -> None:
        """Monitors `condition` as `identifier` (the same identifier again replaces it). Kept until the app may
        monitor, if it may not yet (an event says why). Raises `BeaconError` for what waiting cannot fix (an invalid
        condition, the region limit), and when beacond did not answer (hung?; the condition is kept)."""
        if self.client.is_closed:
            raise self.client.unavailable()
        BeaconRegion(condition, identifier=identifier)  # what can be checked here is, before it waits
        self._forget_refusal(identifier)
        self._wanted[identifier] = condition
        changes = self._diagnostic_changes
        await self._start(identifier, condition)
        diagnostic = self.session.diagnostic()
        if diagnostic.blocked and self.session.news and changes == self._diagnostic_changes:
            # In the event stream, not only in `diagnostics()`: a program that reads events learns why none come.
            self._deliver(self._diagnostic_event(identifier, diagnostic))

    async def remove(self, identifier: str) -> None:
        """Stops monitoring `identifier`. Raises `BeaconError` while beacond is away (it keeps the app's regions, so
        the region would come back at the next registration): remove it again once `diagnostics()` says ready."""
        waiting = self._wanted.pop(identifier, None)
        self._forget_refusal(identifier)
        if waiting is not None and (identifier not in self._records or identifier in self._dropped):
            self._records.pop(identifier, None)
            self._dropped.discard(identifier)
            return  # never reached beacond, or beacond dropped it
        try:
            await self.client.call("StopMonitoring", "s", identifier)
        except BeaconError as error:
            if not error.name.endswith("UnknownRegion"):
                raise
        self._records.pop(identifier, None)
        self.session.note_limit("")

    async def events(self) -> AsyncIterator[MonitorEvent]:
        """Each condition's state changes, in order, as they happen; ends when the client is closed or its bus lost.
        The first iterator also gets, first, the events that came before anyone iterated."""
        queue: asyncio.Queue[Optional[MonitorEvent]] = asyncio.Queue()
        for waiting in self._backlog:
            queue.put_nowait(waiting)
        self._backlog.clear()
        if self._ended:
            queue.put_nowait(None)
        self._watchers.append(queue)
        try:
            while True:
                event = await queue.get()
                if event is None:
                    return
                yield event
        finally:
            self._watchers.remove(queue)

    def diagnostics(self) -> AsyncIterator[Diagnostic]:
        return self.session.diagnostics()

    async def close(self) -> None:
        await self.client.close()

    def _forget_refusal(self, identifier: str) -> None:
        if self.refused.pop(identifier, None) is not None and not self.refused:
            self.session.note_refusal("")

    async def _start(self, identifier: str, condition: BeaconIdentityConstraint) -> None:
        if not self.client.is_registered or not self.session.authorized:
            return  # started when registered and authorized (`_signal`); the session's diagnostics say why not
        region = BeaconRegion(condition, identifier=identifier)
        try:
            await self.client.call("StartMonitoring", "a{sv}", region.to_dbus())
        except _client.NoAnswer:
            raise  # kept, and started again as above; the program hears that beacond did not answer (hung?)
        except BeaconError as error:
            if error.name in (ERROR + "NotAuthorized", ERROR + "LocationServicesDisabled") \
                    or not error.name.startswith(ERROR):
                return  # waits, as above: not allowed now, or beacond away (also gone before it answered)
            if error.name == ERROR + "RegionLimitExceeded":
                self.session.note_limit(error.message)
            self._wanted.pop(identifier, None)
            if identifier in self._dropped:
                self._dropped.discard(identifier)
                self._records.pop(identifier, None)
            raise
        self._wanted.pop(identifier, None)
        self._dropped.discard(identifier)
        self._records.setdefault(identifier, MonitorRecord(condition))
        self._records[identifier].condition = condition
        self.session.note_limit("")

    async def _signal(self, member: str, args: list[Any]) -> None:
        if member == _client.REGISTERED or (
                member == "PropertiesChanged" and "MonitoredRegions" in list(args[1]) + list(args[2])):
            # At registration, and when a takeover gives this client the regions of the app's other clients.
            try:
                regions = await self.client.client_property("MonitoredRegions")
            except BeaconError:
                regions = []
            for region in map(BeaconRegion.from_dbus, regions):
                self._records.setdefault(region.identifier, MonitorRecord(region.constraint))
        elif member == "DidDetermineState":
            self._event(BeaconRegion.from_dbus(args[1]), RegionState(args[0]), RegionEvent.from_dbus(args[2]))
        elif member == "DidEnterRegion":
            self._event(BeaconRegion.from_dbus(args[0]), RegionState.INSIDE, RegionEvent.from_dbus(args[1]))
        elif member == "DidExitRegion":
            self._event(BeaconRegion.from_dbus(args[0]), RegionState.OUTSIDE, RegionEvent.from_dbus(args[1]))
        elif member == "MonitoringDidFail":
            region = BeaconRegion.from_dbus(args[0])
            if args[1] in (ERROR + "NotAuthorized", ERROR + "LocationServicesDisabled"):
                # Again once authorized. The record keeps its last event: the state beacond determines then is an
                # event only if it differs (one change, one event); the diagnostic events say meanwhile why not.
                self._wanted[region.identifier] = region.constraint
                if region.identifier in self._records:
                    self._dropped.add(region.identifier)
            elif args[1] != ERROR + "RegionReplaced":
                # (A replaced region's identifier lives on in the region that replaced it.)
                self._records.pop(region.identifier, None)
        elif member in (_client.DISCONNECTED, _client.CLOSED):
            self._ended = True
            for queue in self._watchers:
                queue.put_nowait(None)
        if member in ("AuthorizationChanged", _client.REGISTERED) and self.session.authorized:
            for identifier, condition in list(self._wanted.items()):
                try:
                    await self._start(identifier, condition)
                except _client.NoAnswer:
                    pass  # kept: started again at the next registration
                except BeaconError as error:
                    # Refused now that it could be monitored: said, not dropped (`refused`, the diagnostics).
                    self.refused[identifier] = error
                    self.session.note_refusal("%s was refused: %s" % (identifier, error.message))

    def _event(self, region: BeaconRegion, state: RegionState, event: RegionEvent) -> None:
        record = self._records.setdefault(region.identifier, MonitorRecord(region.constraint))
        last = record.last_event
        if last is not None and (state == last.state or state == RegionState.UNKNOWN):
            return  # no change, or beacond cannot tell for now (it restarted): not an event
        record.last_event = MonitorEvent(identifier=region.identifier, state=state, date=event.timestamp,
                                         condition=region.constraint, late=event.late)
        self._deliver(record.last_event)

    def _diagnostic_changed(self, diagnostic: Diagnostic) -> None:
        """One diagnostic event per condition."""
        self._diagnostic_changes += 1
        for identifier in self.identifiers:
            self._deliver(self._diagnostic_event(identifier, diagnostic))

    def _diagnostic_event(self, identifier: str, diagnostic: Diagnostic) -> MonitorEvent:
        record = self._records.get(identifier)
        condition = self._wanted.get(identifier) or (record.condition if record else None)
        assert condition is not None
        last = record.last_event if record else None
        return MonitorEvent(identifier=identifier, state=last.state if last else RegionState.UNKNOWN,
                            date=datetime.now(timezone.utc), condition=condition, diagnostic=diagnostic)

    def _deliver(self, event: MonitorEvent) -> None:
        """To every iterator; kept for the first one while there is none."""
        if not self._watchers:
            self._backlog.append(event)
            del self._backlog[:-self.BACKLOG_LIMIT]
        for queue in self._watchers:
            queue.put_nowait(event)
