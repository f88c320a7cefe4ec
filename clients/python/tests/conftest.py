"""The world each test runs in: a private dbus-daemon, the real beacond (the fifo scanner in place of a radio),
beacons written into its fifo, and an administrator who answers with `busctl` (a real D-Bus client).

`$BEACOND` names the beacond binary (default: the debug build of this repository). Every wait is bounded and
waits for the thing itself; a bound reached is a failure.
"""
import asyncio
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

import pytest

REPOSITORY = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(REPOSITORY, "Tests", "Integration"))
import hci  # noqa: E402  (the repository's iBeacon HCI lines, as the daemon tests write them)

DEMO = "org.example.Demo"
DEMO_UUID = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
# The demo app's private device: a phone known by this Identity Resolving Key (most significant byte first).
ALICE_KEY = "0c1d2e3f405162738495a6b7c8d9eafb"
SETTINGS = "[monitoring]\nexit_timeout = 2\n"
APPS = {
    "demo.toml": 'app_id = "org.example.Demo"\nusers = ["root"]\n'
                 'when_in_use_usage = "Shows the beacons near you while the demo is open."\n'
                 'always_usage = "Tells you when you enter the demo area, also in background."\n'
                 '\n[devices]\nalice-phone = "irk:%s"\n' % ALICE_KEY,
    "unprivileged.toml": 'app_id = "org.example.Unprivileged"\nusers = ["nobody"]\n'
                         'always_usage = "Runs as nobody, to show the library needs no root."\n',
}
# Bounds for what normally takes milliseconds (a busy machine may take seconds; never a pass when reached).
WAIT = 20


class World:
    def __init__(self, directory, settings=SETTINGS):
        self.directory = directory
        os.chmod(directory, 0o755)
        self.config_dir = os.path.join(directory, "config")
        self.state_dir = os.path.join(directory, "state")
        self.fifo = os.path.join(directory, "fifo")
        os.makedirs(os.path.join(self.config_dir, "apps.d"))
        with open(os.path.join(self.config_dir, "beacond.toml"), "w") as file:
            file.write(settings)
        for name, text in APPS.items():
            with open(os.path.join(self.config_dir, "apps.d", name), "w") as file:
                file.write(text)
        self.beacond = os.environ.get("BEACOND") or os.path.join(REPOSITORY, ".build", "debug", "beacond")
        self.daemon = None
        self.daemon_logs = []
        self.bus_pid = None
        self._start_bus()

    def _start_bus(self):
        config = os.path.join(self.directory, "bus.conf")
        with open(config, "w") as file:
            file.write("""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=%s/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
""" % self.directory)
        launcher = subprocess.Popen(["dbus-daemon", "--config-file=" + config, "--fork", "--print-address=1",
                                     "--print-pid=1"], stdout=subprocess.PIPE, text=True)
        self.address = launcher.stdout.readline().strip()
        self.bus_pid = int(launcher.stdout.readline().strip())
        launcher.stdout.close()
        launcher.wait(timeout=WAIT)

    # MARK: beacond

    def start_daemon(self):
        """beacond started; returns once it owns org.beacond (bounded)."""
        log = open(os.path.join(self.directory, "beacond-%d.log" % (len(self.daemon_logs) + 1)), "ab")
        self.daemon_logs.append(log.name)
        self.daemon = subprocess.Popen(
            [self.beacond, "--bus", self.address, "--config-dir", self.config_dir, "--state-dir", self.state_dir,
             "--scanner", "fifo:" + self.fifo], stdout=log, stderr=log, start_new_session=True)
        log.close()
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            if self.daemon.poll() is not None:
                raise AssertionError("beacond exited %s: %s" % (self.daemon.returncode, self.log()[-2000:]))
            if self.busctl("status", "org.beacond", check=False).returncode == 0:
                return
            time.sleep(0.05)
        raise AssertionError("beacond did not take org.beacond within %d s: %s" % (WAIT, self.log()[-2000:]))

    def kill_daemon(self):
        """kill -9, and reaped: the crash the client library must survive."""
        os.killpg(self.daemon.pid, signal.SIGKILL)
        self.daemon.wait(timeout=WAIT)

    def log(self):
        text = ""
        for name in self.daemon_logs:
            with open(name, errors="replace") as file:
                text += file.read()
        return text

    # MARK: an administrator

    def busctl(self, *arguments, check=True):
        result = subprocess.run(["busctl", "--address=" + self.address] + list(arguments), capture_output=True,
                                text=True, timeout=WAIT)
        if check and result.returncode != 0:
            raise AssertionError("busctl %s: %s" % (" ".join(arguments), result.stderr))
        return result

    def admin(self, method, signature="", *arguments):
        return self.busctl("call", "org.beacond", "/org/beacond", "org.beacond.Admin1", method, signature,
                           *[str(argument) for argument in arguments]).stdout

    def grant(self, status="authorizedAlways", app=DEMO):
        self.admin("SetAuthorization", "ss", app, status)

    # MARK: beacons

    def fifo_ready(self):
        try:
            return stat.S_ISFIFO(os.stat(self.fifo).st_mode)
        except FileNotFoundError:
            return False

    def advertise(self, major=1, minor=2, beacon_uuid=DEMO_UUID):
        """One sighting; False when nobody reads the fifo (beacond is not scanning)."""
        return self.send_line(hci.ibeacon_line(beacon_uuid, major, minor))

    def send_line(self, text):
        """One fifo line (an HCI event as hex, Tests/Integration/hci.py); False when nobody reads the fifo."""
        try:
            descriptor = os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            return False
        try:
            os.write(descriptor, text.encode())
        except OSError:
            return False
        finally:
            os.close(descriptor)
        return True

    def close(self):
        if self.daemon is not None and self.daemon.poll() is None:
            os.killpg(self.daemon.pid, signal.SIGKILL)
            self.daemon.wait(timeout=WAIT)
        if self.bus_pid is not None:
            try:
                os.kill(self.bus_pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


class Beacon:
    """A beacon that advertises every 0.2 s while `on` (as an asyncio task)."""

    def __init__(self, world, major=1, minor=2):
        self.world = world
        self.major = major
        self.minor = minor
        self.task = None
        self.heard = 0

    async def _advertise(self):
        while True:
            if self.world.advertise(self.major, self.minor):
                self.heard += 1
            await asyncio.sleep(0.2)

    def on(self):
        if self.task is None:
            self.task = asyncio.get_running_loop().create_task(self._advertise())

    async def off(self):
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
            self.task = None


async def until(condition, what, timeout=WAIT):
    """Waits (bounded) for `condition()` to hold; fails naming `what`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("waited %d s for %s" % (timeout, what))


@pytest.fixture
def world():
    directory = tempfile.mkdtemp(prefix="beacon-location-")
    world = World(directory)
    try:
        yield world
    finally:
        world.close()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def make_world():
    """For a test that needs its own beacond.toml."""
    made = []

    def make(settings):
        directory = tempfile.mkdtemp(prefix="beacon-location-")
        world = World(directory, settings)
        made.append((world, directory))
        return world
    yield make
    for world, directory in made:
        world.close()
        shutil.rmtree(directory, ignore_errors=True)
