# Shared by the guest's shell scenarios (systemd_test.sh, package_test.sh), sourced after they set $log (where
# command output goes): one console line per check on fd 3, which run.sh counts.
#   check NAME FUNCTION   runs FUNCTION with its output in $log; "SYSTEST PASS NAME" when it returns 0, else
#                         "SYSTEST FAIL NAME: $detail" (the function may set detail to say why); returns its status
#   as USER COMMAND...    runs COMMAND as USER with that user's groups, without PAM or a login
#   bound SECONDS         SECONDS on an idle host, for this guest's speed factor (stage.sh measured it with
#                         pace.py; SYSTEST_SPEED), in whole seconds rounded up
#   within SECONDS CMD... runs CMD every 0.5 s until it succeeds (0), or fails once `bound SECONDS` have passed (1)
failures=0
detail=
exec 3>&1
say() { echo "SYSTEST $*" >&3; }
check() {
    local name=$1
    shift
    detail=
    echo "---- $name" >>"$log"
    if "$@" >>"$log" 2>&1; then
        say "PASS $name"
        return 0
    fi
    say "FAIL $name: ${detail:-see $(basename "$log")}"
    failures=$((failures + 1))
    return 1
}
as() {
    local user=$1
    shift
    setpriv --reuid="$user" --regid="$(id -g "$user")" --init-groups env HOME=/ "$@"
}
speed=${SYSTEST_SPEED:-1}
bound() { awk -v s="$1" -v f="$speed" 'BEGIN { printf "%d", s * f + 0.999 }'; }
within() {
    local deadline=$((SECONDS + $(bound "$1")))
    shift
    until "$@"; do
        ((SECONDS < deadline)) || return 1
        sleep 0.5
    done
}
