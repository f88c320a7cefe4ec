#!/usr/bin/env python3
"""What a beacond node publishing to MQTT costs (docs/performance.md, "MQTT publishing"):

- messages per second on `espresense/devices/#` while the node hears 2,700 adverts/s (one controller's ceiling)
  from 100 beacons, with `publish = ["*"]` and the default `publish_interval = 1` (target: at most 100/s, one
  per beacon per second);
- the CPU of beacond (utime+stime from /proc) and of the broker over the same window, and with no traffic.

The real beacond on a private bus, fed through its fifo scanner, with no D-Bus client at all (publishing alone
makes it scan); a private Mosquitto on loopback; paho-mqtt counts. Needs root. Usage:
scripts/bench/mqtt-publish.py [BEACOND]   (default .build/release/beacond)
"""
import importlib.util
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "Tests", "Integration"))
import harness  # noqa: E402
import mqtt_test  # noqa: E402

spec = importlib.util.spec_from_file_location("daemon_load", os.path.join(HERE, "daemon-load.py"))
daemon_load = importlib.util.module_from_spec(spec)
spec.loader.exec_module(daemon_load)

WINDOW = 10.0
RATE = 2700


def main():
    beacond = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".build/release/beacond")
    broker = mqtt_test.Broker()
    count = {"devices": 0}
    lock = threading.Lock()
    listener = mqtt_test.paho.Client(client_id="bench-%d" % os.getpid())

    def received(client, data, message):
        with lock:
            count["devices"] += 1
    listener.on_message = received
    listener.on_connect = lambda client, data, flags, rc: client.subscribe("espresense/devices/#")
    listener.connect("127.0.0.1", broker.port)
    listener.loop_start()
    settings = ('[mqtt]\nbroker = "mqtt://127.0.0.1:%d"\nroom = "bench"\npublish = ["*"]\n' % broker.port)
    world = harness.World(beacond, settings=settings)
    try:
        world.start_daemon()
        pid = world.daemon.pid
        feeder = world.feeder()
        feeder.wait_for_fifo()
        print("beacond %s, pid %d; mosquitto pid %d" % (beacond, pid, broker.process.pid))
        harness.pump_for(1.0)
        cpu, broker_cpu = daemon_load.cpu_seconds(pid), daemon_load.cpu_seconds(broker.process.pid)
        harness.pump_for(WINDOW)
        print("idle (scanning, connected, nothing heard): beacond CPU %.2f %%, mosquitto CPU %.2f %% of one core"
              % ((daemon_load.cpu_seconds(pid) - cpu) / WINDOW * 100,
                 (daemon_load.cpu_seconds(broker.process.pid) - broker_cpu) / WINDOW * 100))
        flood = daemon_load.Flood(world.fifo, RATE)
        flood.start()
        harness.pump_for(2.0)
        with lock:
            before = count["devices"]
        cpu, broker_cpu, written = daemon_load.cpu_seconds(pid), daemon_load.cpu_seconds(broker.process.pid), flood.written
        harness.pump_for(WINDOW)
        with lock:
            messages = count["devices"] - before
        adverts = (flood.written - written) / WINDOW
        flood.stop()
        status = world.admin.status()
        print("%.0f adverts/s from 100 beacons: %.1f messages/s published (target <= 100), beacond CPU %.2f %%, "
              "mosquitto CPU %.2f %% of one core; %d readings published in all, %d not sent"
              % (adverts, messages / WINDOW, (daemon_load.cpu_seconds(pid) - cpu) / WINDOW * 100,
                 (daemon_load.cpu_seconds(broker.process.pid) - broker_cpu) / WINDOW * 100,
                 int(status["MQTTReadingsPublished"]), int(status["MQTTReadingsNotSent"])))
    finally:
        world.close()
        listener.loop_stop()
        broker.close()


if __name__ == "__main__":
    main()
