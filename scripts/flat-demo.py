#!/usr/bin/python3
"""`make run`, part 4: a minute of a real flat's drive (examples/flat-calib2021: a robot with a BLE tag, six receivers,
derived from M. Kolakowski's "BLE RSS dataset for fingerprinting radio map calibration", CC BY 4.0) replayed as six
ESPresense nodes through a private Mosquitto into beacond with the flat's floor plan; a client ranges the tag with
`beaconctl client ... range --json`, and each second's room and position are printed beside the robot's true ones.

    flat-demo.py BEACOND BEACONCTL [SECONDS]
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Integration"))
import flat_replay  # noqa: E402

UUID = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
DEVICE = "iBeacon:%s-1-2" % UUID.lower()
APP = "org.example.FlatDemo"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main():
    beacond, beaconctl = sys.argv[1], sys.argv[2]
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 60
    work = tempfile.mkdtemp(prefix="beacond-flat-")
    processes = []
    try:
        port = free_port()
        with open(os.path.join(work, "mosquitto.conf"), "w") as file:
            file.write("listener %d 127.0.0.1\nallow_anonymous true\npersistence false\n" % port)
        processes.append(subprocess.Popen(["mosquitto", "-c", os.path.join(work, "mosquitto.conf")],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        with open(os.path.join(work, "bus.conf"), "w") as file:
            file.write('<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" '
                       '"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd"><busconfig><type>session</type>'
                       '<listen>unix:path=%s/bus</listen><auth>EXTERNAL</auth><policy context="default">'
                       '<allow send_destination="*"/><allow receive_sender="*"/><allow own="*"/></policy></busconfig>' % work)
        bus = subprocess.Popen(["dbus-daemon", "--config-file=" + os.path.join(work, "bus.conf"), "--nofork",
                                "--print-address=1"], stdout=subprocess.PIPE, text=True)
        processes.append(bus)
        address = bus.stdout.readline().strip()
        config = os.path.join(work, "config")
        os.makedirs(os.path.join(config, "apps.d"))
        with open(os.path.join(config, "beacond.toml"), "w") as file:
            file.write('[authorization]\nprompt = "when-in-use"\n\n[mqtt]\nbroker = "mqtt://127.0.0.1:%d"\n'
                       'room = "collector"\npublish = []\n' % port)
        with open(os.path.join(config, "apps.d", "flat.toml"), "w") as file:
            file.write('app_id = "%s"\nusers = ["%s"]\nwhen_in_use_usage = "Shows where the tag is."\n'
                       % (APP, subprocess.run(["id", "-un"], capture_output=True, text=True).stdout.strip()))
        shutil.copy(os.path.join(flat_replay.EXAMPLE, "floorplan.toml"), os.path.join(config, "floorplan.toml"))
        print("$ cat DEMO-CONFIG/floorplan.toml   (the flat's rooms and receivers r1 ... r6, calibrated at two spots a room)")
        with open(os.path.join(config, "floorplan.toml")) as file:
            print("".join(line for line in file if not line.startswith("#")).strip().replace("\n\n", "\n"))
        processes.append(subprocess.Popen(
            [beacond, "--bus", address, "--config-dir", config, "--state-dir", os.path.join(work, "state"),
             "--scanner", "fifo:" + os.path.join(work, "fifo"), "--log-level", "warning"],
            stderr=open(os.path.join(work, "beacond.log"), "w")))
        for _ in range(100):
            if subprocess.run([beaconctl, "--bus", address, "status"], capture_output=True, timeout=10).returncode == 0:
                break
            time.sleep(0.1)
        client = subprocess.Popen([beaconctl, "--bus", address, "client", "--app", APP, "range", UUID, "--json"],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        processes.append(client)
        latest = {}

        def read():
            for line in client.stdout:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                beacons = event.get("Data", {}).get("Beacons") or []
                if event.get("Kind") == "DidRangeBeacons" and beacons:
                    latest["beacon"] = beacons[0]
        threading.Thread(target=read, daemon=True).start()
        replay = flat_replay.FlatReplay(port, DEVICE, seconds=seconds)
        print()
        print("$ beaconctl client --app %s range %s --json   (while the drive replays; one line a second)" % (APP, UUID))
        print("   t   robot: x     y  room         | beacond: x     y     ±   room         error")
        replay.start()
        errors, right, judged = [], 0, 0
        tick = 1
        while not replay.done():
            time.sleep(max(0, replay.started + tick - time.monotonic()))
            tick += 1
            row, beacon = replay.current, latest.get("beacon")
            if row is None:
                continue
            line = "%4d  %5.2f %5.2f  %-12s |" % (tick - 1, row["x"], row["y"], row["room"] or "(doorway)")
            position = (beacon or {}).get("Position")
            if position:
                error = flat_replay.error(position, row)
                room = beacon.get("Room") or "(unknown)"
                line += " %5.2f %5.2f %5.2f  %-12s %5.2f m" % (position["X"], position["Y"], position["Accuracy"], room, error)
                errors.append(error)
                if row["room"]:
                    judged += 1
                    right += room == row["room"]
            else:
                line += " (not placed yet)"
            print(line, flush=True)
        if errors:
            errors.sort()
            print("%d seconds placed: median error %.2f m, right room %d of %d seconds (the smoothing and the room's "
                  "3 s dwell lag a walking robot; docs/position.md has the whole drive's figures)"
                  % (len(errors), errors[len(errors) // 2], right, judged))
        replay.close()
    finally:
        for process in reversed(processes):
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
