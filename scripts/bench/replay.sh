#!/usr/bin/env bash
# Replay, the whole process (docs/performance.md): `beacond replay` on a generated btsnoop capture of 2,000,000 LE
# Advertising Reports (1,000,000 iBeacons), as users run it, timed from exec to exit with its peak memory; a
# 10 GB capture streamed through a pipe (constant memory); and the Python parsers people use today doing the same
# job on the same frames (scripts/bench/replay_peers.py), as ratios of whole-process time.
#
#   scripts/bench/replay.sh [--no-peers] [--no-stream]
#
# Each beacond figure is the best of 3 runs (wall time; max RSS from /usr/bin/time). Run on an idle machine.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
scratch="${SCRATCH:-.build-bench}"
peers=1
stream=1
for argument in "$@"; do
    case "$argument" in
        --no-peers) peers=0 ;;
        --no-stream) stream=0 ;;
        *) echo "usage: $0 [--no-peers] [--no-stream]" >&2; exit 64 ;;
    esac
done

swift build -c release --scratch-path "$scratch" --product beacond >&2
swift build -c release --scratch-path "$scratch" --product beacond-bench >&2
beacond="$scratch/release/beacond"
bench="$scratch/release/beacond-bench"
capture="$scratch/replay-2m.btsnoop"
small="$scratch/replay-500k.btsnoop"
[[ -s "$capture" ]] || "$bench" capture --reports 2000000 --out "$capture"
[[ -s "$small" ]] || "$bench" capture --reports 500000 --out "$small"
reports=2000000

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "capture: $capture, $(stat -c %s "$capture") bytes, $reports advertising reports (half iBeacons)"
echo

# best of 3: prints "seconds maxrss_kb"
best() {
    local best_time="" best_rss=""
    for _ in 1 2 3; do
        local out
        out=$( { /usr/bin/time -f "%e %M" "$@" > /dev/null; } 2>&1 | tail -1)
        local t=${out% *} m=${out#* }
        if [[ -z "$best_time" ]] || awk "BEGIN{exit !($t < $best_time)}"; then best_time=$t; best_rss=$m; fi
    done
    echo "$best_time $best_rss"
}

printf "%-34s %10s %14s %10s\n" "beacond replay (whole process)" "seconds" "reports/s" "peak RSS"
for mode in "--json" "table" "--stats"; do
    flags=()
    [[ "$mode" != "table" ]] && flags=("$mode")
    read -r seconds rss < <(best "$beacond" replay "${flags[@]}" "$capture")
    rate=$(awk "BEGIN{printf \"%.2f M\", $reports / ($seconds > 0 ? $seconds : 0.01) / 1e6}")
    printf "%-34s %10s %14s %7d MB\n" "replay ${mode} > /dev/null" "$seconds" "$rate" $((rss / 1024))
done

if [[ $stream == 1 ]]; then
    echo
    echo "10 GB through a pipe: $bench capture --bytes 10000000000 | beacond replay --stats -"
    { /usr/bin/time -f "%e s, peak RSS %M kB" "$beacond" replay --stats - < <("$bench" capture --bytes 10000000000 2>/dev/null) \
        | grep -E "advertising reports|throughput"; } 2>&1
fi

if [[ $peers == 1 ]]; then
    venv="$root/.venv-bench"
    if [[ ! -x "$venv/bin/python" ]]; then python3 -m venv "$venv"; fi
    if ! "$venv/bin/python" -c 'import ibeacon_ble, beacontools' 2>/dev/null; then
        "$venv/bin/pip" install --quiet -r scripts/bench/requirements.txt -c scripts/bench/requirements.lock
    fi
    echo
    echo "The same job on the same frames ($small, 500,000 reports), JSON lines to /dev/null, whole process:"
    read -r ours _ < <(best "$beacond" replay --json "$small")
    printf "%-34s %10s %10s\n" "" "seconds" "× beacond"
    printf "%-34s %10s %10s\n" "beacond replay --json" "$ours" "1"
    for peer in "bdt+ibeacon-ble" "beacontools"; do
        start=$(date +%s.%N)
        "$venv/bin/python" scripts/bench/replay_peers.py --peer "$peer" "$small" > /dev/null 2>&1
        theirs=$(awk "BEGIN{printf \"%.2f\", $(date +%s.%N) - $start}")
        printf "%-34s %10s %10s\n" "$peer (Python)" "$theirs" "$(awk "BEGIN{printf \"%.0f\", $theirs / $ours}")"
    done
fi
