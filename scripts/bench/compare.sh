#!/usr/bin/env bash
# Swift release decode bench and the Python peers on the same frames, side by side with ratios
# (the table docs/performance.md cites).
#
#   scripts/bench/compare.sh [--seconds S]     (S: time budget per measurement, default 2)
#
# Single-threaded throughout; run it on an otherwise idle machine, figures move with load.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
scratch="${SCRATCH:-.build-bench}"
seconds=2
if [[ "${1:-}" == "--seconds" && -n "${2:-}" ]]; then seconds="$2"; fi

swift build -c release --scratch-path "$scratch" --product beacond-bench >&2
bench="$scratch/release/beacond-bench"
frames="$scratch/bench-frames.txt"
swift_json="$scratch/bench-decode.json"

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "swift: $(swift --version 2>/dev/null | head -1)"
echo
"$bench" decode --dump-frames "$frames" >&2
"$bench" decode --seconds "$seconds" --json > "$swift_json"
SCRATCH="$scratch" scripts/bench/run-python-peers.sh "$frames" --seconds "$seconds" --swift-json "$swift_json"
