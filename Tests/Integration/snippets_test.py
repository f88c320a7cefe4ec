#!/usr/bin/python3
"""Every Swift and Python code block of README.md and docs/clients.md, built and run as a reader would copy it,
against the real beacond on a private bus (issue: "snippets that break when copied").

    snippets_test.py BEACOND BUILD_DIR PYTHON [-kWORDS ...]

BUILD_DIR: the `swift build` directory holding BeaconLocation's objects (.build/debug). PYTHON: an interpreter with
beacon_location installed (scripts/python-client-test.sh leaves one in .venv-clients).

- A Swift manifest block (`import PackageDescription`) becomes a package next to a link named as its
  `.package(path:)` says, pointing at this repository: `swift package describe` must accept it (the package's
  identity) and every `.product(name:)` it names must be one of this package's library products.
- A Swift block with `import BeaconLocation` is a whole program: built with swiftc against BeaconLocation's objects
  and run. A Python block with `asyncio.run` is a whole program: run.
- Any other block is a fragment: it runs inside a function given `manager` (a LocationManager), `monitor` (a
  Monitor), `uuid`, `door` (a delegate), and in Python `MyDelegate` and every name of beacon_location, for the app
  org.example.BeaconDemo, granted Always, with its beacon advertising. It passes when it returns, or is still
  waiting for events after printing one; it fails when it throws.

The README's programs (the shortest monitors) are run from before beacond starts, through a pending request, the
grant and an entry: each must print why it waits (beacond not running on this bus, the administrator's answer
awaited), then `door ready` and `door inside`. Prints PASS/FAIL per test, then "N passed, N failed".
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import daemon_test
from harness import MANAGER, MANAGER_PATH, DEMO_UUID, TestFailure, check, pump_until, remove_everything

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DOCUMENTS = ["README.md", "docs/clients.md"]
BEACON_DEMO = "org.example.BeaconDemo"
DOOR = "com.example.door"
APPS = {
    "beacondemo.toml": 'app_id = "%s"\nusers = ["root"]\n'
                       'when_in_use_usage = "Shows the beacons near you."\n'
                       'always_usage = "Tells you when you enter the lobby."\n\n'
                       '[devices]\nalice-phone = "irk:0c1d2e3f405162738495a6b7c8d9eafb"\n' % BEACON_DEMO,
    "door.toml": 'app_id = "%s"\nusers = ["root"]\n'
                 'when_in_use_usage = "Shows which door beacon you are near."\n'
                 'always_usage = "Unlocks the door when you arrive, even when the app is closed."\n' % DOOR,
}
# Bounds for what takes a second or two; reaching one is a failure.
WAIT = 30
# How long a fragment that waits for events runs before it counts as waiting (it must have printed by then).
FRAGMENT_RUN = 8

SWIFT_PRELUDE = """import BeaconLocation
import Foundation

let uuid = UUID(uuidString: "UUID_TEXT")!
final class SnippetDelegate: LocationManagerDelegate {}
let door = SnippetDelegate()

func snippet(manager: LocationManager, monitor: Monitor) async throws {
FRAGMENT
}

do {
    let manager = try await LocationManager(appID: "APP_ID", delegate: door)
    let monitor = try await Monitor(appID: "APP_ID")
    try await snippet(manager: manager, monitor: monitor)
    print("snippet: done")
} catch {
    print("snippet: failed: \\(error)")
    exit(1)
}
""".replace("UUID_TEXT", DEMO_UUID).replace("APP_ID", BEACON_DEMO)

PYTHON_PRELUDE = """import asyncio, sys
from beacon_location import *

uuid = "UUID_TEXT"


class MyDelegate:
    pass


async def snippet(manager, monitor):
FRAGMENT


async def main():
    manager = await LocationManager.connect("APP_ID", delegate=MyDelegate())
    monitor = await Monitor.open("APP_ID")
    await snippet(manager, monitor)
    print("snippet: done", flush=True)

try:
    asyncio.run(main())
except Exception as error:
    print("snippet: failed: %r" % error, flush=True)
    sys.exit(1)
""".replace("UUID_TEXT", DEMO_UUID).replace("APP_ID", BEACON_DEMO)


def code_blocks():
    """(document, line, language, text) of every swift and python block, in order."""
    blocks = []
    for document in DOCUMENTS:
        with open(os.path.join(ROOT, document)) as file:
            text = file.read()
        for match in re.finditer(r"^```(swift|python)\n(.*?)^```", text, re.S | re.M):
            blocks.append((document, text[:match.start()].count("\n") + 1, match.group(1), match.group(2)))
    return blocks


def kind(language, text):
    if language == "swift":
        if "import PackageDescription" in text:
            return "manifest"
        return "program" if "import BeaconLocation" in text else "fragment"
    return "program" if "asyncio.run(" in text else "fragment"


def indent(text):
    return "\n".join(("    " + line) if line.strip() else "" for line in text.rstrip("\n").split("\n"))


class Snippets:
    def __init__(self, beacond, build_dir, python):
        self.beacond = beacond
        self.build_dir = os.path.abspath(build_dir)
        self.python = python
        self.directory = tempfile.mkdtemp(prefix="beacond-snippets-")
        os.chmod(self.directory, 0o755)
        self.count = 0

    def path(self, name):
        self.count += 1
        return os.path.join(self.directory, "%02d-%s" % (self.count, name))

    def build_swift(self, source, label):
        """The program built with swiftc against BeaconLocation's objects, as its package would link it."""
        directory = self.path(label)
        os.makedirs(directory)
        main = os.path.join(directory, "main.swift")
        with open(main, "w") as file:
            file.write(source)
        objects = []
        for module in ("BeaconLocation", "DBus", "BeacondAPI", "MainLoopKit"):
            module_dir = os.path.join(self.build_dir, module + ".build")
            objects += sorted(os.path.join(module_dir, name) for name in os.listdir(module_dir) if name.endswith(".o"))
        cflags = subprocess.run(["pkg-config", "--cflags", "dbus-1"], capture_output=True, text=True, check=True).stdout
        command = (["swiftc", "-swift-version", "6", "-I", os.path.join(self.build_dir, "Modules"),
                    "-Xcc", "-fmodule-map-file=" + os.path.join(ROOT, "Sources/CDBus/module.modulemap")]
                   + [part for flag in cflags.split() for part in ("-Xcc", flag)]
                   + [main] + objects + ["-ldbus-1", "-o", os.path.join(directory, "program")])
        result = subprocess.run(command, capture_output=True, text=True, timeout=300)
        check(result.returncode == 0, "%s does not build:\n%s\n%s" % (label, source, result.stderr[-3000:]))
        return ["stdbuf", "-oL", os.path.join(directory, "program")]

    def python_program(self, source, label):
        path = self.path(label) + ".py"
        with open(path, "w") as file:
            file.write(source)
        compiled = subprocess.run([self.python, "-m", "py_compile", path], capture_output=True, text=True)
        check(compiled.returncode == 0, "%s is not Python:\n%s\n%s" % (label, source, compiled.stderr))
        return [self.python, "-u", path]

    def start(self, command, bus, label):
        log = self.path(label) + ".log"
        output = open(log, "w")
        environment = dict(os.environ, BEACOND_BUS=bus)
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=environment,
                                   start_new_session=True)
        output.close()
        return Program(process, log)

    def close(self):
        shutil.rmtree(self.directory, ignore_errors=True)


class Program:
    def __init__(self, process, log):
        self.process = process
        self.log = log

    @property
    def lines(self):
        with open(self.log, errors="replace") as file:
            return file.read().splitlines()

    def stop(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def wait_line(program, prefix, what):
    if not pump_until(lambda: any(line.startswith(prefix) for line in program.lines) or program.process.poll() is not None, WAIT):
        pass
    check(any(line.startswith(prefix) for line in program.lines),
          "%s: no line starting %r within %d s (exit %s); it printed:\n%s"
          % (what, prefix, WAIT, program.process.poll(), "\n".join(program.lines[-20:])))


# MARK: the tests

def test_blocks_are_known(suite):
    """The blocks this test runs: the README's two shortest monitors, the manifest, and clients.md's programs and
    fragments, each of a kind this test knows how to run (a new block is run too, by its kind)."""
    blocks = code_blocks()
    kinds = [(document, language, kind(language, text)) for document, _, language, text in blocks]
    check(("README.md", "swift", "program") in kinds and ("README.md", "python", "program") in kinds,
          "README.md's shortest monitors are not whole programs: %r" % kinds)
    check(("docs/clients.md", "swift", "manifest") in kinds, "docs/clients.md shows no Package.swift: %r" % kinds)
    check(len(blocks) >= 9, "only %d blocks found: %r" % (len(blocks), kinds))
    suite.notes.append("%d blocks: %s" % (len(blocks), ", ".join("%s:%d %s %s" % (d, line, l, kind(l, t))
                                                                  for d, line, l, t in blocks)))


def test_manifests(suite):
    """A Package.swift block is accepted by SwiftPM next to this repository linked where its .package(path:)
    points, and names only products this package has."""
    products = set(re.findall(r'\.library\(name: "([^"]+)"', open(os.path.join(ROOT, "Package.swift")).read()))
    manifests = [text for _, _, language, text in code_blocks() if language == "swift" and kind(language, text) == "manifest"]
    check(manifests, "no manifest block")
    for text in manifests:
        paths = re.findall(r'\.package\(path: "([^"]+)"\)', text)
        check(len(paths) == 1, "the manifest names %d path dependencies: %s" % (len(paths), text))
        root = suite.snippets.path("package")
        app = os.path.join(root, "app")
        os.makedirs(os.path.join(app, "Sources"))
        for target in re.findall(r'\.executableTarget\(name: "([^"]+)"', text):
            os.makedirs(os.path.join(app, "Sources", target), exist_ok=True)
            with open(os.path.join(app, "Sources", target, "main.swift"), "w") as file:
                file.write("print(1)\n")
        os.symlink(ROOT, os.path.normpath(os.path.join(app, paths[0])))
        with open(os.path.join(app, "Package.swift"), "w") as file:
            file.write(text)
        result = subprocess.run(["swift", "package", "describe", "--type", "json"], cwd=app, capture_output=True,
                                text=True, timeout=120)
        check(result.returncode == 0, "SwiftPM refuses the manifest:\n%s\n%s" % (text, result.stderr[-2000:]))
        described = json.loads(result.stdout)
        check(described["dependencies"][0]["path"].endswith(os.path.basename(paths[0])), "dependency: %r" % described)
        named = set(re.findall(r'\.product\(name: "([^"]+)"', text))
        check(named and named <= products, "the manifest names products %r; this package has %r" % (named, products))


def test_readme_programs(suite):
    """README.md's shortest monitors (Swift and Python) print why nothing comes, with the fix, from before beacond
    starts (not running, naming this bus and how to start beacond on it), through the pending request (the
    administrator's command), then 'door ready' once granted and 'door inside' when the beacon comes; then denied
    (the command that allows it), granted while beacond cannot scan (its reason), and ready again once it scans,
    with one entry in all."""
    world = suite.world(apps=APPS)
    programs = []
    for document, line, language, text in code_blocks():
        if document == "README.md" and kind(language, text) == "program":
            label = "readme-%s" % language
            command = suite.snippets.build_swift(text, label) if language == "swift" else suite.snippets.python_program(text, label)
            programs.append((label, suite.snippets.start(command, world.address, label)))
    check(len(programs) == 2, "README.md has %d programs, expected the Swift and the Python monitor" % len(programs))
    try:
        for label, program in programs:
            wait_line(program, "door waiting: beacond is not running on ", "%s before beacond starts" % label)
            said = [line for line in program.lines if line.startswith("door waiting: beacond is not running")][-1]
            check(world.address in said and "beacond --bus" in said and "systemctl" not in said,
                  "%s: not running, but not said where or how to start it on this bus: %s" % (label, said))
        world.start_daemon()
        for label, program in programs:
            wait_line(program, "door waiting: waiting for an administrator", "%s while its request is pending" % label)
            pending = [line for line in program.lines if line.startswith("door waiting: waiting for an administrator")][-1]
            check("beaconctl auth grant %s always" % DOOR in pending, "%s: no fix in %r" % (label, pending))
        world.admin.set_authorization(DOOR, "authorizedAlways")
        for label, program in programs:
            wait_line(program, "door ready", "%s once granted" % label)
        feeder = world.feeder()
        feeder.start()
        for label, program in programs:
            wait_line(program, "door inside", "%s when the beacon comes" % label)
            check(program.lines.count("door inside") == 1, "%s: %r" % (label, program.lines))
            check(program.process.poll() is None, "%s ended: %r" % (label, program.lines))
        feeder.stop()
        world.admin.set_authorization(DOOR, "denied")
        for label, program in programs:
            wait_line(program, "door waiting: %s is denied" % DOOR, "%s once denied" % label)
        # Nobody monitors now, so beacond stops scanning; a directory where its FIFO was makes the next start fail.
        check(pump_until(lambda: not world.admin.get(MANAGER_PATH, MANAGER, "Scanning"), WAIT), "beacond still scans")
        os.unlink(world.fifo)
        os.mkdir(world.fifo)
        world.admin.set_authorization(DOOR, "authorizedAlways")
        for label, program in programs:
            wait_line(program, "door waiting: beacond cannot scan: ", "%s while beacond cannot scan" % label)
        check(world.admin.get(MANAGER_PATH, MANAGER, "ScannerState").startswith("failed: "), "the scanner did not fail")
        os.rmdir(world.fifo)
        os.mkfifo(world.fifo, 0o660)
        # beacond tries a failed scanner again every 30 s.
        def ready_after_scanner():
            for _, program in programs:
                lines = program.lines
                failed = max(i for i, line in enumerate(lines) if line.startswith("door waiting: beacond cannot scan"))
                if "door ready" not in lines[failed + 1:]:
                    return False
            return True
        check(pump_until(ready_after_scanner, 90), "not ready again once beacond scans: %r" % [p.lines for _, p in programs])
        for label, program in programs:
            check(program.lines.count("door inside") == 1, "%s: one entry, not one per grant: %r" % (label, program.lines))
        for label, program in programs:
            suite.notes.append("%s printed: %s" % (label, " | ".join(program.lines)))
    finally:
        for _, program in programs:
            program.stop()


def run_block(suite, world, document, line, language, text, what):
    """Builds and runs one block of docs/clients.md; it must not fail, and must return or wait after printing."""
    block_kind = kind(language, text)
    label = "clients-%d-%s-%s-%s" % (line, language, block_kind, what)
    if block_kind == "program":
        source = text
    elif language == "swift":
        source = SWIFT_PRELUDE.replace("FRAGMENT", indent(text))
    else:
        source = PYTHON_PRELUDE.replace("FRAGMENT", indent(text))
    command = suite.snippets.build_swift(source, label) if language == "swift" else suite.snippets.python_program(source, label)
    if block_kind == "program":
        command = command + [BEACON_DEMO, DEMO_UUID]
    program = suite.snippets.start(command, world.address, label)
    try:
        pump_until(lambda: program.process.poll() is not None, FRAGMENT_RUN)
        lines = program.lines
        failed = [line for line in lines if "failed" in line or "Error" in line or "Traceback" in line]
        if program.process.poll() is None:
            check(lines and not failed, "%s (%s:%d) printed nothing in %d s, or failed: %r\n%s"
                  % (label, document, line, FRAGMENT_RUN, lines, source))
        else:
            check(program.process.returncode == 0 and "snippet: done" in lines and not failed,
                  "%s (%s:%d) exited %d: %r\n%s" % (label, document, line, program.process.returncode, lines, source))
    finally:
        program.stop()
    return label


def test_clients_programs_and_fragments(suite):
    """docs/clients.md's whole programs and fragments, each built (Swift) and run against beacond for
    org.example.BeaconDemo with its beacon advertising: none throws, and each returns or waits for events after
    printing one. First, while the app's request waits for an administrator, the blocks that request authorization
    themselves (they must not start monitoring before it is given: NotAuthorized); then every block, granted."""
    world = suite.world(apps=APPS)
    world.start_daemon()
    feeder = world.feeder()
    feeder.start()
    blocks = [block for block in code_blocks() if block[0] == "docs/clients.md" and kind(block[2], block[3]) != "manifest"]
    ran = []
    for document, line, language, text in blocks:
        if re.search(r"request_?[aA]lways_?[aA]uthorization", text):
            ran.append(run_block(suite, world, document, line, language, text, "pending"))
    check(len(ran) >= 2, "no block requests authorization: %r" % ran)
    world.admin.set_authorization(BEACON_DEMO, "authorizedAlways")
    for document, line, language, text in blocks:
        ran.append(run_block(suite, world, document, line, language, text, "granted"))
    world.alive()
    check(len(ran) >= 8, "ran only %r" % ran)
    suite.notes.append("ran " + ", ".join(ran))


TESTS = [
    ("1 the blocks are of kinds this test runs", test_blocks_are_known),
    ("2 Package.swift blocks are accepted by SwiftPM", test_manifests),
    ("3 README.md's shortest monitors say why nothing comes (down, pending, denied, cannot scan), then enter once",
     test_readme_programs),
    ("4 docs/clients.md's programs and fragments build and run", test_clients_programs_and_fragments),
]


def main(argv):
    arguments = [argument for argument in argv[1:] if not argument.startswith("-k")]
    selected = [argument[2:] for argument in argv[1:] if argument.startswith("-k")]
    if len(arguments) != 3:
        sys.exit("usage: snippets_test.py BEACOND BUILD_DIR PYTHON [-kWORDS]")
    beacond, build_dir, python = arguments
    if os.geteuid() != 0:
        sys.exit("snippets_test.py needs root: the apps are declared for user root")
    snippets = Snippets(os.path.abspath(beacond), build_dir, python)
    # daemon_test's suite (its worlds, closed after each test), with the apps the blocks name and the snippets.
    suite = daemon_test.Suite(os.path.abspath(beacond), os.path.join(os.path.abspath(build_dir), "beaconctl"))
    suite.snippets = snippets
    passed = failed = 0
    try:
        for name, test in TESTS:
            if selected and not any(word in name for word in selected):
                continue
            suite.notes = []
            started = time.monotonic()
            try:
                test(suite)
                passed += 1
                print("PASS  %s (%.1f s)" % (name, time.monotonic() - started), flush=True)
            except TestFailure as failure:
                failed += 1
                print("FAIL  %s (%.1f s): %s" % (name, time.monotonic() - started, failure), flush=True)
            except Exception as error:
                failed += 1
                print("FAIL  %s: unexpected %r" % (name, error), flush=True)
                import traceback
                traceback.print_exc()
            finally:
                for note in suite.notes:
                    print("      %s" % note, flush=True)
                suite.close_worlds()
    finally:
        snippets.close()
        remove_everything()
    print("%d passed, %d failed" % (passed, failed), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
