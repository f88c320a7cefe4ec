# Shared by the host's shell test scripts (packaging-test.sh, Tests/Package/deb-test.sh): one line per check,
# counted for the closing "N passed, N failed".
#   pass NAME, fail NAME    print "ok   NAME" or "FAIL NAME" (with $detail indented under it) and count it
#   check NAME COMMAND...   runs COMMAND (a function that may set $detail to say why it failed); passes on status 0
passed=0
failed=0
# Written by a check to explain a failure; printed under its FAIL line.
detail=
pass() { echo "ok   $1"; passed=$((passed + 1)); }
fail() {
    echo "FAIL $1"
    [[ -n "$detail" ]] && sed 's/^/       /' <<<"$detail"
    failed=$((failed + 1))
}
check() {
    local name=$1
    shift
    detail=
    if "$@"; then pass "$name"; else fail "$name"; fi
}
