#!/usr/bin/env bash
# Times the Python iBeacon parsers (ibeacon-ble, beacontools) on the frames beacond-bench decodes.
#
#   scripts/bench/run-python-peers.sh [FRAMES] [python_peers.py options…]
#
# Creates .venv-bench in the repository (ignored by git) with the pinned peers, writes FRAMES with
# `beacond-bench decode --dump-frames` when it is not given, and runs python_peers.py on it.
# SCRATCH (default .build-bench) is the Swift scratch path of the release build.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
scratch="${SCRATCH:-.build-bench}"
venv="$root/.venv-bench"

if [[ ! -x "$venv/bin/python" ]]; then
    python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c 'import ibeacon_ble, beacontools' 2>/dev/null; then
    "$venv/bin/pip" install --quiet -r scripts/bench/requirements.txt -c scripts/bench/requirements.lock
fi

if [[ $# -gt 0 && "$1" != -* ]]; then
    frames="$1"
    shift
else
    frames="$scratch/bench-frames.txt"
    swift build -c release --scratch-path "$scratch" --product beacond-bench >&2
    "$scratch/release/beacond-bench" decode --dump-frames "$frames" >&2
fi
exec "$venv/bin/python" scripts/bench/python_peers.py "$frames" "$@"
