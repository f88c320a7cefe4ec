#!/bin/bash
echo "SYSTEST NOTE kernel $(uname -r), $(ls /sys/class/bluetooth 2>/dev/null | wc -l) adapters, vhci: $(ls -l /dev/vhci)"
[[ -c /dev/vhci ]] && echo "SYSTEST PASS /dev/vhci exists" || echo "SYSTEST FAIL /dev/vhci exists: missing"
t0=$(date +%s.%N); "$BEACOND" --help >/dev/null 2>&1; rc=$?; t1=$(date +%s.%N)
echo "SYSTEST NOTE beacond --help took $(echo "$t1 - $t0" | bc 2>/dev/null || echo "$t0 $t1")"
[[ $rc == 0 ]] && echo "SYSTEST PASS beacond runs" || echo "SYSTEST FAIL beacond runs: $rc"
