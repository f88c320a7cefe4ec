#!/usr/bin/env bash
# Builds the libFuzzer targets in Fuzzing/ and runs each for a fixed time from seeds derived from
# Tests/Fixtures/corpus. Prints, per target, executions, coverage (cov = edges, ft = features), the
# corpus it grew and the crashes it found; exits non-zero if any target crashed, leaked, timed out
# or ran out of memory. Crashing inputs are kept under WORK/crashes/<target>/.
#
# Usage: scripts/fuzz.sh [--seconds N] [--work-dir DIR] [--coverage] [target…]
#   --seconds N    time per target (default 20, the CI budget; by hand, e.g. --seconds 600)
#   --work-dir DIR build, seeds, grown corpus and crashes (default .build-fuzz-run, outside git)
#   --coverage     do not fuzz: replay seeds and grown corpus through a coverage build and print
#                  line and branch coverage of Sources/BeaconKit/Decoding and Sources/Captures
#   target         any of: hci ad linklayer capture btsnoop pcap pcapng hexlines (default: all)
# Reproduce a crash: WORK/build/release/fuzz-<target> WORK/crashes/<target>/crash-…
# docs/reliability.md describes the targets, their checks, and the figures of longer runs.
set -euo pipefail
cd "$(dirname "$0")/.."

all_targets=(hci ad linklayer capture btsnoop pcap pcapng hexlines espresense kinds irk)
seconds=20
work=.build-fuzz-run
targets=()
coverage=false
while [[ $# -gt 0 ]]; do
    case "$1" in
        --seconds) seconds="$2"; shift 2 ;;
        --work-dir) work="$2"; shift 2 ;;
        --coverage) coverage=true; shift ;;
        -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "fuzz.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
        *)
            [[ " ${all_targets[*]} " == *" $1 "* ]] || { echo "fuzz.sh: unknown target $1; targets: ${all_targets[*]}" >&2; exit 2; }
            targets+=("$1"); shift ;;
    esac
done
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: --seconds needs a positive whole number, got '$seconds'" >&2; exit 2; }
[[ ${#targets[@]} -gt 0 ]] || targets=("${all_targets[@]}")

count_files() { find "$1" -maxdepth 1 -type f 2>/dev/null | wc -l; }

# Inputs larger than this are never generated: an HCI event is at most 258 bytes with its H4 byte,
# an AD payload and a PDU less; captures get room for a few dozen records.
max_len() {
    case "$1" in
        hci|ad|linklayer|kinds|irk) echo 512 ;;
        *) echo 4096 ;;
    esac
}

# Replays what fuzzing found through binaries built with coverage mapping (no ASan: only the
# counters matter), so the figures say which lines of the decoders the inputs reach.
if $coverage; then
    echo "fuzz: building the targets with coverage mapping in $work/build-coverage"
    "${SWIFT:-swift}" build --package-path Fuzzing --scratch-path "$work/build-coverage" -c release \
        -Xswiftc -sanitize=fuzzer -Xswiftc -profile-generate -Xswiftc -profile-coverage-mapping >"$work/build-coverage.log" 2>&1 \
        || { echo "fuzz: coverage build failed; see $work/build-coverage.log" >&2; exit 1; }
    # The toolchain's own LLVM tools: a distribution's llvm-cov may not read this compiler's profiles.
    toolchain_bin=$(dirname "$(readlink -f "$(command -v "${SWIFT:-swift}")")")
    /usr/bin/python3 scripts/fuzz-seeds.py Tests/Fixtures/corpus "$work/seeds" >/dev/null
    profiles="$work/coverage"
    rm -rf "$profiles"
    mkdir -p "$profiles"
    objects=()
    for target in "${targets[@]}"; do
        binary="$work/build-coverage/release/fuzz-$target"
        mkdir -p "$work/corpus/$target"
        LLVM_PROFILE_FILE="$profiles/$target.profraw" "$binary" -runs=0 "$work/corpus/$target" "$work/seeds/$target" \
            >"$profiles/$target.log" 2>&1 || { echo "fuzz: replay of $target failed; see $profiles/$target.log" >&2; exit 1; }
        "$toolchain_bin/llvm-profdata" merge -sparse "$profiles/$target.profraw" -o "$profiles/$target.profdata"
        echo "fuzz: fuzz-$target alone ($(count_files "$work/corpus/$target") corpus + $(count_files "$work/seeds/$target") seed inputs) covers, of all decoder and reader files:"
        "$toolchain_bin/llvm-cov" report --show-branch-summary=false "$binary" -instr-profile="$profiles/$target.profdata" Sources/BeaconKit/Decoding Sources/Captures \
            | awk 'NR > 2 && $1 != "" && $1 !~ /^-/' | sed 's/^/    /' | tail -1
        objects+=(-object "$binary")
    done
    "$toolchain_bin/llvm-profdata" merge -sparse "$profiles"/*.profraw -o "$profiles/all.profdata"
    echo "fuzz: coverage of all targets together, per file (regions, functions, lines):"
    "$toolchain_bin/llvm-cov" report --show-branch-summary=false "${objects[@]:1}" -instr-profile="$profiles/all.profdata" Sources/BeaconKit/Decoding Sources/Captures
    exit 0
fi

echo "fuzz: building the targets (release, -sanitize=fuzzer,address) in $work/build"
build_start=$SECONDS
"${SWIFT:-swift}" build --package-path Fuzzing --scratch-path "$work/build" -c release \
    -Xswiftc -sanitize=fuzzer,address 2>&1 | grep -v "Cannot export local symbol '__asan_extra_spill_area'" || {
    echo "fuzz: build failed" >&2; exit 1; }
bin="$work/build/release"
for target in "${targets[@]}"; do
    [[ -x "$bin/fuzz-$target" ]] || { echo "fuzz: build did not produce $bin/fuzz-$target" >&2; exit 1; }
done
echo "fuzz: built in $((SECONDS - build_start)) s"
/usr/bin/python3 scripts/fuzz-seeds.py Tests/Fixtures/corpus "$work/seeds" | sed 's/^/fuzz: seeds: /'

# libFuzzer reports crashes itself; the Swift runtime's backtracer would only add a second, noisier
# report (and, under ASan, one about its own memory reads).
export SWIFT_BACKTRACE=enable=no

artifacts() { find "$1" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) 2>/dev/null | sort; }

passed=0
failed=0
failures=()
printf '%-10s %12s %10s %7s %7s %12s %8s\n' target executions exec/s cov ft "corpus new" crashes
for target in "${targets[@]}"; do
    corpus="$work/corpus/$target"
    crashes="$work/crashes/$target"
    log="$work/logs/$target.log"
    mkdir -p "$corpus" "$crashes" "$(dirname "$log")"
    corpus_before=$(count_files "$corpus")
    artifacts_before=$(artifacts "$crashes")
    status=0
    # -timeout: one input taking a second is already a hang for decoders this size.
    "$bin/fuzz-$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="$(max_len "$target")" \
        -print_final_stats=1 -artifact_prefix="$crashes/" "$corpus" "$work/seeds/$target" >"$log" 2>&1 || status=$?
    executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    coverage=$(grep -E '^#[0-9]+.*cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)
    cov=$(sed -E -n 's/.*cov: ([0-9]+).*/\1/p' <<<"$coverage")
    ft=$(sed -E -n 's/.*ft: ([0-9]+).*/\1/p' <<<"$coverage")
    corpus_new=$(( $(count_files "$corpus") - corpus_before ))
    new_artifacts=$(comm -13 <(echo "$artifacts_before") <(artifacts "$crashes") | sed '/^$/d')
    crash_count=$(sed '/^$/d' <<<"$new_artifacts" | wc -l)
    printf '%-10s %12s %10s %7s %7s %12s %8s\n' "$target" "${executions:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" \
        "$corpus_new" "$crash_count"
    if [[ $status -eq 0 && $crash_count -eq 0 ]]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        failures+=("$target")
        echo "fuzz: $target FAILED (exit $status); log $log" >&2
        grep -E 'invariant broken|ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer)|Fatal error|SUMMARY' "$log" | head -5 | sed 's/^/    /' >&2 || true
        while read -r artifact; do
            [[ -n "$artifact" ]] || continue
            echo "    kept $artifact; reproduce: $bin/fuzz-$target $artifact" >&2
        done <<<"$new_artifacts"
    fi
done
[[ $failed -eq 0 ]] || echo "fuzz: failed: ${failures[*]}" >&2
echo "fuzz: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
