"""What the guest scenarios run on: the guest's system D-Bus with beacond's policy, bluetoothd, btmon, virtual
controllers, beacond itself, and clients (Tests/Integration/harness.py's dbus-python client on the system bus).

Runs inside the QEMU guest started by Tests/System/run.sh, as root, in an overlay on the host's root: changes to
/etc (the D-Bus policy, test users) stay in the guest. Every check prints one line on the serial console,
`SYSTEST PASS name` or `SYSTEST FAIL name: reason`, which run.sh counts. Logs go to $SYSTEST_LOGS, which run.sh
prints when a check failed.

Every wait is bounded (pump_until); silence windows (no DidExitRegion while a beacon advertises) are the only
fixed waits. Software emulation (TCG) is slow, so the bounds here are generous, and each is multiplied by the
guest's speed factor (SYSTEST_SPEED, measured by pace.py as the guest starts: 1 on an idle host, more when the host
is busy): reaching one is a failure.
"""
import os
import shutil
import signal
import struct
import subprocess
import sys
import time
import traceback

REPO = os.environ["SYSTEST_REPO"]
LOGS = os.environ["SYSTEST_LOGS"]
BEACOND = os.environ["BEACOND"]
BEACONCTL = os.environ["BEACONCTL"]
sys.path.insert(0, os.path.join(REPO, "Tests", "Integration"))

import dbus  # noqa: E402
import harness  # noqa: E402
from harness import TestFailure, check, plain, pump_for, pump_until  # noqa: E402,F401

SYSTEM_BUS = "unix:path=/run/dbus/system_bus_socket"
BLUEZ = "org.bluez"
ADAPTER = "org.bluez.Adapter1"
DEVICE = "org.bluez.Device1"
OBJECT_MANAGER = "org.freedesktop.DBus.ObjectManager"
PROPERTIES = "org.freedesktop.DBus.Properties"
BLUETOOTHD = "/usr/libexec/bluetooth/bluetoothd"
APPLE = 0x004C
ALTBEACON_COMPANY = 0x0118  # Radius Networks, AltBeacon's author; an AltBeacon may carry any company's id
EDDYSTONE_UUID = "0000feaa-0000-1000-8000-00805f9b34fb"  # 0xFEAA, as bluetoothd's ServiceData and UUIDs name it

# The beacon the scenarios advertise, and the app their clients register as.
BEACON_UUID = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
APP_ID = "org.beacond.SystemTest"

# How much slower than on an idle host this guest runs (stage.sh, pace.py); every bound below is scaled by it.
SPEED = float(os.environ.get("SYSTEST_SPEED", "1"))


def scaled(seconds):
    """A bound of `seconds` on an idle host, for this guest's speed."""
    return seconds * SPEED


# Bounds (seconds) for things that take well under a second natively; TCG is 10-50 times slower.
START_TIMEOUT = scaled(30)
STEP_TIMEOUT = scaled(20)

results = {"passed": 0, "failed": 0}
_processes = []  # every Popen started here, stopped by stop_everything


def say(kind, text):
    """One line on the console (stdout is the serial console), never split."""
    text = " ".join(str(text).split())
    sys.stdout.write("SYSTEST %s %s\n" % (kind, text))
    sys.stdout.flush()


def note(text):
    say("NOTE", text)


def passed(name):
    results["passed"] += 1
    say("PASS", name)


def failed(name, reason):
    results["failed"] += 1
    say("FAIL", "%s: %s" % (name, reason))


def step(name, function, *args, **keywords):
    """Runs one check; returns its result, or None when it failed (printed with the reason)."""
    try:
        result = function(*args, **keywords)
    except TestFailure as failure:
        failed(name, failure)
        return None
    except Exception as error:  # a check never brings the scenario down: report it and go on
        failed(name, "%s: %s" % (type(error).__name__, error))
        with open(os.path.join(LOGS, "scenario-tracebacks.log"), "a") as file:
            file.write("%s\n%s\n" % (name, traceback.format_exc()))
        return None
    passed(name)
    return result if result is not None else True


def finish():
    """Stops everything; the exit status says whether every check passed."""
    stop_everything()
    sys.exit(0 if results["failed"] == 0 else 1)


# MARK: Processes

class Process:
    """A background program (own process group), stdout and stderr in LOGS/<label>.log."""

    def __init__(self, label, arguments, env=None, quiet=False):
        self.label = label
        self.arguments = [str(argument) for argument in arguments]
        self.log_path = os.path.join(LOGS, label + ".log") if not quiet else os.devnull
        with open(self.log_path, "ab") as log:
            if not quiet:
                log.write(("---- %s\n" % " ".join(self.arguments)).encode())
            log.flush()
            self.popen = subprocess.Popen(self.arguments, stdout=log, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL, start_new_session=True, env=env)
        _processes.append(self)

    @property
    def pid(self):
        return self.popen.pid

    def running(self):
        return self.popen.poll() is None

    def log(self):
        with open(self.log_path, errors="replace") as file:
            return file.read()

    def signal(self, number):
        if self.running():
            os.killpg(self.popen.pid, number)

    def wait(self, timeout):
        """The exit status, or None if still running after `timeout` seconds."""
        try:
            return self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, timeout=10):
        """SIGTERM, then SIGKILL after `timeout`; the exit status."""
        if self.running():
            try:
                os.killpg(self.popen.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            if self.wait(timeout) is None:
                os.killpg(self.popen.pid, signal.SIGKILL)
                self.wait(10)
        if self in _processes:
            _processes.remove(self)
        return self.popen.returncode


def stop_everything():
    for process in reversed(list(_processes)):
        process.stop(5)


def run(arguments, timeout=STEP_TIMEOUT, log=None):
    """Runs a tool to completion (bounded): (status, output). Output also goes to LOGS/<log>.log."""
    try:
        completed = subprocess.run([str(argument) for argument in arguments], stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=timeout)
        status, output = completed.returncode, completed.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired as expired:
        status, output = None, (expired.stdout or b"").decode(errors="replace")
    if log:
        with open(os.path.join(LOGS, log + ".log"), "a") as file:
            file.write("---- %s → %s\n%s\n" % (" ".join(map(str, arguments)), status, output))
    if status is None:
        raise TestFailure("%s did not finish within %d s" % (" ".join(map(str, arguments)), timeout))
    return status, output


def wait_for(condition, timeout, what):
    """pump_until that fails with `what` when the bound is reached."""
    result = pump_until(condition, timeout)
    if not result:
        raise TestFailure("%s: not within %g s" % (what, timeout))
    return result


# MARK: The system bus

def system_bus():
    """The guest's system dbus-daemon (Debian's system.conf) with beacond's policy from the tree installed in
    /etc/dbus-1/system.d, as `make install` would put it in /usr/share/dbus-1/system.d."""
    shutil.copy(os.path.join(REPO, "config/dbus-1/system.d/org.beacond.conf"), "/etc/dbus-1/system.d/")
    os.makedirs("/run/dbus", exist_ok=True)
    status, output = run(["dbus-daemon", "--system", "--fork"], log="dbus-daemon")
    check(status == 0, "dbus-daemon --system: %s" % output.strip())
    check(wait_for(lambda: os.path.exists("/run/dbus/system_bus_socket"), START_TIMEOUT,
                   "the system bus socket"), "no socket")
    return Bus()


def accounts():
    """beacond's accounts from the tree's sysusers file, and two test callers (as packaging-test.sh makes
    them); they live in the guest's overlay only."""
    status, output = run(["systemd-sysusers", os.path.join(REPO, "systemd/beacond.sysusers")], log="accounts")
    check(status == 0, "systemd-sysusers: %s" % output.strip())
    for user in ("beacond-test", "beacond-test-admin"):
        if run(["id", user])[0] != 0:
            status, output = run(["useradd", "--system", "--user-group", "--no-create-home", "--shell",
                                  "/usr/sbin/nologin", user], log="accounts")
            check(status == 0, "useradd %s: %s" % (user, output.strip()))
    status, output = run(["usermod", "-a", "-G", "beacond-admin", "beacond-test-admin"], log="accounts")
    check(status == 0, "usermod: %s" % output.strip())


class Bus(harness.Connection):
    """A root connection to the system bus (bus driver, BlueZ, beacond's Admin1). It collects only Admin1
    signals: with DuplicateData discovery bluetoothd broadcasts a PropertiesChanged per advertising report,
    hundreds a second, which a match-everything rule would have to read."""

    def __init__(self):
        super().__init__(SYSTEM_BUS, harness.ADMIN)

    def has_owner(self, name):
        return bool(self.bus.call_blocking("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                           "NameHasOwner", "s", [name], timeout=scaled(10)))

    def bluez(self, path, interface, method, signature="", *args, timeout=STEP_TIMEOUT):
        return self.bus.call_blocking(BLUEZ, path, interface, method, signature, list(args), timeout=timeout)

    def bluez_objects(self):
        return plain(self.bus.call_blocking(BLUEZ, "/", OBJECT_MANAGER, "GetManagedObjects", "", [], timeout=STEP_TIMEOUT))


# MARK: BlueZ

def btmon():
    """btmon recording every controller's traffic (btsnoop) for the logs."""
    return Process("btmon", ["btmon", "-w", os.path.join(LOGS, "btmon.btsnoop")], quiet=True)


def bluetoothd(bus, label="bluetoothd", debug=True):
    """bluetoothd in the foreground (with debug logging unless told otherwise), once it owns org.bluez.

    Under software emulation, debug logging makes bluetoothd too slow for hundreds of reports a second: its
    management socket overflows, it misses the kernel's "discovery stopped" event and never restarts
    discovery. Scenarios that flood it run it without -d."""
    process = Process(label, [BLUETOOTHD, "-n"] + (["-d"] if debug else []))
    wait_for(lambda: bus.has_owner(BLUEZ) or not process.running(), START_TIMEOUT, "bluetoothd owns org.bluez")
    check(process.running(), "bluetoothd exited: %s" % process.log()[-800:])
    return process


def adapters():
    try:
        return sorted(os.listdir("/sys/class/bluetooth"))
    except FileNotFoundError:
        return []


def adapter_powered(bus, name):
    try:
        return bool(bus.bluez("/org/bluez/" + name, harness.PROPERTIES, "Get", "ss", ADAPTER, "Powered"))
    except dbus.exceptions.DBusException:
        return False


def wait_adapter_powered(bus, name, timeout=START_TIMEOUT):
    """bluetoothd powers adapters itself (AutoEnable); waits until it says Powered."""
    wait_for(lambda: adapter_powered(bus, name), timeout, "%s powered in bluetoothd" % name)


def btmgmt(index, *arguments):
    status, output = run(["btmgmt", "--index", str(index)] + list(arguments), log="btmgmt")
    check(status == 0, "btmgmt --index %s %s: status %s %s" % (index, " ".join(arguments), status, output.strip()))
    return output


def ibeacon_advertising_data(major, minor, tx_power=-59, beacon_uuid=BEACON_UUID):
    """The manufacturer-specific AD structure of an iBeacon as hex (btmgmt add-adv -d)."""
    payload = (bytes([0x4C, 0x00, 0x02, 0x15]) + bytes.fromhex(beacon_uuid.replace("-", ""))
               + major.to_bytes(2, "big") + minor.to_bytes(2, "big") + bytes([tx_power & 0xFF]))
    return (bytes([len(payload) + 1, 0xFF]) + payload).hex()


def manufacturer_beacon(objects, beacon_uuid=BEACON_UUID):
    """(path, major, minor) of the first Device1 whose Apple manufacturer data is an iBeacon of `beacon_uuid`."""
    wanted = bytes.fromhex(beacon_uuid.replace("-", ""))
    for path, interfaces in objects.items():
        device = interfaces.get(DEVICE)
        if not device:
            continue
        data = device.get("ManufacturerData", {}).get(APPLE)
        if data and len(data) >= 22 and bytes(data[:2]) == b"\x02\x15" and bytes(data[2:18]) == wanted:
            return path, int.from_bytes(bytes(data[18:20]), "big"), int.from_bytes(bytes(data[20:22]), "big")
    return None


def altbeacon_advertising_data(id1, id2, id3, reference_rssi=-59, company=ALTBEACON_COMPANY, reserved=0):
    """An AltBeacon's manufacturer-specific AD structure as hex (btmgmt add-adv -d): `1b ff`, the company (little
    endian), beacon code BE AC, id1 (16 bytes), id2 and id3 (big endian), the reference RSSI at 1 m, one reserved
    byte: 28 bytes, the most a legacy advert holds beside the Flags structure the kernel adds (btvirt aborts on a
    longer advert, which the kernel would send it as an extended one)."""
    payload = (company.to_bytes(2, "little") + bytes([0xBE, 0xAC]) + bytes.fromhex(id1.replace("-", ""))
               + id2.to_bytes(2, "big") + id3.to_bytes(2, "big") + bytes([reference_rssi & 0xFF, reserved]))
    return (bytes([len(payload) + 1, 0xFF]) + payload).hex()


def eddystone_uid_advertising_data(namespace, instance, tx_power_at_zero=-18):
    """An Eddystone-UID advert's AD structures as hex (btmgmt add-adv -d): the complete list of 16-bit service
    UUIDs (`03 03 aa fe`) and the service data for 0xFEAA (`17 16 aa fe`): frame 0x00, the TX power at 0 m,
    the namespace (10 bytes), the instance (6 bytes), two reserved bytes: 28 bytes, as the AltBeacon."""
    frame = (bytes([0xAA, 0xFE, 0x00, tx_power_at_zero & 0xFF]) + bytes.fromhex(namespace) + bytes.fromhex(instance)
             + bytes(2))
    return (bytes([0x03, 0x03, 0xAA, 0xFE, len(frame) + 1, 0x16]) + frame).hex()


def signed_byte(value):
    return value - 256 if value > 127 else value


def manufacturer_altbeacon(objects, id1):
    """(path, company, id2, id3, reference RSSI, data length) of the first Device1 whose manufacturer data, of any
    company, is an AltBeacon (beacon code BE AC) of `id1`."""
    wanted = bytes.fromhex(id1.replace("-", ""))
    for path, interfaces in objects.items():
        device = interfaces.get(DEVICE)
        if not device:
            continue
        for company, data in device.get("ManufacturerData", {}).items():
            data = bytes(data)
            if len(data) >= 23 and data[:2] == b"\xbe\xac" and data[2:18] == wanted:
                return (path, int(company), int.from_bytes(data[18:20], "big"), int.from_bytes(data[20:22], "big"),
                        signed_byte(data[22]), len(data))
    return None


def service_data_eddystone(objects, namespace):
    """(path, instance as hex, TX power at 0 m, service data length, the Device1's UUIDs) of the first Device1
    whose service data for 0xFEAA is an Eddystone-UID frame (0x00) of `namespace`."""
    wanted = bytes.fromhex(namespace)
    for path, interfaces in objects.items():
        device = interfaces.get(DEVICE)
        if not device:
            continue
        data = bytes(device.get("ServiceData", {}).get(EDDYSTONE_UUID, []))
        if len(data) >= 18 and data[0] == 0x00 and data[2:12] == wanted:
            return path, data[12:18].hex(), signed_byte(data[1]), len(data), [str(uuid).lower() for uuid in
                                                                           device.get("UUIDs", [])]
    return None


# btsnoop (RFC 1761 style, big endian) with datalink 2001, the Linux monitor format `btmon -w` writes: each record's
# flags are the controller index << 16 | the monitor opcode (0 New Index, 3 HCI event).
BTSNOOP_HEADER = struct.Struct(">8sII")
BTSNOOP_RECORD = struct.Struct(">IIIIq")
MONITOR_NEW_INDEX = 0
MONITOR_EVENT = 3
LE_META_EVENT = 0x3E
LE_ADVERTISING_REPORTS = (0x02, 0x0D)  # legacy and extended


def keep_advertising_reports(source, destination, index, adverts):
    """Copies from btmon's capture `source` to `destination` (btsnoop 2001 as well) only what controller `index`
    received of `adverts` (byte strings: each advert's data as given to btmgmt add-adv): its New Index record and
    the LE advertising report events whose data holds one of them, with btmon's own timestamps. A record btmon is
    still writing is left out. Returns how many reports were kept."""
    with open(source, "rb") as file:
        capture = file.read()
    check(len(capture) >= BTSNOOP_HEADER.size, "%s is %d bytes, not a btsnoop capture" % (source, len(capture)))
    magic, version, datalink = BTSNOOP_HEADER.unpack_from(capture)
    check(magic == b"btsnoop\0" and datalink == 2001, "%s is not btmon's btsnoop (magic %r, datalink %d)"
          % (source, magic, datalink))
    kept, reports, offset = [capture[:BTSNOOP_HEADER.size]], 0, BTSNOOP_HEADER.size
    while offset + BTSNOOP_RECORD.size <= len(capture):
        _, included, flags, _, _ = BTSNOOP_RECORD.unpack_from(capture, offset)
        end = offset + BTSNOOP_RECORD.size + included
        if end > len(capture):
            break
        record, packet, offset = capture[offset:end], capture[offset + BTSNOOP_RECORD.size:end], end
        if flags >> 16 != index:
            continue
        if flags & 0xFFFF == MONITOR_NEW_INDEX:
            kept.append(record)
        elif (flags & 0xFFFF == MONITOR_EVENT and len(packet) > 3 and packet[0] == LE_META_EVENT
              and packet[2] in LE_ADVERTISING_REPORTS and any(advert in packet for advert in adverts)):
            kept.append(record)
            reports += 1
    with open(destination, "wb") as file:
        file.write(b"".join(kept))
    return reports


def remove_devices(bus, adapter):
    """Forgets every device bluetoothd has on `adapter`, so the next sighting is a new InterfacesAdded."""
    prefix = "/org/bluez/%s/" % adapter
    for path, interfaces in bus.bluez_objects().items():
        if path.startswith(prefix) and DEVICE in interfaces:
            try:
                bus.bluez("/org/bluez/" + adapter, ADAPTER, "RemoveDevice", "o", path)
            except dbus.exceptions.DBusException:
                pass


# MARK: beacond

BEACOND_SETTINGS = """[authorization]
prompt = "always"

[monitoring]
exit_timeout = %(exit_timeout)s
"""

APP_DECLARATION = """app_id = "%s"
users = ["root", "beacond-test"]
when_in_use_usage = "The system test ranges the beacons of its virtual controllers."
always_usage = "The system test monitors the region of its virtual controllers."
""" % APP_ID


class Beacond:
    """beacond on the guest's system bus, as root (for now), with its own configuration and state directories
    under /tmp and the given scanner; started and owning org.beacond."""

    def __init__(self, bus, scanner, label, exit_timeout=3, extra_settings=""):
        self.bus = bus
        self.label = label
        self.directory = "/tmp/" + label
        shutil.rmtree(self.directory, ignore_errors=True)
        self.config_dir = os.path.join(self.directory, "config")
        self.state_dir = os.path.join(self.directory, "state")
        os.makedirs(os.path.join(self.config_dir, "apps.d"))
        os.makedirs(self.state_dir)
        with open(os.path.join(self.config_dir, "beacond.toml"), "w") as file:
            file.write(BEACOND_SETTINGS % {"exit_timeout": exit_timeout} + extra_settings)
        with open(os.path.join(self.config_dir, "apps.d", "systemtest.toml"), "w") as file:
            file.write(APP_DECLARATION)
        self.process = Process(label, [BEACOND, "--bus", "system", "--config-dir", self.config_dir,
                                       "--state-dir", self.state_dir, "--scanner", scanner, "--log-level", "debug"])
        wait_for(lambda: bus.has_owner(harness.BUS_NAME) or not self.process.running(), START_TIMEOUT,
                 "beacond owns org.beacond")
        check(self.process.running(), "beacond exited with %s: %s" % (self.process.popen.returncode,
                                                                        self.process.log()[-1500:]))

    def status(self):
        return plain(self.bus.bus.call_blocking(harness.BUS_NAME, harness.MANAGER_PATH, harness.ADMIN, "GetStatus",
                                                "", [], timeout=STEP_TIMEOUT))

    def alive(self):
        """Runs and answers Admin1.GetStatus; returns the status."""
        check(self.process.running(), "beacond exited with %s; log tail: %s"
              % (self.process.popen.returncode, self.process.log()[-1500:]))
        return self.status()

    def stop(self):
        """SIGTERM; beacond must exit 0."""
        status = self.process.stop(scaled(20))
        check(status == 0, "beacond exited with %s after SIGTERM" % status)


def wait_scanning(daemon, timeout=STEP_TIMEOUT):
    """Until GetStatus says ScannerState scanning; fails with the state it reports."""
    last = {}

    def scanning():
        last["status"] = daemon.alive()
        return last["status"].get("ScannerState") == "scanning"
    if not pump_until(scanning, timeout):
        raise TestFailure("ScannerState is %r (Scanner %r), not 'scanning', after %g s"
                          % (last.get("status", {}).get("ScannerState"), last.get("status", {}).get("Scanner"),
                             timeout))


class Monitor(harness.Client):
    """A LocationManager1 client of APP_ID on the system bus: authorized Always (prompt = "always"), monitoring
    one region of BEACON_UUID and (optionally) ranging it; every signal collected."""

    def __init__(self, identifier="systest", beacon_uuid=BEACON_UUID, ranging=False, **region):
        """Monitors the region {beacon_uuid, **region} (beacon_uuid None: no UUID key, for an Eddystone region);
        with `ranging`, also ranges every beacon of beacon_uuid."""
        super().__init__(SYSTEM_BUS, APP_ID, harness.LOCATION_MANAGER)  # only beacond's signals (see Bus)
        self.identifier = identifier
        self.register()
        status = str(self.lm("RequestAlwaysAuthorization"))
        if status != "authorizedAlways":
            self.wait_status("authorizedAlways", timeout=STEP_TIMEOUT)
        self.start_monitoring(identifier, beacon_uuid, **region)
        if ranging:
            self.start_ranging(beacon_uuid)

    def entered(self, timeout=STEP_TIMEOUT, identifier=None):
        """The next DidEnterRegion of this client's region (or of `identifier`, another region it monitors)."""
        identifier = identifier or self.identifier
        return self.wait("DidEnterRegion", where=lambda s: plain(s.args[0]).get("Identifier") == identifier,
                         timeout=timeout, what="DidEnterRegion(%s)" % identifier)

    def exited(self, timeout=STEP_TIMEOUT, identifier=None):
        identifier = identifier or self.identifier
        return self.wait("DidExitRegion", where=lambda s: plain(s.args[0]).get("Identifier") == identifier,
                         timeout=timeout, what="DidExitRegion(%s)" % identifier)

    def state(self, state, timeout=STEP_TIMEOUT):
        return self.wait("DidDetermineState", where=lambda s: str(s.args[0]) == state, timeout=timeout,
                         what="DidDetermineState(%s)" % state)

    def count(self, member, mark=0, where=None):
        return len(self.collector.since(mark, member, path=self.path, where=where))
