"""examples/python run as a user runs them (`BEACOND_BUS` points them at the test's beacond), through an
administrator's grant, a beacon's entry and exit, and a kill -9 of beacond between the two."""
import asyncio
import os
import subprocess
import sys

import pytest

from conftest import DEMO, REPOSITORY, Beacon, until

EXAMPLES = os.path.join(REPOSITORY, "examples", "python")


class Program:
    def __init__(self, world, name):
        environment = dict(os.environ, BEACOND_BUS=world.address, PYTHONUNBUFFERED="1")
        self.process = subprocess.Popen([sys.executable, os.path.join(EXAMPLES, name), DEMO],
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=environment)
        self.lines = []
        os.set_blocking(self.process.stdout.fileno(), False)

    def read(self):
        while True:
            line = self.process.stdout.readline()
            if not line:
                break
            self.lines.append(line.rstrip("\n"))
        return self.lines

    def says(self, text):
        return any(text in line for line in self.read())

    def stop(self):
        self.process.kill()
        self.process.wait(timeout=10)
        return self.read()


@pytest.mark.parametrize("name, entered, exited", [
    ("monitor_region.py", "entered lobby", "exited lobby"),
    ("monitor_events.py", "lobby inside", "lobby outside"),
])
async def test_example(world, name, entered, exited):
    world.start_daemon()
    program = Program(world, name)
    try:
        await until(lambda: DEMO in world.admin("ListPendingRequests", "uu", 0, 10),
                    "the example's request for Always")
        world.grant()
        beacon = Beacon(world)
        beacon.on()
        await until(lambda: program.says(entered), "%r from %s: %r" % (entered, name, program.lines))
        world.kill_daemon()
        world.start_daemon()
        await beacon.off()
        await until(lambda: program.says(exited), "%r after the restart: %r" % (exited, program.lines))
        await asyncio.sleep(3)  # a silence window longer than exit_timeout: nothing may repeat
        lines = program.stop()
        assert sum(entered in line for line in lines) == 1, lines
        assert sum(exited in line for line in lines) == 1, lines
    finally:
        if program.process.poll() is None:
            program.stop()
