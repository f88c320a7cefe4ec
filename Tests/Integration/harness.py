"""What the daemon integration tests run on: a private dbus-daemon, the real beacond with the fifo scanner,
real D-Bus clients (dbus-python on GLib's main loop) and the command-line tools (busctl, gdbus, beaconctl).

Every wait is bounded: `pump_until` runs the GLib main loop until a condition holds or a deadline passes.
The only fixed waits are silence windows (`Collector.expect_none`), which assert that nothing arrives.
Every process started here is recorded and killed (process group) when its owner's `close` runs, and by
`kill_everything` at exit as the last resort.
"""
import os
import shutil
import signal
import stat
import subprocess
import tempfile
import time

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

import hci

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)

BUS_NAME = "org.beacond"
MANAGER_PATH = "/org/beacond"
MANAGER = "org.beacond.Manager1"
ADMIN = "org.beacond.Admin1"
LOCATION_MANAGER = "org.beacond.LocationManager1"
PROPERTIES = "org.freedesktop.DBus.Properties"
ERROR = "org.beacond.Error."

DEMO_UUID = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
OTHER_UUID = "F7826DA6-4FA2-4E98-8024-BC5B71E0893E"

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

# Bounds for things that normally take milliseconds; reaching one is a failure, never a pass.
START_TIMEOUT = 10
SIGNAL_TIMEOUT = 5
TOOL_TIMEOUT = 15

_live_processes = []  # (pid, is_group_leader): everything still running that this suite started
_live_directories = []  # temporary directories not yet removed


class TestFailure(AssertionError):
    pass


def check(condition, message):
    if not condition:
        raise TestFailure(message)


def remove_everything():
    """Last resort (SIGTERM, SIGINT): every process killed, every temporary directory removed."""
    kill_everything()
    for directory in list(_live_directories):
        shutil.rmtree(directory, ignore_errors=True)
    _live_directories.clear()


def kill_everything():
    """Last resort (atexit, signals): SIGKILL whatever is still recorded as running."""
    for pid, group in list(_live_processes):
        try:
            if group:
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    _live_processes.clear()


def _process_exists(pid):
    """True while `pid` runs; a zombie (exited, not yet reaped by init: the forked dbus-daemon is not our
    child) counts as gone."""
    try:
        with open("/proc/%d/stat" % pid) as file:
            return file.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def _forget(pid):
    _live_processes[:] = [entry for entry in _live_processes if entry[0] != pid]


# MARK: The main loop

def pump_until(condition, timeout):
    """Runs the GLib main loop until `condition()` returns something true (returned) or `timeout` seconds
    pass (None)."""
    context = GLib.MainContext.default()
    deadline = time.monotonic() + timeout
    while True:
        while context.pending():
            context.iteration(False)
        result = condition()
        if result:
            return result
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        fired = []

        def wake():
            fired.append(True)
            return False

        source = GLib.timeout_add(max(1, int(min(remaining, 0.05) * 1000)), wake)
        context.iteration(True)
        if not fired:
            GLib.source_remove(source)


def pump_for(seconds):
    """Runs the main loop for a fixed window (silence checks and steady feeding only)."""
    pump_until(lambda: False, seconds)


# MARK: Tools

def run_tool(arguments, timeout=TOOL_TIMEOUT, as_nobody=False):
    """Runs a command line tool to completion (bounded); returns CompletedProcess with text output."""
    command = (NOBODY if as_nobody else []) + list(arguments)
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as expired:
        raise TestFailure("%s did not finish within %d s" % (" ".join(command), timeout)) from expired


def rss_mb(pid):
    """A process's resident memory (VmRSS) in MB, 0 if it cannot be read."""
    with open("/proc/%d/status" % pid) as file:
        for line in file:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0


def percentile(values, fraction):
    """The value at `fraction` (0.99: p99) of `values`, nan for none."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


def describe_result(result):
    return "exit %d, stdout %r, stderr %r" % (result.returncode, result.stdout.strip()[:600],
                                            result.stderr.strip()[:600])


# MARK: The bus

class PrivateBus:
    """A session-type dbus-daemon on a socket in `directory`, everyone allowed (as Tests/DBusTests/PrivateBus.swift,
    plus `allow user="*"`: a session bus otherwise accepts only the uid it runs as, and nobody must connect)."""

    def __init__(self, directory):
        self.directory = directory
        config = os.path.join(directory, "bus.conf")
        with open(config, "w") as file:
            file.write("""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=%s/bus</listen>
  <auth>EXTERNAL</auth>
  <servicedir>%s/services</servicedir>
  <policy context="default">
    <allow user="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
""" % (directory, directory))
        os.makedirs(os.path.join(directory, "services"), exist_ok=True)
        launcher = subprocess.Popen(["dbus-daemon", "--config-file=" + config, "--fork", "--print-address=1",
                                     "--print-pid=1"], stdout=subprocess.PIPE, text=True)
        # The forked daemon keeps the pipe open: read exactly the two lines, not to end of file.
        address = launcher.stdout.readline().strip()
        pid_text = launcher.stdout.readline().strip()
        launcher.stdout.close()
        launcher.wait(timeout=START_TIMEOUT)
        if not address or not pid_text.isdigit():
            raise TestFailure("dbus-daemon printed %r %r" % (address, pid_text))
        self.pid = int(pid_text)
        _live_processes.append((self.pid, False))
        self.address = address
        self.socket_address = "unix:path=%s/bus" % directory

    def close(self):
        if self.pid is None:
            return
        try:
            os.kill(self.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if not _process_exists(self.pid):
                break
            time.sleep(0.01)  # not a timing assertion: waiting for a process to be gone, bounded
        else:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _forget(self.pid)
        self.pid = None


# MARK: The daemon

DEFAULT_SETTINGS = "[monitoring]\nexit_timeout = 2\n"

DEFAULT_APPS = {
    "demo.toml": 'app_id = "org.example.Demo"\nusers = ["root"]\n'
                 'when_in_use_usage = "Shows the beacons near you while the demo is open."\n'
                 'always_usage = "Tells you when you enter the demo area, also in background."\n',
    "noalways.toml": 'app_id = "org.example.NoAlways"\nusers = ["root"]\n'
                     'when_in_use_usage = "Shows the beacons near you."\n',
    "other.toml": 'app_id = "org.example.Other"\nusers = ["root"]\n'
                  'when_in_use_usage = "Other app, while in use."\n'
                  'always_usage = "Other app, in background."\n',
}


class Daemon:
    """One `beacond` process (own process group), its stdout/stderr in files under the test directory. `scanner`:
    `--scanner`'s value, the fifo scanner when None, no `--scanner` (beacond.toml's `[scanner] source`) when ""."""

    def __init__(self, binary, bus_address, config_dir, state_dir, fifo, log_dir, label="beacond", scanner=None,
                 extra=()):
        self.binary = binary
        self.arguments = [binary, "--bus", bus_address, "--config-dir", config_dir, "--state-dir", state_dir]
        if scanner != "":
            self.arguments += ["--scanner", scanner or ("fifo:" + fifo)]
        self.arguments += list(extra)
        self.stdout_path = os.path.join(log_dir, label + ".stdout")
        self.stderr_path = os.path.join(log_dir, label + ".stderr")
        with open(self.stdout_path, "ab") as out, open(self.stderr_path, "ab") as err:
            self.process = subprocess.Popen(self.arguments, stdout=out, stderr=err, start_new_session=True)
        _live_processes.append((self.process.pid, True))

    @property
    def pid(self):
        return self.process.pid

    def stderr(self):
        with open(self.stderr_path, errors="replace") as file:
            return file.read()

    def running(self):
        return self.process.poll() is None

    def wait_exit(self, timeout):
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        _forget(self.process.pid)
        return code

    def wait_ready(self, admin_bus):
        """Until org.beacond has an owner (bounded); fails with the daemon's stderr if it exits first."""
        def ready():
            if not self.running():
                return "exited"
            return "owned" if admin_bus.name_has_owner(BUS_NAME) else None
        state = pump_until(ready, START_TIMEOUT)
        if state == "exited":
            raise TestFailure("beacond exited with %s before taking %s; stderr:\n%s"
                              % (self.process.returncode, BUS_NAME, self.stderr()[-2000:]))
        check(state == "owned", "beacond did not take %s within %d s" % (BUS_NAME, START_TIMEOUT))

    def terminate(self, timeout=10):
        """SIGTERM and the exit status (bounded)."""
        self.process.send_signal(signal.SIGTERM)
        code = self.wait_exit(timeout)
        check(code is not None, "beacond did not exit within %d s of SIGTERM" % timeout)
        return code

    def kill(self):
        """SIGKILL to the whole group, and reap."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        _forget(self.process.pid)

    def close(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            if self.wait_exit(5) is None:
                self.kill()
        _forget(self.process.pid)


# MARK: Signals

class Signal:
    def __init__(self, member, interface, path, sender, destination, args):
        self.member = member
        self.interface = interface
        self.path = path
        self.sender = sender
        self.destination = destination
        self.args = args
        self.time = time.monotonic()

    def __repr__(self):
        return "%s.%s on %s %s" % (self.interface, self.member, self.path, plain(self.args))


class Collector:
    """Every signal one connection receives (optionally only those of one interface), in arrival order."""

    def __init__(self, bus, interface=None):
        self.signals = []
        self.taken = set()
        bus.add_signal_receiver(self._received, dbus_interface=interface, member_keyword="member",
                                interface_keyword="interface", path_keyword="path", sender_keyword="sender",
                                destination_keyword="destination")

    def _received(self, *args, **keywords):
        self.signals.append(Signal(keywords.get("member"), keywords.get("interface"), keywords.get("path"),
                                   keywords.get("sender"), keywords.get("destination"), list(args)))

    @staticmethod
    def matcher(member=None, path=None, interface=None, where=None):
        def match(signal):
            return ((member is None or signal.member == member) and (path is None or signal.path == path)
                    and (interface is None or signal.interface == interface)
                    and (where is None or where(signal)))
        return match

    def wait(self, member=None, path=None, interface=None, where=None, timeout=SIGNAL_TIMEOUT, what=None):
        """The first signal not returned before that matches; fails after `timeout`."""
        match = self.matcher(member, path, interface, where)

        def find():
            for index, signal in enumerate(self.signals):
                if index not in self.taken and match(signal):
                    self.taken.add(index)
                    return signal
            return None
        found = pump_until(find, timeout)
        if found is None:
            raise TestFailure("no %s within %g s (received: %s)"
                              % (what or member or "signal", timeout, self.summary()))
        return found

    def mark(self):
        return len(self.signals)

    def since(self, mark, member=None, path=None, interface=None, where=None):
        match = self.matcher(member, path, interface, where)
        return [signal for signal in self.signals[mark:] if match(signal)]

    def expect_none(self, seconds, member=None, path=None, interface=None, where=None, what=None):
        """A silence check: pumps for `seconds` and fails if a matching signal arrives in that window."""
        mark = self.mark()
        pump_for(seconds)
        arrived = self.since(mark, member, path, interface, where)
        check(not arrived, "expected no %s for %g s, got %s" % (what or member or "signal", seconds, arrived[:3]))

    def summary(self):
        if not self.signals:
            return "nothing"
        names = ["%s%s" % (signal.member, plain(signal.args[:1]) if signal.member in
                            ("AuthorizationChanged", "Event", "DidDetermineState") else "")
                 for signal in self.signals[-12:]]
        return ", ".join(names)


def plain(value):
    """dbus-python values as plain Python (for messages and comparisons)."""
    if isinstance(value, dbus.Boolean):
        return bool(value)
    if isinstance(value, (dbus.String, dbus.ObjectPath)):
        return str(value)
    if isinstance(value, (dbus.Byte, dbus.Int16, dbus.UInt16, dbus.Int32, dbus.UInt32, dbus.Int64, dbus.UInt64)):
        return int(value)
    if isinstance(value, dbus.Double):
        return float(value)
    if isinstance(value, dict):
        return {plain(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


# MARK: Clients

class Connection:
    """One private connection to the test bus (as root unless it is a tool run as nobody)."""

    def __init__(self, address, interface=None):
        self.bus = dbus.bus.BusConnection(address)
        self.unique_name = self.bus.get_unique_name()
        self.collector = Collector(self.bus, interface)
        self.closed = False

    def call(self, path, interface, method, signature="", *args, timeout=10):
        return self.bus.call_blocking(BUS_NAME, path, interface, method, signature, list(args), timeout=timeout)

    def name_has_owner(self, name):
        return bool(self.bus.call_blocking("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                           "NameHasOwner", "s", [name], timeout=5))

    def get(self, path, interface, name):
        return self.call(path, PROPERTIES, "Get", "ss", interface, name)

    def get_all(self, path, interface):
        return self.call(path, PROPERTIES, "GetAll", "s", interface)

    # Admin1 on /org/beacond
    def admin(self, method, signature="", *args):
        return self.call(MANAGER_PATH, ADMIN, method, signature, *args)

    def status(self):
        """GetStatus with the lists it no longer carries (it has counts), walked from Admin1's paged methods
        under the names it once used: Clients, Regions, PendingRequests, Apps, MQTTReceivers."""
        status = plain(self.admin("GetStatus"))
        for key, method in (("Clients", "ListClients"), ("Regions", "ListRegions"),
                            ("PendingRequests", "ListPendingRequests"), ("Apps", "ListApps"),
                            ("MQTTReceivers", "ListReceivers")):
            status[key] = self.listing(method)
        return status

    def listing(self, method, page=500):
        """Every entry of a paged Admin1 listing, (u offset, u limit) -> (aa{sv}, u total)."""
        entries = []
        while True:
            reply = self.admin(method, "uu", len(entries), page)
            chunk, total = plain(reply[0]), int(reply[1])
            entries += chunk
            if not chunk or len(entries) >= total:
                return entries

    def clients(self):
        return self.listing("ListClients")

    def set_authorization(self, app, status):
        self.admin("SetAuthorization", "ss", app, status)

    def close(self):
        if not self.closed:
            self.closed = True
            try:
                self.bus.close()
            except Exception:  # already gone with the bus
                pass


class Client(Connection):
    """A LocationManager1 client: its own connection, registered as `app`, AuthorizationChanged collected
    from before the RegisterClient call (the daemon sends the current status right after the reply)."""

    def __init__(self, address, app, interface=None):
        super().__init__(address, interface)
        self.app = app
        self.path = None

    def register(self, expect_status=None):
        self.path = str(self.call(MANAGER_PATH, MANAGER, "RegisterClient", "s", self.app))
        if expect_status is not None:
            self.wait_status(expect_status)
        return self.path

    def wait_status(self, status, timeout=SIGNAL_TIMEOUT):
        return self.collector.wait("AuthorizationChanged", path=self.path, where=lambda s: str(s.args[0]) == status,
                                   timeout=timeout, what="AuthorizationChanged('%s')" % status)

    def wait(self, member, **options):
        return self.collector.wait(member, path=self.path, **options)

    def lm(self, method, signature="", *args):
        return self.call(self.path, LOCATION_MANAGER, method, signature, *args)

    def prop(self, name):
        return self.get(self.path, LOCATION_MANAGER, name)

    def start_monitoring(self, identifier, beacon_uuid=DEMO_UUID, **extra):
        """StartMonitoring({Identifier, UUID, **extra}); `beacon_uuid` None leaves UUID out (an Eddystone or
        PrivateDevice region, whose kind refuses the key)."""
        region = {"Identifier": identifier}
        if beacon_uuid is not None:
            region["UUID"] = beacon_uuid
        region.update(extra)
        self.lm("StartMonitoring", "a{sv}", region)

    def start_ranging(self, beacon_uuid=DEMO_UUID, **extra):
        """StartRanging({UUID, **extra}); `beacon_uuid` None leaves UUID out, as for start_monitoring."""
        constraint = {} if beacon_uuid is None else {"UUID": beacon_uuid}
        constraint.update(extra)
        self.lm("StartRanging", "a{sv}", constraint)

    def round_trip(self):
        """A call answered after everything the daemon queued before it (signals go out in order)."""
        self.prop("InUse")
        self.prop("InUse")


def expect_error(action, name, *words):
    """Runs `action`; it must fail with D-Bus error `name` whose message contains every word (case-insensitive).
    Returns the message."""
    try:
        action()
    except dbus.exceptions.DBusException as error:
        got = error.get_dbus_name()
        message = error.get_dbus_message() or ""
        check(got == name, "expected %s, got %s: %s" % (name, got, message))
        check(message.strip(), "%s came with an empty message" % name)
        for word in words:
            check(word.lower() in message.lower(), "%s message does not mention %r: %s" % (name, word, message))
        return message
    raise TestFailure("expected %s, the call succeeded" % name)


# MARK: The beacon feed

class Feeder:
    """Writes iBeacon HCI lines into the daemon's FIFO, once or every `interval` seconds while the main
    loop runs. A FIFO nobody reads (the daemon stopped scanning) is counted, not an error: beacons keep
    advertising whether or not anyone listens."""

    def __init__(self, fifo):
        self.fifo = fifo
        self.source = None
        self.written = 0
        self.unread = 0
        self.last_write = None

    def wait_for_fifo(self):
        """The daemon makes the FIFO when it starts (and when a reload names a new one); bounded wait."""
        def present():
            try:
                return stat.S_ISFIFO(os.stat(self.fifo).st_mode)
            except FileNotFoundError:
                return False
        check(pump_until(present, SIGNAL_TIMEOUT), "beacond did not create the FIFO %s" % self.fifo)

    def send(self, beacon_uuid=DEMO_UUID, major=1, minor=2, **options):
        return self.send_line(hci.ibeacon_line(beacon_uuid, major, minor, **options))

    def send_line(self, text):
        """One HCI event as replay's hex line (hci.line)."""
        line = text.encode()
        try:
            descriptor = os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK)
        except FileNotFoundError:
            self.unread += 1
            return False
        except OSError as error:
            if error.errno == 6:  # ENXIO: no reader
                self.unread += 1
                return False
            raise
        try:
            os.write(descriptor, line)
        finally:
            os.close(descriptor)
        self.written += 1
        self.last_write = time.monotonic()
        return True

    def start(self, interval=0.2, **beacon):
        self.stop()
        self.send(**beacon)

        def tick():
            self.send(**beacon)
            return True
        self.source = GLib.timeout_add(int(interval * 1000), tick)

    def stop(self):
        if self.source is not None:
            GLib.source_remove(self.source)
            self.source = None


# MARK: One test's world

class World:
    """A temporary directory (0755, so nobody can reach the bus socket), a private bus, config and state
    directories and, on `start_daemon`, beacond. `close` stops everything, whatever happened."""

    def __init__(self, beacond, beaconctl=None, settings=DEFAULT_SETTINGS, apps=None):
        self.beacond = beacond
        self.beaconctl = beaconctl
        self.directory = tempfile.mkdtemp(prefix="beacond-it-")
        _live_directories.append(self.directory)
        os.chmod(self.directory, 0o755)
        self.config_dir = os.path.join(self.directory, "config")
        self.state_dir = os.path.join(self.directory, "state")
        self.fifo = os.path.join(self.directory, "fifo")
        os.makedirs(os.path.join(self.config_dir, "apps.d"))
        os.makedirs(self.state_dir)
        self.write_settings(settings)
        for name, text in (DEFAULT_APPS if apps is None else apps).items():
            self.write_app(name, text)
        self.connections = []
        self.daemons = []
        self.feeders = []
        self.bus = None
        self.daemon = None
        self.admin = None
        self.bus = PrivateBus(self.directory)
        self.address = self.bus.address

    @property
    def settings_path(self):
        return os.path.join(self.config_dir, "beacond.toml")

    def app_path(self, name):
        return os.path.join(self.config_dir, "apps.d", name)

    def write_settings(self, text):
        with open(self.settings_path, "w") as file:
            file.write(text)

    def write_app(self, name, text):
        with open(self.app_path(name), "w") as file:
            file.write(text)

    def launch(self, label=None, scanner=None, extra=()):
        """beacond started, not waited for (for start failures); `extra`: more of its arguments."""
        daemon = Daemon(self.beacond, self.address, self.config_dir, self.state_dir, self.fifo, self.directory,
                        label or "beacond-%d" % (len(self.daemons) + 1), scanner=scanner, extra=extra)
        self.daemons.append(daemon)
        return daemon

    def start_daemon(self, scanner=None, extra=()):
        """beacond started and owning org.beacond; `admin` is a root connection for Admin1 calls."""
        self.daemon = self.launch(scanner=scanner, extra=extra)
        if self.admin is None:
            self.admin = self.connect()
        self.daemon.wait_ready(self.admin)
        return self.daemon

    def connect(self, interface=None):
        connection = Connection(self.address, interface)
        self.connections.append(connection)
        return connection

    def client(self, app="org.example.Demo", interface=None, register=True):
        client = Client(self.address, app, interface)
        self.connections.append(client)
        if register:
            client.register(expect_status=None)
        return client

    def authorized_client(self, app, status):
        """A registered client whose app an administrator has set to `status`, once it has heard so."""
        client = self.client(app)
        self.admin.set_authorization(app, status)
        client.wait_status(status)
        return client

    def feeder(self):
        feeder = Feeder(self.fifo)
        self.feeders.append(feeder)
        return feeder

    def alive(self):
        """The daemon process runs and still answers on the bus."""
        check(self.daemon is not None and self.daemon.running(),
              "beacond exited (%s); stderr tail:\n%s" % (self.daemon.process.poll(), self.daemon.stderr()[-1500:]))
        check(str(self.admin.get(MANAGER_PATH, MANAGER, "Version")), "beacond did not answer Get(Version)")

    def busctl(self, *arguments, as_nobody=False):
        return run_tool(["busctl", "--address=" + self.address] + list(arguments), as_nobody=as_nobody)

    def gdbus(self, *arguments, as_nobody=False):
        return run_tool(["gdbus"] + [arguments[0], "--address", self.address] + list(arguments[1:]),
                        as_nobody=as_nobody)

    def close(self):
        for feeder in self.feeders:
            feeder.stop()
        for connection in self.connections:
            connection.close()
        for daemon in self.daemons:
            daemon.close()
        if self.bus is not None:
            self.bus.close()
        # Drain what the closed connections left in the main loop before the next test.
        context = GLib.MainContext.default()
        while context.pending():
            context.iteration(False)
        shutil.rmtree(self.directory, ignore_errors=True)
        if self.directory in _live_directories:
            _live_directories.remove(self.directory)
