#!/usr/bin/python3
"""beacond's API promise tests: what the documentation and the introspection data say is what the daemon does.
The real daemon on a private dbus-daemon, fed through its fifo scanner.

    api_test.py [BEACOND [BEACONCTL]] [-kNUMBER|-kWORDS ...]

Prints PASS/FAIL per test, then "N passed, N failed"; exits 1 when anything failed. Needs root (as daemon_test.py).
"""
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree

import dbus
import dbus.lowlevel

from daemon_test import DEMO, main
from harness import (ADMIN, DEFAULT_APPS, DEMO_UUID, ERROR, LOCATION_MANAGER, MANAGER, MANAGER_PATH, PROPERTIES,
                     TestFailure, check, describe_result, expect_error, plain, pump_for, pump_until, run_tool)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


# MARK: 1. introspection equals what is sent

def introspected_signals(connection, path):
    """{(interface, member): signature} declared by Introspect at `path`."""
    xml = str(connection.bus.call_blocking("org.beacond", path, "org.freedesktop.DBus.Introspectable", "Introspect",
                                           "", [], timeout=5))
    declared = {}
    for interface in ElementTree.fromstring(xml).findall("interface"):
        for signal in interface.findall("signal"):
            declared[(interface.get("name"), signal.get("name"))] = "".join(arg.get("type") for arg in signal.findall("arg"))
    return declared


class SignatureRecorder:
    """Every signal message a connection receives with its wire signature (from the message header)."""

    def __init__(self, connection):
        self.seen = {}  # (interface, member) -> set of signatures

        def record(bus, message):
            if message.get_type() == dbus.lowlevel.MESSAGE_TYPE_SIGNAL and message.get_sender() != "org.freedesktop.DBus":
                self.seen.setdefault((message.get_interface(), message.get_member()), set()).add(message.get_signature() or "")
        connection.bus.add_message_filter(record)


def test_introspection_equals_sent(suite):
    """Every signal the daemon sends (client signals, Admin1.Event, PropertiesChanged on both objects) has the
    signature its object's introspection declares for it."""
    world = suite.world()
    world.start_daemon()
    watcher = world.connect()
    watcher_seen = SignatureRecorder(watcher)
    watcher.admin("WatchEvents")
    demo = world.client(DEMO, register=False)
    demo_seen = SignatureRecorder(demo)
    demo.register()
    world.admin.set_authorization(DEMO, "authorizedAlways")
    demo.wait_status("authorizedAlways")
    demo.start_monitoring("lobby", DEMO_UUID, Major=1)
    demo.wait("DidStartMonitoring")
    demo.start_ranging(DEMO_UUID)
    feeder = world.feeder()
    feeder.wait_for_fifo()
    feeder.start(0.2, beacon_uuid=DEMO_UUID, major=1, minor=2)
    demo.wait("DidEnterRegion")
    demo.wait("DidRangeBeacons", where=lambda s: len(s.args[0]) > 0)
    feeder.stop()
    demo.wait("DidExitRegion", timeout=8)
    demo.start_monitoring("hall", DEMO_UUID, Major=9)
    demo.lm("RequestState", "s", "hall")
    demo.wait("DidDetermineState")
    world.admin.set_authorization(DEMO, "denied")
    demo.wait("MonitoringDidFail")
    demo.wait("RangingDidFail")
    demo.round_trip()
    watcher.admin("GetStatus")
    pump_for(0.3)

    declared = introspected_signals(world.admin, MANAGER_PATH)
    client_declared = introspected_signals(world.admin, demo.path)
    wanted_client = ["AuthorizationChanged", "DidStartMonitoring", "DidDetermineState", "DidEnterRegion",
                     "DidExitRegion", "DidRangeBeacons", "MonitoringDidFail", "RangingDidFail"]
    problems = []
    for member in wanted_client:
        key = (LOCATION_MANAGER, member)
        if key not in client_declared:
            problems.append("%s is not declared on %s" % (member, demo.path))
            continue
        sent = demo_seen.seen.get(key)
        if not sent:
            problems.append("the scenario produced no %s" % member)
        elif sent != {client_declared[key]}:
            problems.append("%s declared (%s), sent %s" % (member, client_declared[key], sorted(sent)))
    checks = [(watcher_seen, declared, (ADMIN, "Event")), (watcher_seen, declared, (PROPERTIES, "PropertiesChanged")),
              (demo_seen, client_declared, (PROPERTIES, "PropertiesChanged"))]
    for seen, table, key in checks:
        sent = seen.seen.get(key)
        if key not in table:
            problems.append("%s.%s is not declared" % key)
        elif not sent:
            problems.append("the scenario produced no %s.%s" % key)
        elif sent != {table[key]}:
            problems.append("%s.%s declared (%s), sent %s" % (key + (table[key], sorted(sent))))
    # Nothing arrives that is not declared.
    for seen, table in ((demo_seen, client_declared), (watcher_seen, declared)):
        for key, signatures in seen.seen.items():
            if key[0] in (LOCATION_MANAGER, ADMIN, MANAGER, PROPERTIES) and key not in table:
                problems.append("%s.%s sent (%s) but not declared" % (key + (sorted(signatures),)))
    check(not problems, "; ".join(problems))


# MARK: 2. the documentation's examples run

def code_blocks(path, language):
    with open(os.path.join(ROOT, path)) as file:
        text = file.read()
    return re.findall(r"```%s\n(.*?)```" % language, text, re.S)


def test_python_example(suite):
    """docs/dbus-api.md's Python client, run as written (the system bus replaced by the test bus): an
    administrator grants Always, a beacon comes and goes, and it prints "entered lobby" then "exited lobby"."""
    blocks = code_blocks("docs/dbus-api.md", "python")
    check(len(blocks) == 1, "docs/dbus-api.md has %d python blocks, expected 1" % len(blocks))
    source = blocks[0]
    check("dbus.SystemBus()" in source, "the example no longer connects with dbus.SystemBus()")
    apps = dict(DEFAULT_APPS)
    apps["beacondemo.toml"] = ('app_id = "org.example.BeaconDemo"\nusers = ["root"]\n'
                               'when_in_use_usage = "Shows the beacons near you."\n'
                               'always_usage = "Tells you when you enter the lobby."\n')
    world = suite.world(apps=apps)
    world.start_daemon()
    script = os.path.join(world.directory, "example.py")
    with open(script, "w") as file:
        file.write(source.replace("dbus.SystemBus()", "dbus.bus.BusConnection(%r)" % world.address))
    output_path = os.path.join(world.directory, "example.out")
    with open(output_path, "w") as output:
        process = subprocess.Popen(["/usr/bin/python3", "-u", script], stdout=output, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    try:
        def printed():
            with open(output_path) as file:
                return file.read()

        def wait_for(text, timeout=8):
            found = pump_until(lambda: text in printed() or process.poll() is not None, timeout)
            check(found and text in printed(), "the example did not print %r: %r" % (text, printed()[-1500:]))

        wait_for("notDetermined")
        world.admin.set_authorization("org.example.BeaconDemo", "authorizedAlways")
        wait_for("authorization: authorizedAlways")
        feeder = world.feeder()
        feeder.wait_for_fifo()
        feeder.start(0.2, beacon_uuid=DEMO_UUID, major=1, minor=2)
        wait_for("entered lobby")
        feeder.stop()
        wait_for("exited lobby")
        text = printed()
        check(text.index("entered lobby") < text.index("exited lobby"), "exited before entered: %r" % text)
        check("Traceback" not in text and "Error" not in text, "the example reported an error: %r" % text)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, 9)
        process.wait(timeout=5)


def shell_examples(world, path):
    """The command lines of the ```sh blocks of `path` with the system bus replaced by the test bus."""
    commands = []
    for block in code_blocks(path, "sh"):
        for line in block.splitlines():
            line = line.split("#", 1)[0].strip() if line.lstrip().startswith("#") else line.strip()
            if line:
                commands.append(line)
    return commands


def on_test_bus(world, command):
    command = re.sub(r"^busctl ", "busctl --address=%s " % world.address, command)
    command = command.replace("gdbus call --system", "gdbus call --address %s" % world.address)
    command = command.replace("gdbus introspect --system", "gdbus introspect --address %s" % world.address)
    return command


def test_shell_examples(suite):
    """docs/dbus-api.md's busctl and gdbus commands (the Examples block and the introspection commands of its
    first paragraph) succeed on the test bus and print what they are for."""
    apps = dict(DEFAULT_APPS)
    apps["beacondemo.toml"] = ('app_id = "org.example.BeaconDemo"\nusers = ["root"]\n'
                               'when_in_use_usage = "Shows the beacons near you."\n')
    world = suite.world(apps=apps)
    world.start_daemon()
    commands = shell_examples(world, "docs/dbus-api.md")
    with open(os.path.join(ROOT, "docs/dbus-api.md")) as file:
        commands += re.findall(r"`((?:busctl|gdbus) introspect[^`]*)`", file.read())
    expected = {  # what each command is for, as the doc describes it
        "GetStatus": "a{sv}",
        "get-property": "b ",
        "RegisterClient": "(objectpath '/org/beacond/client/",
        "busctl introspect": "org.beacond.Manager1",
        "gdbus introspect": "interface org.beacond.Admin1",
    }
    check(len(commands) >= 5, "found only %d commands: %r" % (len(commands), commands))
    for command in commands:
        line = on_test_bus(world, command)
        check("--system" not in line, "cannot run on the test bus: %s" % command)
        result = run_tool(["sh", "-c", line])
        check(result.returncode == 0, "%s: %s" % (command, describe_result(result)))
        for key, text in expected.items():
            if key in command:
                check(text in result.stdout, "%s printed %r, not %r" % (command, result.stdout[:300], text))


# Commands of README.md's "Using the daemon" block that cannot run here, and why.
README_SKIPPED = {
    "sudo apt install ./beacond_0.4.0_amd64.deb": "installs into this machine; Tests/Package/deb-test.sh installs the "
    "package in clean Debian 12 roots (piuparts, and a root booted under QEMU with systemd)",
    'sudo usermod -aG beacond-admin "$USER"': "changes this machine's accounts; the test runs as root, an administrator",
}


def readme_commands():
    """The "Using the daemon" block of README.md as commands: comments dropped, a heredoc kept with its command."""
    block = [b for b in code_blocks("README.md", "sh") if "beaconctl auth grant" in b]
    check(len(block) == 1, "README.md has %d blocks with beaconctl auth grant" % len(block))
    commands, lines = [], block[0].splitlines()
    index = 0
    while index < len(lines):
        line = re.sub(r"\s+#.*$", "", lines[index]).strip()
        index += 1
        if not line or line.startswith("#"):
            continue
        heredoc = re.search(r"<<'(\w+)'", line)
        if heredoc:
            body = []
            while lines[index].strip() != heredoc.group(1):
                body.append(lines[index])
                index += 1
            index += 1
            line = line + "\n" + "\n".join(body) + "\n" + heredoc.group(1)
        commands.extend(part.strip() for part in line.split("; ") if part.strip())
    return commands


def test_readme_commands(suite):
    """README.md's "Using the daemon" commands, run as written against the real daemon on the test bus
    (BEACOND_BUS), with /etc/beacond replaced by the test's configuration directory, the example user alice by
    root (no alice here), and `systemctl reload beacond` by what it does (SIGHUP, beacond.service's ExecReload).
    The client waits for a decision, the grant lets it monitor, status/events/doctor succeed."""
    world = suite.world()
    world.start_daemon()
    environment = dict(os.environ, BEACOND_BUS=world.address,
                       PATH=os.path.dirname(suite.beaconctl) + ":" + os.environ.get("PATH", ""))
    client = None
    ran = []
    try:
        for command in readme_commands():
            if command in README_SKIPPED:
                continue
            if command == "sudo systemctl reload beacond":
                mark = world.daemon.stderr().count("configuration reloaded")
                os.kill(world.daemon.pid, 1)
                check(pump_until(lambda: "com.example.door" in str(world.admin.status().get("Apps", "")), 5),
                      "SIGHUP did not load the README's app: %s" % world.daemon.stderr()[-1500:])
                ran.append(command)
                continue
            line = command.replace("/etc/beacond", world.config_dir).replace('["alice"]', '["root"]')
            line = re.sub(r"^sudo ", "", line)
            check("sudo" not in line and "systemctl" not in line, "cannot run here: %s" % command)
            if " client " in line:
                output = os.path.join(world.directory, "client.out")
                with open(output, "w") as file:
                    client = subprocess.Popen(["sh", "-c", line], stdout=file, stderr=subprocess.STDOUT, env=environment,
                                              start_new_session=True)
                check(pump_until(lambda: "waiting" in open(output).read().lower(), 8),
                      "%s did not say it waits for a decision: %r" % (command, open(output).read()))
            elif line.endswith(" events"):
                events = subprocess.Popen(["sh", "-c", "exec " + line], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          env=environment, text=True, start_new_session=True)
                pump_for(1.0)
                events.send_signal(2)
                out, err = events.communicate(timeout=10)
                check(events.returncode == 0, "%s: exit %s, %r %r" % (command, events.returncode, out, err))
            else:
                result = subprocess.run(["sh", "-c", line], capture_output=True, text=True, env=environment, timeout=20)
                check(result.returncode == 0, "%s: %s" % (command, describe_result(result)))
            ran.append(command)
        check(client is not None, "README.md no longer runs a client")
        output = os.path.join(world.directory, "client.out")
        check(pump_until(lambda: "DidStartMonitoring" in open(output).read() or "monitoring" in open(output).read().lower(), 8),
              "the client did not start monitoring after the grant: %r" % open(output).read())
        check(len(ran) >= 6, "ran only %r" % ran)
        suite.notes.append("ran %d README commands, skipped %d (%s)" % (len(ran), len(README_SKIPPED),
                                                                       "; ".join(README_SKIPPED.values())))
    finally:
        if client is not None and client.poll() is None:
            os.killpg(client.pid, 15)
            client.wait(timeout=10)


def test_daemon_synopsis(suite):
    """docs/daemon.md's synopsis: every option it shows is one `beacond --help` lists, `beacond replay --help` runs,
    and config/README.md's `beacond --config-dir DIR` starts the daemon on that directory (the private bus)."""
    blocks = [b for b in code_blocks("docs/daemon.md", "") if b.startswith("beacond ")]
    check(len(blocks) == 1, "docs/daemon.md synopsis blocks: %d" % len(blocks))
    synopsis = blocks[0]
    help_text = run_tool([suite.beacond, "--help"])
    check(help_text.returncode == 0, "beacond --help: %s" % describe_result(help_text))
    for option in re.findall(r"\[(--[a-z-]+)", synopsis.splitlines()[0]):
        check(option in help_text.stdout, "beacond --help does not list %s" % option)
    replay = run_tool([suite.beacond, "replay", "--help"])
    check(replay.returncode == 0 and "CAPTURE" in replay.stdout.upper(), "beacond replay --help: %s" % describe_result(replay))
    with open(os.path.join(ROOT, "config/README.md")) as file:
        check("`beacond --config-dir DIR`" in file.read(), "config/README.md no longer shows beacond --config-dir DIR")
    world = suite.world()
    world.start_daemon()  # beacond --config-dir <the test's directory> --bus <the private bus>
    check(any(arg == world.config_dir for arg in world.daemon.arguments), "not started with --config-dir")
    check(pump_until(lambda: "config.directory=%s" % world.config_dir in world.daemon.stderr(), 5),
          "beacond did not say it reads %s: %s" % (world.config_dir, world.daemon.stderr()[-1000:]))
    world.alive()


# MARK: 3, 4, 5. refusals that name the problem

def test_region_refusals(suite):
    """Control characters and absurd lengths in identifiers are refused; InvalidRegion messages say which key,
    what was given and what is allowed; UnknownApp escapes what the client sent and never suggests a file the
    loader would ignore."""
    world = suite.world()
    world.start_daemon()
    demo = world.authorized_client(DEMO, "authorizedAlways")
    invalid = ERROR + "InvalidRegion"
    for identifier in ("lob\x1b[31mby", "a\x7fb", "a\x85b", "tab\there"):
        message = expect_error(lambda: demo.start_monitoring(identifier, DEMO_UUID), invalid, "Identifier", "control")
        check("\x1b" not in message and "\x7f" not in message and "\x85" not in message and "\t" not in message,
              "the message echoes a control character: %r" % message)
    expect_error(lambda: demo.start_monitoring("x" * 257, DEMO_UUID), invalid, "Identifier", "256")
    expect_error(lambda: demo.lm("StartMonitoring", "a{sv}", {"Identifier": dbus.UInt32(7), "UUID": DEMO_UUID}),
                 invalid, "'Identifier'", "type u", "string")
    expect_error(lambda: demo.lm("StartMonitoring", "a{sv}", {"Identifier": "a", "UUID": DEMO_UUID,
                                                              "Major": dbus.UInt32(70000)}),
                 invalid, "'Major'", "70000", "0...65535")
    stranger = world.client("evil\x1b]0;x\x07app", register=False)
    message = expect_error(stranger.register, ERROR + "UnknownApp", "not a valid app id", "reverse-DNS")
    check("\x1b" not in message and "\x07" not in message, "UnknownApp echoes control characters: %r" % message)
    empty = world.client("", register=False)
    message = expect_error(empty.register, ERROR + "UnknownApp", "empty app id", "reverse-DNS")
    check("apps.d/.toml" not in message, "UnknownApp suggests apps.d/.toml: %r" % message)
    world.alive()


# MARK: 6. the fifo scanner says why it drops a line

def write_fifo(fifo, text):
    descriptor = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    try:
        os.write(descriptor, text.encode())
    finally:
        os.close(descriptor)


def test_fifo_drops_are_logged(suite):
    """Every line the fifo scanner drops is logged as a warning with its line number and a reason that fits a
    FIFO of hex HCI event lines; a flood of bad lines is logged a bounded number of times, with a count."""
    world = suite.world()
    world.start_daemon()
    demo = world.authorized_client(DEMO, "authorizedAlways")
    demo.start_monitoring("lobby", DEMO_UUID)
    feeder = world.feeder()
    feeder.wait_for_fifo()
    bad = [("hello world", "not hex"),
           ("04 3e 0", "odd number of hex digits"),
           ("02 00 01", "not an HCI event (an H4 event line starts with 04"),
           ("04 3e", "HCI event too short"),
           ("04 3e 05 02 01", "HCI event length mismatch")]
    write_fifo(world.fifo, "# a comment\n\n" + "".join(line + "\n" for line, _ in bad))
    feeder.send(beacon_uuid=DEMO_UUID, major=1, minor=2)
    demo.wait("DidEnterRegion")  # the good line after the bad ones still counts
    for number, (line, reason) in enumerate(bad, start=3):
        wanted = "line %d ignored: %s" % (number, reason)
        found = pump_until(lambda: wanted in world.daemon.stderr(), 5)
        check(found, "no %r in stderr:\n%s" % (wanted, world.daemon.stderr()[-2000:]))
    for wrong in ("capture file", "btsnoop", "pcap"):
        check(wrong not in world.daemon.stderr(), "a fifo line is reported as a capture: %s" % world.daemon.stderr()[-1500:])
    write_fifo(world.fifo, "zz\n" * 500)
    check(pump_until(lambda: "at most once a minute" in world.daemon.stderr(), 5),
          "no rate-limit notice: %s" % world.daemon.stderr()[-1500:])
    demo.round_trip()
    pump_for(0.5)
    logged = world.daemon.stderr().count(" ignored: ")
    check(logged <= 25, "%d lines logged for 505 bad lines: the journal is flooded" % logged)
    world.alive()


# MARK: 7. RSSI hysteresis per region

def test_region_hysteresis(suite):
    """A region with EnterRSSI -60 / AbsentRSSI -80 (exit_timeout 2 s): a weak beacon (-90) and a middling one
    (-70) do not enter it, a strong one (-50) does; a middling one then keeps it inside past the exit timeout, a
    weak one does not. The thresholds come back in MonitoredRegions and in the region signals."""
    world = suite.world()
    world.start_daemon()
    demo = world.authorized_client(DEMO, "authorizedAlways")
    demo.lm("StartMonitoring", "a{sv}", {"Identifier": "door", "UUID": DEMO_UUID, "EnterRSSI": dbus.Int16(-60),
                                         "AbsentRSSI": dbus.Int16(-80)})
    started = demo.wait("DidStartMonitoring")
    region = plain(started.args[0])
    check(region.get("EnterRSSI") == -60 and region.get("AbsentRSSI") == -80, "DidStartMonitoring region %r" % region)
    monitored = plain(demo.prop("MonitoredRegions"))
    check(monitored[0].get("EnterRSSI") == -60 and monitored[0].get("AbsentRSSI") == -80, "MonitoredRegions %r" % monitored)
    feeder = world.feeder()
    feeder.wait_for_fifo()
    for rssi in (-90, -70):
        feeder.start(0.2, beacon_uuid=DEMO_UUID, major=1, minor=2, rssi=rssi)
        demo.collector.expect_none(1.0, "DidEnterRegion", what="DidEnterRegion at %d dBm" % rssi)
    feeder.start(0.2, beacon_uuid=DEMO_UUID, major=1, minor=2, rssi=-50)
    entered = demo.wait("DidEnterRegion")
    check(plain(entered.args[0]).get("EnterRSSI") == -60, "DidEnterRegion region %r" % plain(entered.args[0]))
    feeder.start(0.2, beacon_uuid=DEMO_UUID, major=1, minor=2, rssi=-70)
    demo.collector.expect_none(3.5, "DidExitRegion", what="DidExitRegion while a -70 dBm beacon is there")
    feeder.start(0.2, beacon_uuid=DEMO_UUID, major=1, minor=2, rssi=-90)
    demo.wait("DidExitRegion", timeout=5)
    status_regions = [r for r in world.admin.status()["Regions"] if r.get("Identifier") == "door"]
    check(status_regions and status_regions[0].get("EnterRSSI") == -60, "status Regions %r" % status_regions)
    expect_error(lambda: demo.lm("StartMonitoring", "a{sv}", {"Identifier": "half", "UUID": DEMO_UUID,
                                                              "EnterRSSI": dbus.Int16(-60)}),
                 ERROR + "InvalidRegion", "both or neither")
    feeder.stop()
    world.alive()


def test_configured_hysteresis_default(suite):
    """[monitoring] enter_rssi = -60, absent_rssi = -80 apply to a region that gives none: a -70 dBm beacon does
    not enter it, a -50 dBm one does.

    (Failed before the daemon built its monitor from `configuration.monitoringConfiguration()`.)"""
    world = suite.world(settings="[monitoring]\nexit_timeout = 2\nenter_rssi = -60\nabsent_rssi = -80\n")
    world.start_daemon()
    demo = world.authorized_client(DEMO, "authorizedAlways")
    demo.start_monitoring("lobby", DEMO_UUID)
    demo.wait("DidStartMonitoring")
    feeder = world.feeder()
    feeder.wait_for_fifo()
    feeder.start(0.2, beacon_uuid=DEMO_UUID, major=1, minor=2, rssi=-70)
    demo.collector.expect_none(1.0, "DidEnterRegion", what="DidEnterRegion at -70 dBm under enter_rssi = -60")
    feeder.start(0.2, beacon_uuid=DEMO_UUID, major=1, minor=2, rssi=-50)
    demo.wait("DidEnterRegion")
    feeder.stop()
    world.alive()


# MARK: 8. configuration that cannot work on this system

def test_configuration_warnings(suite):
    """A user in an app's users that does not exist and an admin_group that does not exist are warnings, logged
    and in GetStatus Warnings, naming the file and the fix."""
    apps = dict(DEFAULT_APPS)
    apps["ghost.toml"] = ('app_id = "org.example.Ghost"\nusers = ["root", "beacond-no-such-user"]\n'
                          'when_in_use_usage = "Ghost app."\n')
    world = suite.world(settings="[authorization]\nadmin_group = \"beacond-no-such-group\"\n", apps=apps)
    world.start_daemon()
    warnings = world.admin.status().get("Warnings", [])
    user = [w for w in warnings if "beacond-no-such-user" in w]
    group = [w for w in warnings if "beacond-no-such-group" in w]
    check(len(user) == 1 and "ghost.toml:2" in user[0] and "does not exist" in user[0], "Warnings %r" % warnings)
    check(len(group) == 1 and "beacond.toml:2" in group[0] and "groupadd" in group[0], "Warnings %r" % warnings)
    check("beacond-no-such-user" in world.daemon.stderr() and "beacond-no-such-group" in world.daemon.stderr(),
          "not logged: %s" % world.daemon.stderr()[-1500:])
    world.alive()



# MARK: 11. a client with many regions

def test_many_regions_blocking_client(suite):
    """A dbus-python client adds 1,000 regions with blocking calls (which queue, not dispatch, the signals that
    arrive meanwhile) and gets every reply; PropertiesChanged names MonitoredRegions as invalidated instead of
    resending the whole list, as introspection's EmitsChangedSignal annotation says; the property has all 1,000.

    (Failed before: each StartMonitoring resent the whole list, ~75 MB for 1,000 regions; at the 844th call the
    client's libdbus stopped reading at its 63 MB limit and the reply never came: NoReply.)"""
    world = suite.world(settings="[monitoring]\nmax_regions_per_client = 1000\nmax_regions_per_app = 1000\n")
    world.start_daemon()
    demo = world.authorized_client(DEMO, "authorizedAlways")
    for minor in range(1000):
        demo.start_monitoring("r%d" % minor, DEMO_UUID, Major=dbus.UInt16(1), Minor=dbus.UInt16(minor))
    check(len(demo.prop("MonitoredRegions")) == 1000, "MonitoredRegions has %d regions" % len(demo.prop("MonitoredRegions")))
    invalidated = lambda: demo.collector.since(0, "PropertiesChanged", where=lambda s: "MonitoredRegions" in s.args[2])
    check(pump_until(lambda: len(invalidated()) >= 1000, 10),
          "%d PropertiesChanged invalidate MonitoredRegions, expected 1000" % len(invalidated()))
    carried = demo.collector.since(0, "PropertiesChanged", where=lambda s: "MonitoredRegions" in s.args[1])
    check(not carried, "%d PropertiesChanged still carry MonitoredRegions' value" % len(carried))
    xml = str(world.admin.bus.call_blocking("org.beacond", demo.path, "org.freedesktop.DBus.Introspectable",
                                            "Introspect", "", [], timeout=5))
    annotated = {p.get("name"): [a.get("value") for a in p.findall("annotation")
                                 if a.get("name") == "org.freedesktop.DBus.Property.EmitsChangedSignal"]
                 for i in ElementTree.fromstring(xml).findall("interface") for p in i.findall("property")}
    check(annotated.get("MonitoredRegions") == ["invalidates"] and annotated.get("RangedConstraints") == ["invalidates"],
          "EmitsChangedSignal annotations: %r" % annotated)
    world.alive()


TESTS = [
    ("1 introspection equals what is sent", test_introspection_equals_sent),
    ("2 docs/dbus-api.md's Python client runs", test_python_example),
    ("3 docs/dbus-api.md's busctl and gdbus commands run", test_shell_examples),
    ("4 refusals name the problem and escape what they echo", test_region_refusals),
    ("5 the fifo scanner logs every dropped line, rate limited", test_fifo_drops_are_logged),
    ("6 users and admin_group that do not exist are warnings", test_configuration_warnings),
    ("7 a region's RSSI hysteresis, on the real daemon", test_region_hysteresis),
    ("8 README.md's daemon commands run", test_readme_commands),
    ("9 docs/daemon.md's synopsis and config/README.md's --config-dir", test_daemon_synopsis),
    ("10 [monitoring] enter_rssi/absent_rssi apply to regions without their own", test_configured_hysteresis_default),
    ("11 a blocking client adds 1,000 regions; list properties are invalidated, not resent", test_many_regions_blocking_client),
]

if __name__ == "__main__":
    sys.exit(main(sys.argv, TESTS))
