"""The real flat's drive (examples/flat-calib2021/drive.csv, derived from the survey of M. Kolakowski's "BLE RSS
dataset for fingerprinting radio map calibration", CC BY 4.0; see Tests/Fixtures/flat-calib2021/README.md) replayed as
six ESPresense nodes, r1 ... r6, publishing to a broker at the rows' own times: what the mqtt test and `make run` feed
beacond with a floor plan."""
import csv
import json
import math
import os
import threading
import time

import paho.mqtt.client as paho

EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "flat-calib2021")
RECEIVERS = ["r1", "r2", "r3", "r4", "r5", "r6"]


def read_drive(path=os.path.join(EXAMPLE, "drive.csv")):
    """The drive's rows: t (s), x, y, room ("" between rooms) and {receiver: rssi} for those that heard it."""
    with open(path) as file:
        lines = [line for line in file if not line.startswith("#")]
    rows = []
    for record in csv.DictReader(lines):
        heard = {r: float(record[r]) for r in RECEIVERS if record[r]}
        rows.append({"t": float(record["t"]), "x": float(record["x"]), "y": float(record["y"]), "room": record["room"],
                     "rssi": heard})
    return rows


class FlatReplay:
    """Publishes each row's readings of one beacon (`device`, ESPresense's id) from the receivers that heard it, in
    ESPresense's format, at the row's time from `start()`; `current` is the row last published (the robot's truth)."""

    def __init__(self, port, device, rows=None, seconds=None):
        self.rows = rows or read_drive()
        if seconds is not None:
            self.rows = [row for row in self.rows if row["t"] <= seconds]
        self.device = device
        self.client = paho.Client(client_id="flat-replay-%d" % os.getpid(), protocol=paho.MQTTv311)
        self.client.connect("127.0.0.1", port, keepalive=30)
        self.client.loop_start()
        for receiver in RECEIVERS:
            self.client.publish("espresense/rooms/%s/status" % receiver, "online", qos=1, retain=True).wait_for_publish()
        self.current = None
        self.started = None
        self.thread = None
        self.stopping = False

    def start(self):
        self.started = time.monotonic()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        for row in self.rows:
            delay = self.started + row["t"] - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            if self.stopping:
                return
            for receiver, rssi in row["rssi"].items():
                reading = {"id": self.device, "rssi@1m": -59, "rssi": rssi, "distance": round(10 ** ((-59 - rssi) / 27), 2)}
                self.client.publish("espresense/devices/%s/%s" % (self.device, receiver), json.dumps(reading))
            self.current = row

    def elapsed(self):
        return time.monotonic() - self.started

    def done(self):
        return self.thread is not None and not self.thread.is_alive()

    def close(self):
        self.stopping = True
        if self.thread:
            self.thread.join()
        self.client.loop_stop()
        self.client.disconnect()


def error(position, row):
    return math.hypot(position["X"] - row["x"], position["Y"] - row["y"])
