#!/usr/bin/env python3
"""Time the Python iBeacon parsers people use today on the frames beacond-bench decodes.

Reads the dump written by `beacond-bench decode --dump-frames PATH` (the distinct LE Meta events
of the corpus and the AD bytes of their complete reports), checks every peer's verdict frame by
frame against Swift's, then times each peer over the AD frames.

Peers:
  beacontools   `beacontools.parse_packet(ad_bytes)`, given the AD bytes (what its scanner passes).
  ibeacon-ble   `iBeaconParser().parse(service_info)`, Home Assistant's iBeacon parser, given a
                prebuilt BluetoothServiceInfo (manufacturer data already cut out, as Home Assistant
                hands it over); AD parsing is NOT timed here, which favours this peer.
  bdt+ibeacon-ble  the same plus the AD parsing Home Assistant does before it:
                bluetooth-data-tools' compiled GAP parser (uncached) and the BluetoothServiceInfo
                construction, per frame: the like-for-like peer of Swift's parse on AD bytes.

With --swift-json (the output of `beacond-bench decode --json`) it prints the side-by-side table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import sys
import time
from dataclasses import dataclass
from importlib.metadata import version
from typing import Callable

import aiooui
from beacontools import IBeaconAdvertisement, parse_packet
from bluetooth_data_tools.gap import _uncached_parse_advertisement_bytes as parse_gap
from home_assistant_bluetooth import BluetoothServiceInfo
from ibeacon_ble import BANNED_UUIDS, iBeaconParser

APPLE = 76


@dataclass
class Frame:
    ad: bytes
    swift_ibeacon: bool
    address: str
    rssi: int


def load(path: str) -> tuple[list[bytes], list[Frame], dict[str, int]]:
    events: list[bytes] = []
    frames: list[Frame] = []
    totals: dict[str, int] = {}
    with open(path, encoding="ascii") as dump:
        for line in dump:
            parts = line.split()
            if not parts:
                continue
            if parts[0] == "E":
                events.append(bytes.fromhex(parts[1]))
            elif parts[0] == "A":
                ad = b"" if parts[1] == "-" else bytes.fromhex(parts[1])
                frames.append(Frame(ad, parts[2] == "1", parts[3], int(parts[4])))
            elif parts[:2] == ["#", "totals"]:
                totals = {k: int(v) for k, v in (p.split("=") for p in parts[2:])}
    if totals.get("ad_frames") != len(frames) or totals.get("events") != len(events):
        sys.exit(f"{path}: dump is incomplete (totals {totals}, read {len(events)} events, {len(frames)} frames)")
    return events, frames, totals


def service_info(frame: Frame) -> BluetoothServiceInfo:
    """What Home Assistant builds for a raw advertisement (habluetooth): GAP-parsed fields."""
    local_name, service_uuids, service_data, manufacturer_data, _tx = parse_gap(frame.ad)
    return BluetoothServiceInfo(
        name=local_name or frame.address, address=frame.address, rssi=frame.rssi,
        manufacturer_data=manufacturer_data, service_data=service_data,
        service_uuids=service_uuids, source="local")


def make_peers(frames: list[Frame]) -> dict[str, tuple[Callable[[object], object], list[object]]]:
    """Each peer: a call that returns the iBeacon or None, and its per-frame inputs."""
    parser = iBeaconParser()
    asyncio.run(parser.async_setup())  # loads the OUI table its vendor lookup needs
    ads = [f.ad for f in frames]

    def with_gap(frame: Frame) -> object:
        return parser.parse(service_info(frame))

    def beacontools_ibeacon(ad: bytes) -> object:
        found = parse_packet(ad)
        return found if isinstance(found, IBeaconAdvertisement) else None

    return {
        "beacontools parse_packet": (beacontools_ibeacon, ads),
        "ibeacon-ble parse": (parser.parse, [service_info(f) for f in frames]),
        "bdt+ibeacon-ble": (with_gap, frames),
    }


def check(name: str, call: Callable[[object], object], inputs: list[object], frames: list[Frame]) -> dict:
    """Frame-by-frame verdicts against Swift's, with the reason for every disagreement."""
    found = errors = 0
    disagreements: list[dict] = []
    for frame, item in zip(frames, inputs):
        try:
            result = call(item)
            error = None
        except Exception as exc:  # a peer raising on real frames is a finding, not a crash
            result, error = None, f"{type(exc).__name__}: {exc}"
            errors += 1
        python_ibeacon = result is not None
        found += python_ibeacon
        if python_ibeacon != frame.swift_ibeacon or error:
            disagreements.append({"ad": frame.ad.hex(), "swift": frame.swift_ibeacon,
                                  "python": python_ibeacon, "why": error or explain(name, frame)})
    return {"ibeacons": found, "exceptions": errors, "disagreements": disagreements}


def ad_structures(ad: bytes) -> list[tuple[int, bytes]]:
    """(type, payload) of each AD structure, stopping where Swift's parser stops."""
    structures, offset = [], 0
    while offset < len(ad) and ad[offset] != 0 and offset + 1 + ad[offset] <= len(ad):
        end = offset + 1 + ad[offset]
        structures.append((ad[offset + 1], ad[offset + 2:end]))
        offset = end
    return structures


def explain(name: str, frame: Frame) -> str:
    """Why a peer disagrees with Swift on a frame, when the reason is known."""
    structures = ad_structures(frame.ad)
    apple = next((i for i, (kind, data) in enumerate(structures) if kind == 0xFF and data[:4] == b"\x4c\x00\x02\x15"), None)
    if name == "beacontools parse_packet":
        if apple is not None and any(kind == 0xFF for kind, _ in structures[:apple]):
            return ("another company's manufacturer data precedes the iBeacon: beacontools' grammar reads "
                    "only its company id and loses sync")
        return "unexplained"
    info = parse_gap(frame.ad)[3].get(APPLE, b"")
    if info[2:18].hex().upper() in BANNED_UUIDS:
        return "UUID on ibeacon-ble's BANNED_UUIDS list (Tilt hydrometers etc.), by design"
    return "unexplained"


def timed(call: Callable[[object], object], inputs: list[object], seconds: float) -> dict:
    """Rounds of whole passes over the frames; each round lasts about 0.2 s."""
    def one_pass() -> None:
        for item in inputs:
            try:
                call(item)
            except Exception:
                pass

    one_pass()  # warm-up
    passes, start = 0, time.perf_counter()
    while time.perf_counter() - start < 0.2:
        one_pass()
        passes += 1
    per_round = passes * len(inputs)
    rates: list[float] = []
    budget_start = time.perf_counter()
    while len(rates) < 3 or time.perf_counter() - budget_start < seconds:
        round_start = time.perf_counter()
        for _ in range(passes):
            one_pass()
        rates.append(per_round / (time.perf_counter() - round_start))
    return {"rounds": len(rates), "frames_per_round": per_round,
            "min": min(rates), "median": statistics.median(rates), "max": max(rates)}


def main() -> None:
    arguments = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    arguments.add_argument("frames", help="file written by `beacond-bench decode --dump-frames`")
    arguments.add_argument("--seconds", type=float, default=2.0, help="time budget per peer (default 2)")
    arguments.add_argument("--json", action="store_true", help="print the figures as JSON")
    arguments.add_argument("--swift-json", help="`beacond-bench decode --json` output: print the comparison table")
    options = arguments.parse_args()

    events, frames, totals = load(options.frames)
    results = {}
    for name, (call, inputs) in make_peers(frames).items():
        results[name] = check(name, call, inputs, frames)
        results[name].update(timed(call, inputs, options.seconds))
    report = {
        "python": platform.python_version(),
        "packages": {p: version(p) for p in ("beacontools", "ibeacon-ble", "bluetooth-data-tools", "construct")},
        "events": len(events), "ad_frames": len(frames), "swift_ibeacons": totals["ibeacons"],
        "peers": results,
    }
    if options.json:
        print(json.dumps(report, indent=2))
    else:
        print_peers(report)
    if options.swift_json:
        with open(options.swift_json, encoding="utf-8") as file:
            print_comparison(json.load(file), report)


def mega(rate: float) -> str:
    return f"{rate / 1e6:9.3f} M"


def print_peers(report: dict) -> None:
    packages = ", ".join(f"{k} {v}" for k, v in report["packages"].items())
    print(f"Python {report['python']}; {packages}")
    print(f"{report['ad_frames']} AD frames from {report['events']} LE Meta events; "
          f"Swift finds {report['swift_ibeacons']} iBeacons")
    for name, peer in report["peers"].items():
        print(f"{name:26} frames/s min {mega(peer['min'])} median {mega(peer['median'])} "
              f"max {mega(peer['max'])}  ({peer['rounds']} rounds); iBeacons {peer['ibeacons']}, "
              f"exceptions {peer['exceptions']}, disagreements with Swift {len(peer['disagreements'])}")
        reasons: dict[str, int] = {}
        for d in peer["disagreements"]:
            key = f"swift={int(d['swift'])} python={int(d['python'])}: {d['why']}"
            reasons[key] = reasons.get(key, 0) + 1
        for reason, count in sorted(reasons.items()):
            print(f"    {count:4} × {reason}")


def print_comparison(swift: dict, report: dict) -> None:
    per_round = swift["perRound"]
    print()
    print(f"Swift streaming: {per_round['events']} events per round ({swift['distinctEvents']} distinct, "
          f"{swift['bufferBytes'] / 1e6:.1f} MB), {per_round['reports']} reports, {per_round['iBeacons']} iBeacons; "
          f"hot: the distinct frames looped {swift['hotPasses']} times per round; totals verified every round")
    rows = [("Swift decode, streaming [HCI events]", swift["decode"]),
            ("Swift parse, streaming [AD]", swift["parse"]),
            ("Swift decode, hot [HCI events]", swift["decodeHot"]),
            ("Swift parse, hot [AD]", swift["parseHot"])]
    for what, timing in rows:
        rates = timing["itemsPerSecond"]
        print(f"  {what:38} min {mega(rates['min'])} median {mega(rates['median'])} max {mega(rates['max'])}"
              f"  ({timing['rounds']} rounds)")
    hot = swift["parseHot"]["itemsPerSecond"]["median"]
    streaming = swift["parse"]["itemsPerSecond"]["median"]
    decode = swift["decode"]["itemsPerSecond"]["median"]
    print()
    print("Side by side, median items per second on one core; ratios are Swift ÷ row")
    print(f"{'':44} {'per second':>12} {'parse hot ÷':>12} {'parse stream ÷':>15} {'decode stream ÷':>16}")
    table = [(what, timing["itemsPerSecond"]["median"]) for what, timing in rows]
    table += [(f"Python {name} [AD]", peer["median"]) for name, peer in report["peers"].items()]
    for what, rate in table:
        print(f"{what:44} {mega(rate):>12} {hot / rate:11.1f}× {streaming / rate:14.1f}× {decode / rate:15.1f}×")
    fastest_name, fastest = max(((n, p["median"]) for n, p in report["peers"].items()), key=lambda x: x[1])
    print(f"fastest Python peer: {fastest_name} ({mega(fastest).strip()}/s). Swift AD parse is {hot / fastest:.1f}× it "
          f"hot (same frames, same looping as Python) and {streaming / fastest:.1f}× streaming (target ≥ 50×); "
          f"Swift HCI decode streaming {decode / 1e6:.1f} M events/s (target ≥ 10 M)")
    swift_per_pass = report["swift_ibeacons"]
    for name, peer in report["peers"].items():
        unexplained = sum(d["why"] == "unexplained" for d in peer["disagreements"])
        if peer["ibeacons"] == swift_per_pass and not peer["disagreements"]:
            verdict = "equal, frame by frame"
        elif unexplained == 0:
            verdict = f"differs on {len(peer['disagreements'])} frames, every one explained above"
        else:
            verdict = f"DIFFERS: {unexplained} unexplained frames (see above)"
        print(f"iBeacons per pass: Swift {swift_per_pass}, {name} {peer['ibeacons']}: {verdict}")


if __name__ == "__main__":
    main()
