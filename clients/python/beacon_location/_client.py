"""One client of an app on beacond, over one D-Bus connection, kept across beacond's restarts.

Both faces (`LocationManager`, `Monitor`) sit on a `Client`. It does what every hand-written beacond client must:
it listens before it registers (`AuthorizationChanged` follows `RegisterClient`'s reply at once, and an app's queued
events right after it); it follows `org.beacond`'s owner (`NameOwnerChanged`), so when beacond goes away and comes
back it registers again, which takes the app's regions over with their state and delivers what was queued
meanwhile, in order; and it starts again the ranging it had started and says again whether it is in use, since
beacond does not keep those across a restart (they belong to a client in use).

Everything runs on the caller's asyncio loop: no thread of its own. Signals reach listeners one at a time, in the
order beacond sent them, from one task. Every call waits at most `CALL_TIMEOUT` for its answer: neither the bus nor
dbus-fast gives up on a beacond that hangs (it owns its name and answers nothing), and a program must hear why.
"""
from __future__ import annotations

import asyncio
import inspect
import logging
import os
from typing import Any, Awaitable, Callable, Optional, Union

from dbus_fast import BusType, Message, MessageType
from dbus_fast.aio import MessageBus

from . import _names as names
from .types import BeaconError, BeaconIdentityConstraint, plain

logger = logging.getLogger("beacon_location")

Listener = Callable[[str, list[Any]], Union[None, Awaitable[None]]]

# What the client itself tells its listeners, beside beacond's signals (members of LocationManager1).
REGISTERED = "Registered"  # args: [object path]
DAEMON_GONE = "DaemonGone"  # args: [BeaconError]
REGISTRATION_FAILED = "RegistrationFailed"  # args: [BeaconError]
DISCONNECTED = "Disconnected"  # args: [] — the bus connection itself is gone; the client is done
CLOSED = "Closed"  # args: [] — `close()` was called; the client is done
IN_USE_CHANGED = "InUseChanged"  # args: [bool] — the program said it is (not) in use
MANAGER_PROPERTIES_CHANGED = "ManagerPropertiesChanged"  # args: [{name: value}] — Manager1's, from beacond

#: Seconds a D-Bus call waits for its answer, as in the Swift library (the bus's own default is never).
CALL_TIMEOUT = 25.0
#: `Close` at `close()`: a hung beacond must not hold up the program's exit.
CLOSE_TIMEOUT = 2.0
#: Where dbus-fast looks for the system bus without $DBUS_SYSTEM_BUS_ADDRESS (the D-Bus specification's default).
SYSTEM_BUS_DEFAULT = "unix:path=/var/run/dbus/system_bus_socket"

#: DidRangeBeacons waiting for a slow listener, at most (a second of ranging is about one per constraint).
RANGING_BACKLOG = 16

_OWNER = "owner"
_SIGNAL = "signal"
_STOP = "stop"
_LOST = "lost"
_TELL = "tell"


class NoAnswer(BeaconError):
    """A call beacond (or the bus) did not answer within `CALL_TIMEOUT`: it may be hung. Named
    `org.freedesktop.DBus.Error.NoReply`, as libdbus names its own timeout; a type of its own because the bus
    sends that name too, when beacond exits before it answers (which is beacond away, not hung)."""


def bus_target(bus: Optional[str]) -> tuple[Optional[str], BusType, str, str]:
    """`None` or "system": the system bus; "session"; anything else is a D-Bus address (unix:path=…).
    `$BEACOND_BUS` stands in for `None`, so one program runs against a test daemon unchanged. Returns the address
    (None: dbus-fast finds the session bus), the bus type, the bus in words with the address tried (what "not
    running" says), and how to start beacond there (systemd serves the system bus only)."""
    bus = bus or os.environ.get("BEACOND_BUS") or "system"
    if bus == "system":
        address = os.environ.get("DBUS_SYSTEM_BUS_ADDRESS") or SYSTEM_BUS_DEFAULT
        return (address, BusType.SYSTEM, "the system bus at %s" % address,
                "start it: `systemctl start beacond` (and `systemctl enable beacond` to start it at boot)")
    if bus == "session":
        found = os.environ.get("DBUS_SESSION_BUS_ADDRESS")
        return (found, BusType.SESSION, "the session bus at %s" % found if found else "the session bus",
                "start it on the session bus: `beacond --bus session --config-dir DIR --state-dir DIR`")
    return (bus, BusType.SESSION, "the bus at %s" % bus,
            "start it on that bus: `beacond --bus '%s' --config-dir DIR --state-dir DIR`" % bus)


class Client:
    """One registered client of `app_id`. Make it with `await Client.connect(app_id)`."""

    def __init__(self, app_id: str, bus: Optional[str] = None):
        self.app_id = app_id
        self._address, self._bus_type, self.bus_description, self._start_advice = bus_target(bus)
        self._bus: Optional[MessageBus] = None
        self._lost = False
        self._pending_ranging = 0
        #: DidRangeBeacons dropped because a listener was slow (RANGING_BACKLOG were waiting).
        self.dropped_ranging = 0
        self._queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self._listeners: list[Listener] = []
        self._task: Optional[asyncio.Task[None]] = None
        self._registered = asyncio.Event()
        self._first_attempt = asyncio.Event()
        self._closed = asyncio.Event()
        #: The client's object (`/org/beacond/client/N`) while registered, else None.
        self.path: Optional[str] = None
        #: The unique bus name of the beacond this client is registered with.
        self.owner: Optional[str] = None
        #: What the client re-establishes after a restart.
        self.ranged: dict[BeaconIdentityConstraint, None] = {}
        self.in_use = True
        #: Why the last registration failed (a refusal is not retried until beacond restarts).
        self.registration_error: Optional[BeaconError] = None
        #: beacond is there and has not answered the registration within `CALL_TIMEOUT` (hung, or slow).
        self.registration_trouble: Optional[BeaconError] = None
        #: Manager1's `ScannerState` as the beacond registered with last said ("" when unknown: taken as able).
        self.scanner_state = ""
        # ScannerState changes signalled so far: a read that was out meanwhile answers with an older value.
        self._scanner_news = 0

    @classmethod
    async def connect(cls, app_id: str, bus: Optional[str] = None) -> "Client":
        """Connects and registers as `app_id`. With beacond absent it returns all the same (listeners hear
        `DaemonGone`) and registers as soon as beacond takes its name. Raises `BeaconError` when beacond refuses the
        registration (an unknown app, a user not allowed to act as it)."""
        client = cls(app_id, bus)
        await client.start()
        return client

    async def start(self) -> None:
        """`open`, then raises (closed) when beacond refused the registration. Listeners added before this hear
        everything from the first `AuthorizationChanged` on."""
        try:
            await self.open()
        except BaseException:
            # Cancelled (a timeout around `Monitor.open`) or failed half-way: what was made is closed, so no
            # registered client is left that nobody holds (it would take the app's regions and events).
            await asyncio.shield(self.close())
            raise
        if self.registration_error is not None:
            error = self.registration_error
            await self.close()
            raise error

    # MARK: Listeners

    def add_listener(self, listener: Listener) -> None:
        """`listener(member, args)` for each signal of this client (LocationManager1's members, args as D-Bus
        gave them) and the client's own news (`Registered`, `DaemonGone`, `RegistrationFailed`, `Disconnected`, `Closed`).
        It may be a coroutine function: the next signal waits for it."""
        self._listeners.append(listener)

    def remove_listener(self, listener: Listener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    # MARK: Life

    async def open(self) -> None:
        if self._address is not None:
            bus = MessageBus(bus_address=self._address, bus_type=self._bus_type)
        else:
            bus = MessageBus(bus_type=self._bus_type)
        try:
            self._bus = await asyncio.wait_for(bus.connect(), CALL_TIMEOUT)
        except asyncio.CancelledError:
            bus.disconnect()
            raise
        except Exception as error:
            try:
                bus.disconnect()  # a connection half made (authenticated, no Hello answer yet) is not left open
            except Exception:
                pass
            raise BeaconError(names.DAEMON_UNAVAILABLE, "cannot connect to %s: %s"
                              % (self.bus_description, str(error) or type(error).__name__)) from error
        self._bus.add_message_handler(self._received)
        await self._bus_call("AddMatch", "s", [
            "type='signal',sender='%s',interface='%s',member='NameOwnerChanged',arg0='%s'"
            % (names.DBUS_NAME, names.DBUS_NAME, names.BUS_NAME)])
        # Manager1's properties (ScannerState) are broadcast; the sender is checked against the registration's.
        await self._bus_call("AddMatch", "s", [
            "type='signal',interface='%s',member='PropertiesChanged',path='%s',arg0='%s'"
            % (names.PROPERTIES, names.MANAGER_PATH, names.MANAGER)])
        owner = await self._bus_call("GetNameOwner", "s", [names.BUS_NAME], allow_error=True)
        self._queue.put_nowait((_OWNER, (None, owner[0] if owner else "")))
        self._task = asyncio.get_running_loop().create_task(self._run())
        asyncio.get_running_loop().create_task(self._watch_disconnect(self._bus))
        await self._first_attempt.wait()

    async def close(self) -> None:
        """Ends the client (its ranging stops; the app's regions stay monitored, as beacond keeps them for the
        app) and the connection."""
        if self._bus is None:
            return
        bus, self._bus = self._bus, None
        if self.path is not None:
            try:
                await self._call_on(bus, self.path, "Close", "", [], timeout=CLOSE_TIMEOUT)
            except Exception:
                pass  # closing the connection ends the client all the same
        self.path = None
        self._queue.put_nowait((_STOP, None))
        bus.disconnect()
        # From a listener (a delegate that closes its manager) the consumer is the caller: it ends after this.
        if self._task is not None and self._task is not asyncio.current_task():
            await asyncio.gather(self._task, return_exceptions=True)
        self._closed.set()

    async def wait_closed(self) -> None:
        """Until `close()`, or the bus connection is lost."""
        await self._closed.wait()

    async def wait_registered(self, timeout: Optional[float] = None) -> None:
        """Until the client is registered with a running beacond (at once when it is). Not from a listener or a
        delegate method: registering happens on the task that calls them, so it would wait for itself."""
        if self._task is not None and self._task is asyncio.current_task():
            raise RuntimeError("wait_registered() from a listener would wait for itself; check is_registered instead")
        await asyncio.wait_for(self._registered.wait(), timeout)

    @property
    def is_closed(self) -> bool:
        """True once `close()` was called or the bus connection was lost: make a new client."""
        return self._bus is None

    @property
    def is_registered(self) -> bool:
        return self.path is not None

    # MARK: Calls

    async def call(self, member: str, signature: str = "", *body: Any) -> list[Any]:
        """A LocationManager1 method of this client; raises `BeaconError` with beacond's error name and message."""
        if self._bus is None or self.path is None:
            raise self.unavailable()
        return await self._call_on(self._bus, self.path, member, signature, list(body))

    async def manager_property(self, name: str) -> Any:
        """A property of `Manager1` (everyone may read them)."""
        if self._bus is None:
            raise self.unavailable()
        reply = await self._call(self._bus, Message(
            destination=names.BUS_NAME, path=names.MANAGER_PATH, interface=names.PROPERTIES, member="Get",
            signature="ss", body=[names.MANAGER, name]))
        return reply[0].value

    async def client_property(self, name: str) -> Any:
        """A property of this client's LocationManager1 object."""
        if self._bus is None or self.path is None:
            raise self.unavailable()
        reply = await self._call(self._bus, Message(
            destination=names.BUS_NAME, path=self.path, interface=names.PROPERTIES, member="Get",
            signature="ss", body=[names.LOCATION_MANAGER, name]))
        return reply[0].value

    async def set_in_use(self, in_use: bool) -> None:
        """`SetInUse`: False when the program goes to the background (a WhenInUse app's ranging pauses). Said again
        after beacond restarts; listeners hear `InUseChanged`."""
        self.in_use = in_use
        await self.call("SetInUse", "b", in_use)
        self.tell_soon(IN_USE_CHANGED, [in_use])

    def tell_soon(self, member: str, args: list[Any]) -> None:
        """`member` to the listeners from the task that tells them beacond's signals, after those already here (in
        order with them, one at a time)."""
        self._queue.put_nowait((_TELL, (member, args)))

    @property
    def scanner_problem(self) -> str:
        """Why beacond cannot scan now, from its `ScannerState` ("" while it can, or nobody needs it to)."""
        for prefix in names.SCANNER_BLIND_PREFIXES:
            if self.scanner_state.startswith(prefix):
                return self.scanner_state[len(prefix):]
        return ""

    def unavailable(self) -> BeaconError:
        if self._bus is None:
            if self._lost:
                return BeaconError(names.DISCONNECTED, "the D-Bus connection was lost (the bus went away), so this "
                                   "client is closed; make a new one once the bus is back")
            return BeaconError(names.DAEMON_UNAVAILABLE, "this client is closed; make a new one")
        if self.registration_error is not None:
            return self.registration_error
        if self.registration_trouble is not None:
            return self.registration_trouble
        return BeaconError(names.DAEMON_UNAVAILABLE,
                           "beacond is not running on %s (org.beacond has no owner); %s. This client registers "
                           "again by itself when it is back." % (self.bus_description, self._start_advice))

    def _no_answer(self, destination: Optional[str], member: Optional[str], timeout: float,
                   owner: Optional[str] = None) -> str:
        if destination == names.DBUS_NAME:
            return "the D-Bus daemon of %s did not answer %s within %g s" % (self.bus_description, member, timeout)
        return ("beacond (%s on %s) did not answer %s within %g s: it may be hung (see `journalctl -u beacond -e`)"
                % (owner or self.owner or names.BUS_NAME, self.bus_description, member, timeout))

    async def _call_on(self, bus: MessageBus, path: str, member: str, signature: str, body: list[Any],
                       timeout: Optional[float] = None) -> list[Any]:
        return await self._call(bus, Message(destination=names.BUS_NAME, path=path,
                                             interface=names.LOCATION_MANAGER, member=member, signature=signature,
                                             body=body), timeout)

    async def _call(self, bus: MessageBus, message: Message, timeout: Optional[float] = None) -> list[Any]:
        """`message`'s reply; raises `BeaconError`: beacond's refusal, the connection lost, or no answer in time."""
        timeout = CALL_TIMEOUT if timeout is None else timeout
        try:
            reply = await asyncio.wait_for(bus.call(message), timeout)
        except asyncio.TimeoutError:
            raise NoAnswer(names.NO_REPLY, self._no_answer(message.destination, message.member, timeout)) from None
        except Exception as error:  # dbus-fast raises what the socket raised (EOFError, OSError, ...)
            raise BeaconError(names.DISCONNECTED,
                              "the D-Bus connection was lost during %s (%s: %s)"
                              % (message.member, type(error).__name__, error)) from error
        if reply is None:
            raise BeaconError(names.DISCONNECTED, "no reply to %s: the D-Bus connection was lost" % message.member)
        if reply.message_type == MessageType.ERROR:
            text = reply.body[0] if reply.body and isinstance(reply.body[0], str) else ""
            raise BeaconError(reply.error_name or "org.freedesktop.DBus.Error.Failed", text)
        return list(reply.body)

    async def _bus_call(self, member: str, signature: str, body: list[Any], allow_error: bool = False) -> list[Any]:
        assert self._bus is not None
        try:
            return await self._call(self._bus, Message(destination=names.DBUS_NAME, path=names.DBUS_PATH,
                                                       interface=names.DBUS_NAME, member=member,
                                                       signature=signature, body=body))
        except BeaconError:
            if allow_error:
                return []
            raise

    # MARK: Signals in, one at a time

    def _received(self, message: Message) -> None:
        if message.message_type != MessageType.SIGNAL:
            return
        if message.interface == names.DBUS_NAME and message.member == "NameOwnerChanged":
            # Only the bus says who owns a name: a forged NameOwnerChanged (any program can send one to this
            # connection) must not make the client register again and drop its real registration's signals.
            if message.sender == names.DBUS_NAME and message.body and message.body[0] == names.BUS_NAME:
                self._queue.put_nowait((_OWNER, (message.body[1], message.body[2])))
        elif message.interface in (names.LOCATION_MANAGER, names.PROPERTIES):
            if message.member == "DidRangeBeacons":
                # Ranging is replaced by the next cycle: while a slow listener has RANGING_BACKLOG waiting, newer
                # ones are dropped (as beacond drops them for a client that does not read), region events never.
                if self._pending_ranging >= RANGING_BACKLOG:
                    self.dropped_ranging += 1
                    return
                self._pending_ranging += 1
            self._queue.put_nowait((_SIGNAL, message))

    async def _run(self) -> None:
        while True:
            kind, payload = await self._queue.get()
            if kind == _STOP:
                await self._tell(CLOSED, [])
                return
            if kind == _LOST:
                self.path = None
                self._registered.clear()
                await self._tell(DISCONNECTED, [])
                self._closed.set()
                return
            if kind == _TELL:
                await self._tell(*payload)
            elif kind == _OWNER:
                await self._owner_changed(*payload)
                self._first_attempt.set()
            elif kind == _SIGNAL:
                message: Message = payload
                if message.member == "DidRangeBeacons":
                    self._pending_ranging -= 1
                if message.path == names.MANAGER_PATH:
                    await self._manager_signal(message)
                    continue
                if self.path is None or message.path != self.path or message.sender != self.owner:
                    continue  # another client's, or of a beacond that is gone
                member = message.member or ""
                if message.interface == names.PROPERTIES:
                    member = "PropertiesChanged"
                await self._tell(member, list(message.body))

    async def _manager_signal(self, message: Message) -> None:
        """Manager1's PropertiesChanged (ScannerState, LocationServicesEnabled): only from the beacond registered
        with, as every signal (anyone on the bus may send one)."""
        if self.path is None or message.sender != self.owner or message.member != "PropertiesChanged" \
                or len(message.body) < 2 or message.body[0] != names.MANAGER:
            return
        changed = plain(message.body[1])
        if names.SCANNER_STATE in changed:
            self.scanner_state = str(changed[names.SCANNER_STATE])
            self._scanner_news += 1
        await self._tell(MANAGER_PROPERTIES_CHANGED, [changed])

    async def _owner_changed(self, old: Optional[str], owner: str) -> None:
        """`org.beacond` went from `old` (None: from GetNameOwner, not a change) to `owner` ("" for nobody)."""
        if self.path is not None:
            if owner == self.owner:
                return  # the beacond this client is registered with, heard twice (NameOwnerChanged, GetNameOwner)
            if old is not None and old != self.owner:
                # News of a beacond this client is not registered with: one that came and went while a
                # registration waited for its reply, which the beacond after it answered.
                return
        was_registered = self.path is not None
        self.path = None
        self.owner = None
        self.scanner_state = ""
        self._registered.clear()
        if not owner:
            if was_registered or not self._first_attempt.is_set():
                await self._tell(DAEMON_GONE, [self.unavailable()])
            return
        await self._register(owner)

    async def _register(self, owner: str) -> None:
        assert self._bus is not None
        call = asyncio.ensure_future(self._bus.call(Message(
            destination=names.BUS_NAME, path=names.MANAGER_PATH, interface=names.MANAGER, member="RegisterClient",
            signature="s", body=[self.app_id])))
        try:
            try:
                reply = await asyncio.wait_for(asyncio.shield(call), CALL_TIMEOUT)
            except asyncio.TimeoutError:
                # beacond owns its name and does not answer (hung, or slow): said as such, not as "not running".
                # Its answer is still awaited, not asked again: a second RegisterClient would make beacond a client
                # nobody reads, which would take the app's queued events. Its exit ends the wait (the bus answers).
                self.registration_trouble = NoAnswer(names.NO_REPLY, self._no_answer(
                    names.BUS_NAME, "RegisterClient", CALL_TIMEOUT, owner)
                    + "; this client registers as soon as it answers")
                self._first_attempt.set()
                await self._tell(DAEMON_GONE, [self.registration_trouble])
                reply = await call
        except Exception as error:  # the connection went away
            self.registration_trouble = None
            if self._bus is None:
                return  # closed meanwhile
            self.registration_error = BeaconError(names.DAEMON_UNAVAILABLE, "cannot register: %s" % error)
            await self._tell(REGISTRATION_FAILED, [self.registration_error])
            return
        self.registration_trouble = None
        if reply.message_type == MessageType.ERROR:
            text = reply.body[0] if reply.body else ""
            if not (reply.error_name or "").startswith(names.ERROR_PREFIX):
                # Not a refusal: beacond went away before it answered (ServiceUnknown, NoReply). Its next
                # NameOwnerChanged registers again.
                await self._tell(DAEMON_GONE, [self.unavailable()])
                return
            self.registration_error = BeaconError(reply.error_name or "", text)
            await self._tell(REGISTRATION_FAILED, [self.registration_error])
            return
        self.registration_error = None
        self.path = reply.body[0]
        self.owner = reply.sender or owner
        news = self._scanner_news
        try:
            scanner_state = str(await self.manager_property(names.SCANNER_STATE))
        except BeaconError:
            scanner_state = ""  # a beacond without ScannerState (before 0.4): taken as able to scan
        if self._scanner_news == news:  # else a PropertiesChanged taken meanwhile is newer
            self.scanner_state = scanner_state
        self._registered.set()
        await self._tell(REGISTERED, [self.path])
        # What beacond does not keep across its restart: this client's ranging, and whether it is in use. Ranging
        # first, while the new client is in use: a WhenInUse client not in use may not start ranging, only keep it
        # (paused) until it is in use again.
        for constraint in list(self.ranged):
            try:
                await self.call("StartRanging", "a{sv}", constraint.to_dbus())
            except BeaconError as error:
                self.ranged.pop(constraint, None)
                await self._tell("RangingDidFail", [constraint.to_dbus(), error.name, error.message])
        if not self.in_use:
            try:
                await self.call("SetInUse", "b", False)
            except BeaconError as error:
                logger.warning("beacond refused SetInUse(false) after registering again: %s", error)

    async def _tell(self, member: str, args: list[Any]) -> None:
        for listener in list(self._listeners):
            try:
                result = listener(member, args)
                if inspect.isawaitable(result):
                    await result
            except Exception:  # a listener's bug must not stop the signals of the others
                logger.exception("a beacon_location listener failed on %s", member)

    async def _watch_disconnect(self, bus: MessageBus) -> None:
        try:
            await bus.wait_for_disconnect()  # type: ignore[no-untyped-call]
        except Exception:
            pass
        if self._bus is bus:  # lost, not closed by us: told in order, after the signals before it
            self._lost = True
            self._bus = None
            self._queue.put_nowait((_LOST, None))
