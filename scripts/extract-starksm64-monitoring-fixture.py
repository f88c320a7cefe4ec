#!/usr/bin/env python3
"""Extracts the small region-monitoring fixtures in Tests/Fixtures/monitoring/ from the starksm64 scanner runs.

Why: the runs in Tests/Fixtures/corpus/starksm64-scanner-runs/ are gzip-compressed concatenated JSON, and the
Swift tests cannot inflate gzip without a package. This script keeps what region monitoring depends on and
writes a plain text file the tests read directly.

How each fixture is made (standard library only; rerun with `python3 scripts/extract-starksm64-monitoring-fixture.py`):
  1. Read every JSON object of the run.
  2. Keep SCANNER_READ events (messageType 0) of the listed beacons (by minor, the beacon number in these runs).
     Heartbeats (messageType 1) are dropped but give each scanner's end time: the last moment it was listening.
  3. Per scanner, beacon and whole second of `time`, keep the first, the last and the strongest sighting.
     First and last keep every silence longer than one second exactly, so presence-only monitoring with an exit
     timeout of one second or more gives the same transitions as the full run (checked below before writing).
     The strongest keeps each second's best RSSI for hysteresis tests (those move by less than one second).
  4. Write times as milliseconds after the run's first event, sorted by time.
"""

import collections
import gzip
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCE = ROOT / "Tests/Fixtures/corpus/starksm64-scanner-runs"
TARGET = ROOT / "Tests/Fixtures/monitoring"

# (run file, beacon minors to keep, why those)
RUNS = [
    ("FourScannersRun1-2015-03-07.json.gz", {1, 2, 6, 7},
     "beacons 1, 2, 6 and 7: 5 and 8 are so rarely received at this run's low power that their presence is unknowable"),
    ("FourScannersRun1-2015-03-10.json.gz", {1, 2},
     "beacons 1 and 2: the two whose rooms RSSI separates in this full-power run"),
]


def read_events(path):
    text = gzip.open(path, "rt").read()
    decoder = json.JSONDecoder()
    position, events = 0, []
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position == len(text):
            return events
        event, position = decoder.raw_decode(text, position)
        events.append(event)


def thin(sightings):
    buckets = collections.defaultdict(list)
    for event in sightings:
        buckets[(event["scannerID"], event["major"], event["minor"], event["time"] // 1000)].append(event)
    kept = []
    for bucket in buckets.values():
        bucket.sort(key=lambda e: e["time"])
        strongest = max(bucket, key=lambda e: e["rssi"])
        chosen = {id(bucket[0]): bucket[0], id(bucket[-1]): bucket[-1], id(strongest): strongest}
        kept.extend(chosen.values())
    return kept


def presence_transitions(sightings, timeout_ms):
    """Enter/exit times of presence-only monitoring per (scanner, beacon): the property thinning must keep."""
    series = collections.defaultdict(list)
    for event in sightings:
        series[(event["scannerID"], event["major"], event["minor"])].append(event["time"])
    result = {}
    for key, times in series.items():
        times.sort()
        transitions = [("enter", times[0])]
        for previous, current in zip(times, times[1:]):
            if current - previous >= timeout_ms:
                transitions += [("exit", previous + timeout_ms), ("enter", current)]
        result[key] = transitions
    return result


def room(scanner):
    return scanner.removeprefix("Room")


def extract(name, minors, why):
    events = read_events(SOURCE / name)
    start = min(e["time"] for e in events)
    ends = {}
    for event in events:
        ends[event["scannerID"]] = max(ends.get(event["scannerID"], 0), event["time"])
    sightings = [e for e in events if e.get("messageType", 0) == 0 and e["minor"] in minors]
    uuids = {e["uuid"] for e in sightings}
    if len(uuids) != 1:
        sys.exit(f"{name}: expected one UUID among the kept beacons, found {sorted(uuids)}")
    kept = thin(sightings)
    for timeout in (1_000, 5_000, 30_000, 60_000):
        if presence_transitions(kept, timeout) != presence_transitions(sightings, timeout):
            sys.exit(f"{name}: thinning changed presence transitions at a {timeout} ms timeout")
    kept.sort(key=lambda e: (e["time"], e["scannerID"], e["major"], e["minor"], e["rssi"]))
    raw = uuids.pop()
    uuid = f"{raw[0:8]}-{raw[8:12]}-{raw[12:16]}-{raw[16:20]}-{raw[20:32]}"
    lines = [
        f"# Extracted by scripts/extract-starksm64-monitoring-fixture.py from",
        f"# Tests/Fixtures/corpus/starksm64-scanner-runs/{name}",
        f"# (starksm64/RaspberryPiBeaconParser@fca816ed, Apache-2.0: see that folder's LICENSE.md).",
        f"# Kept: SCANNER_READ events of {why};",
        f"# per scanner, beacon and whole second, the first, last and strongest sighting",
        f"# ({len(kept)} of {len(sightings)}; presence-only transitions identical for exit timeouts >= 1 s).",
        f"# start: first event of the run, ms since the Unix epoch. end: a scanner's last event, heartbeats",
        f"# included (it was still listening). Rows: ms after start, scanner (Room201 is 201), major, minor,",
        f"# RSSI dBm.",
        f"uuid {uuid}",
        f"start {start}",
    ]
    lines += [f"end {room(scanner)} {ends[scanner] - start}" for scanner in sorted(ends)]
    lines += [f"{e['time'] - start} {room(e['scannerID'])} {e['major']} {e['minor']} {e['rssi']}" for e in kept]
    TARGET.mkdir(parents=True, exist_ok=True)
    output = TARGET / ("starksm64-" + name.removesuffix(".json.gz") + ".txt")
    output.write_text("\n".join(lines) + "\n")
    print(f"{output.relative_to(ROOT)}: {len(kept)} of {len(sightings)} sightings")


if __name__ == "__main__":
    for run in RUNS:
        extract(*run)
