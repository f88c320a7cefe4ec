#!/usr/bin/env python3
"""`beacond replay --json CAPTURE` done with the Python parsers people use today, for the whole-process comparison
in docs/performance.md ("Replay, the whole process"): the same btsnoop capture (datalink 1002, H4) read in
blocks, each LE Advertising Report's header decoded with struct, its AD bytes handed to the peer, and one JSON
line per iBeacon printed with the keys and the format beacond prints (time, address, uuid, major, minor, txPower,
rssi).

Peers:
  beacontools      beacontools.parse_packet(ad_bytes)
  bdt+ibeacon-ble  Home Assistant's path: bluetooth-data-tools' compiled GAP parser, a BluetoothServiceInfo, and
                   ibeacon-ble's iBeaconParser.parse

Usage (in .venv-bench, which scripts/bench/run-python-peers.sh creates):
  replay_peers.py --peer beacontools|bdt+ibeacon-ble CAPTURE > /dev/null
Prints the reports and iBeacons it handled, and the wall time, on standard error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import struct
import sys
import time
from datetime import datetime, timezone

from beacontools import IBeaconAdvertisement, parse_packet
from bluetooth_data_tools.gap import _uncached_parse_advertisement_bytes as parse_gap
from home_assistant_bluetooth import BluetoothServiceInfo
from ibeacon_ble import iBeaconParser

BTSNOOP_EPOCH_OFFSET_US = 0x00DCDDB30F2F8000
RECORD = struct.Struct(">IIIIq")


def records(path: str):
    """(timestamp µs since the Unix epoch, H4 packet) for each record, read in 1 MiB blocks."""
    with open(path, "rb") as file:
        header = file.read(16)
        if header[:8] != b"btsnoop\0" or struct.unpack(">I", header[12:16])[0] != 1002:
            sys.exit("%s: not a btsnoop 1002 capture" % path)
        pending = b""
        while True:
            block = file.read(1 << 20)
            pending += block
            offset = 0
            while len(pending) - offset >= 24:
                _original, included, _flags, _drops, ticks = RECORD.unpack_from(pending, offset)
                if len(pending) - offset - 24 < included:
                    break
                yield ticks - BTSNOOP_EPOCH_OFFSET_US, pending[offset + 24:offset + 24 + included]
                offset += 24 + included
            pending = pending[offset:]
            if not block:
                return


def reports(packet: bytes):
    """(address text, AD bytes, rssi) of each report of an LE Advertising Report event."""
    if len(packet) < 5 or packet[0] != 0x04 or packet[1] != 0x3E or packet[3] != 0x02:
        return
    count = packet[4]
    offset = 5
    for _ in range(count):
        if offset + 9 > len(packet):
            return
        address = packet[offset + 2:offset + 8]
        length = packet[offset + 8]
        ad = packet[offset + 9:offset + 9 + length]
        if offset + 10 + length > len(packet):
            return
        rssi = struct.unpack_from("b", packet, offset + 9 + length)[0]
        offset += 10 + length
        yield ":".join("%02X" % b for b in reversed(address)), ad, rssi


def iso(micros: int) -> str:
    return datetime.fromtimestamp(micros // 1_000_000, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") + ".%06dZ" % (micros % 1_000_000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peer", choices=["beacontools", "bdt+ibeacon-ble"], required=True)
    parser.add_argument("capture")
    arguments = parser.parse_args()
    started = time.monotonic()
    ibeacon = iBeaconParser()
    asyncio.run(ibeacon.async_setup())
    out = sys.stdout
    handled = found = 0
    for micros, packet in records(arguments.capture):
        for address, ad, rssi in reports(packet):
            handled += 1
            if arguments.peer == "beacontools":
                beacon = parse_packet(ad)
                if not isinstance(beacon, IBeaconAdvertisement):
                    continue
                uuid, major, minor, power = str(beacon.uuid).upper(), beacon.major, beacon.minor, beacon.tx_power
            else:
                name, uuids, service_data, manufacturer, _tx = parse_gap(ad)
                info = BluetoothServiceInfo(name=name or address, address=address, rssi=rssi,
                                            manufacturer_data=manufacturer, service_data=service_data,
                                            service_uuids=uuids, source="local")
                beacon = ibeacon.parse(info)
                if beacon is None:
                    continue
                uuid, major, minor, power = str(beacon.uuid).upper(), beacon.major, beacon.minor, beacon.power
            found += 1
            out.write(json.dumps({"time": iso(micros), "address": address, "uuid": uuid, "major": major,
                                  "minor": minor, "txPower": power, "rssi": rssi}) + "\n")
    out.flush()
    print("%s: %d reports, %d iBeacons in %.3f s" % (arguments.peer, handled, found, time.monotonic() - started),
          file=sys.stderr)


if __name__ == "__main__":
    main()
