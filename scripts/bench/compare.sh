#!/usr/bin/env bash
# Every figure in docs/performance.md: the Swift release decode bench and the Python peers on the
# same frames, side by side with ratios; then the full pipeline and memory benches.
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

# The engine behind the decoder: full pipeline throughput with 10,000 regions, and the memory of
# 10,000 tracked beacons (ranging table alone, then with one monitored region each).
echo
"$bench" pipeline --seconds "$seconds"
echo
"$bench" memory --table ranger
echo
"$bench" memory --table pipeline
