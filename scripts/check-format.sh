#!/usr/bin/env bash
# The Swift code's layout is swift-format's, configured in .swift-format (4-space indentation, lines of at most
# lineLength characters): this fails on any file swift-format would change, and on any line over the limit that
# swift-format cannot break itself (a long string literal, which must then be split by hand).
# Fix a layout failure with: swift format -i -r --configuration .swift-format Sources Tests Fuzzing Package.swift
set -euo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
limit=$(python3 -c 'import json; print(json.load(open(".swift-format"))["lineLength"])')
mapfile -t files < <(git ls-files '*.swift' 2>/dev/null || find Sources Tests Fuzzing Package.swift -name '*.swift')
passed=0
failed=0
if "$SWIFT" format lint --strict --configuration .swift-format "${files[@]}"; then
    passed=$((passed + 1))
else
    echo "check-format: swift-format would lay out the files above differently; fix with:" >&2
    echo "  $SWIFT format -i --configuration .swift-format <file>" >&2
    failed=$((failed + 1))
fi
long=$(awk -v limit="$limit" 'length > limit { printf "%s:%d: %d characters, more than lineLength = %d in .swift-format\n", FILENAME, FNR, length, limit }' "${files[@]}")
if [ -z "$long" ]; then
    passed=$((passed + 1))
else
    echo "$long" >&2
    echo "check-format: split these lines (a long string literal: two literals joined with +)" >&2
    failed=$((failed + 1))
fi
echo "format: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
