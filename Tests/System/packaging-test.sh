#!/usr/bin/env bash
# Checks beacond's system integration files for real, not by reading them:
#   - `make install DESTDIR=<temp root>` puts every file in place with the right mode, keeps an
#     administrator's beacond.toml, honours PREFIX, and `make uninstall` removes what it put;
#   - `systemd-analyze verify` accepts the installed unit without a single message, and
#     `systemd-analyze security` rates its sandbox;
#   - `systemd-sysusers` creates the accounts from the installed sysusers.d file;
#   - the installed D-Bus policy, loaded by a real dbus-daemon configured like the system bus,
#     lets only root and user beacond own org.beacond, everyone call Manager1 and
#     LocationManager1, and only root and group beacond-admin call Admin1 (callers switch user
#     with setpriv, so this part needs root; it creates the users it needs and leaves them).
#
# Usage: Tests/System/packaging-test.sh          (run by `make test`; builds release binaries)
#        BEACOND_BIN_DIR=.build/release Tests/System/packaging-test.sh   (use prebuilt binaries)
# Prints one line per check and ends with "N passed, N failed"; exits 1 when any check failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)

# pass, fail, check.
# shellcheck source=host-checks.sh
source Tests/System/host-checks.sh
finish() {
    echo "$passed passed, $failed failed"
    [[ $failed -eq 0 ]]
    exit
}

work=$(mktemp -d /tmp/beacond-packaging.XXXXXX)
# Other users (beacond, the test users) must reach the bus socket and the helper scripts.
chmod 0755 "$work"
dest=$work/root
bus_pid=
owner_pid=
cleanup() {
    [[ -n "$owner_pid" ]] && kill "$owner_pid" 2>/dev/null
    [[ -n "$bus_pid" ]] && kill "$bus_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

# ---------------------------------------------------------------------------------------------
# make install

if [[ -n "${BEACOND_BIN_DIR:-}" ]]; then
    install_command=(make --no-print-directory install-only DESTDIR="$dest" RELEASE_BIN="$BEACOND_BIN_DIR")
    bin_dir=$BEACOND_BIN_DIR
else
    install_command=(make --no-print-directory install DESTDIR="$dest")
    bin_dir=.build/release
fi
echo "# ${install_command[*]}"
if "${install_command[@]}" >"$work/install.log" 2>&1; then
    pass "make install into a temporary root"
else
    detail=$(tail -n 30 "$work/install.log")
    fail "make install into a temporary root"
    finish
fi

# installed PATH MODE [SOURCE]: PATH exists under $dest as a regular file (or, for MODE d…, a
# directory) with MODE, and has the same bytes as SOURCE when given.
installed() {
    local path=$dest$1 mode=$2 source=${3:-}
    local want_type=file
    [[ $mode == d* ]] && want_type=directory && mode=${mode#d}
    if [[ $want_type == directory && ! -d $path ]] || [[ $want_type == file && ! -f $path ]]; then
        detail="$1 is not an installed $want_type"
        return 1
    fi
    local actual
    actual=$(stat -c %a "$path")
    if [[ $actual != "$mode" ]]; then
        detail="$1 has mode $actual, expected $mode"
        return 1
    fi
    if [[ -n "$source" ]] && ! cmp -s "$source" "$path"; then
        detail="$1 differs from $source"
        return 1
    fi
}

check "beacond installed, 0755, the built binary" installed /usr/bin/beacond 755 "$bin_dir/beacond"
check "beaconctl installed, 0755, the built binary" installed /usr/bin/beaconctl 755 "$bin_dir/beaconctl"
check "unit installed in /usr/lib/systemd/system, 0644" \
    installed /usr/lib/systemd/system/beacond.service 644 systemd/beacond.service
check "sysusers installed as /usr/lib/sysusers.d/beacond.conf, 0644" \
    installed /usr/lib/sysusers.d/beacond.conf 644 systemd/beacond.sysusers
check "D-Bus policy installed in /usr/share/dbus-1/system.d, 0644" \
    installed /usr/share/dbus-1/system.d/org.beacond.conf 644 config/dbus-1/system.d/org.beacond.conf
check "D-Bus activation file installed in /usr/share/dbus-1/system-services, 0644" \
    installed /usr/share/dbus-1/system-services/org.beacond.service 644 \
    config/dbus-1/system-services/org.beacond.service
check "/etc/beacond is a 0755 directory" installed /etc/beacond d755

apps_d_empty() {
    installed /etc/beacond/apps.d d755 || return 1
    local entries
    entries=$(ls -A "$dest/etc/beacond/apps.d")
    [[ -z "$entries" ]] || { detail="apps.d is not empty: $entries"; return 1; }
}
check "/etc/beacond/apps.d is an empty 0755 directory (apps are the admin's)" apps_d_empty

shipped_config() {
    [[ -f config/beacond.toml ]] || { detail="config/beacond.toml is missing from the tree"; return 1; }
    installed /etc/beacond/beacond.toml 644 config/beacond.toml
}
check "beacond.toml installed in /etc/beacond, 0644, the shipped defaults" shipped_config

examples_installed() {
    local f any=
    for f in config/apps.d/*.toml; do
        [[ -f $f ]] || continue
        any=yes
        installed "/usr/share/doc/beacond/examples/${f#config/}" 644 "$f" || return 1
    done
    [[ -n "$any" ]] || { detail="config/apps.d has no example .toml in the tree"; return 1; }
}
check "apps.d examples installed in /usr/share/doc/beacond/examples/apps.d, 0644" examples_installed

docs_installed() {
    local f
    for f in README.md systemd/README.md docs/*.md; do
        installed "/usr/share/doc/beacond/$f" 644 "$f" || return 1
    done
}
check "README and docs installed in /usr/share/doc/beacond, 0644" docs_installed

documentation_exists() {
    local uri
    for uri in $(sed -n 's/^Documentation=//p' "$dest/usr/lib/systemd/system/beacond.service"); do
        [[ $uri == file:* && -f $dest${uri#file:} ]] || { detail="$uri is not an installed file"; return 1; }
    done
}
check "the unit's Documentation= names installed files" documentation_exists

binary_runs() {
    detail=$("$dest/usr/bin/beacond" --help 2>&1) || return 1
    detail=
}
check "the installed beacond runs (--help)" binary_runs

# A second install must keep what the administrator changed and put the new defaults aside.
keeps_admin_config() {
    local config=$dest/etc/beacond/beacond.toml
    echo "# changed by the administrator" >>"$config"
    local before
    before=$(cat "$config")
    detail=$(make --no-print-directory install-only DESTDIR="$dest" RELEASE_BIN="$bin_dir" 2>&1) || return 1
    [[ "$(cat "$config")" == "$before" ]] || { detail="reinstall overwrote beacond.toml"; return 1; }
    installed /etc/beacond/beacond.toml.dist 644 config/beacond.toml || return 1
    detail=
}
check "reinstall keeps a changed beacond.toml and writes beacond.toml.dist" keeps_admin_config

prefix_honoured() {
    local other=$work/prefix
    detail=$(make --no-print-directory install-only DESTDIR="$other" PREFIX=/usr/local \
        RELEASE_BIN="$bin_dir" 2>&1) || return 1
    local unit=$other/usr/local/lib/systemd/system/beacond.service
    grep -q '^ExecStart=/usr/local/bin/beacond ' "$unit" 2>/dev/null ||
        { detail="$unit does not start /usr/local/bin/beacond"; return 1; }
    [[ -x $other/usr/local/bin/beacond ]] || { detail="no /usr/local/bin/beacond"; return 1; }
    [[ -f $other/etc/dbus-1/system.d/org.beacond.conf ]] ||
        { detail="the D-Bus policy is not in /etc/dbus-1/system.d, the only other place dbus-daemon reads"; return 1; }
    detail=
}
check "PREFIX=/usr/local: installs there, unit starts /usr/local/bin/beacond, policy in /etc/dbus-1" \
    prefix_honoured

# ---------------------------------------------------------------------------------------------
# systemd

unit=$dest/usr/lib/systemd/system/beacond.service

# verify refuses a unit whose ExecStart binary does not exist, and with --root it resolves
# everything (dbus.socket, /bin/kill) inside the temporary root, which has none of it. So verify
# a copy beside the temporary root in which only ExecStart's path is rewritten to the beacond
# binary make install just put there; every other line is the installed unit, checked against
# the real system's units. Any output counts as failure: verify exits 0 on many warnings.
unit_verifies() {
    if ! command -v systemd-analyze >/dev/null; then
        detail="systemd-analyze missing: scripts/install-deps.sh test installs Debian package systemd"
        return 1
    fi
    mkdir -p "$work/verify"
    sed "s|^ExecStart=/usr/bin/beacond |ExecStart=$dest/usr/bin/beacond |" "$unit" >"$work/verify/beacond.service"
    grep -q "^ExecStart=$dest/usr/bin/beacond " "$work/verify/beacond.service" ||
        { detail="ExecStart=/usr/bin/beacond ... not found in the unit"; return 1; }
    local status=0
    detail=$(systemd-analyze verify "$work/verify/beacond.service" 2>&1) || status=$?
    [[ $status -eq 0 && -z "$detail" ]] || { detail="status $status: $detail"; return 1; }
}
check "systemd-analyze verify: no errors, no warnings" unit_verifies

unit_declares() {
    local line missing=
    for line in Type=dbus BusName=org.beacond User=beacond Group=beacond WatchdogSec=30 \
        NotifyAccess=main ProtectSystem=strict NoNewPrivileges=yes \
        'CapabilityBoundingSet=CAP_NET_RAW CAP_NET_ADMIN' 'AmbientCapabilities=CAP_NET_RAW CAP_NET_ADMIN' \
        'RestrictAddressFamilies=AF_UNIX AF_BLUETOOTH' StateDirectory=beacond Restart=on-failure \
        Alias=dbus-org.beacond.service; do
        grep -qxF "$line" "$unit" || missing+="$line; "
    done
    [[ -z "$missing" ]] || { detail="missing: $missing"; return 1; }
}
check "unit: Type=dbus on org.beacond, user beacond, watchdog, sandbox, HCI capabilities" unit_declares

# systemd-analyze security rates the sandbox from 0 (locked down) to 10 (exposed); systemd/README.md
# explains what is left. A rise above 2.0 means hardening was lost.
exposure_low() {
    local output
    output=$(systemd-analyze security --offline=yes "$work/verify/beacond.service" 2>&1) ||
        { detail=$output; return 1; }
    local score
    score=$(sed -n 's/.*Overall exposure level for beacond.service: \([0-9.]*\).*/\1/p' <<<"$output")
    echo "     exposure level $score"
    [[ -n "$score" ]] || { detail=$output; return 1; }
    awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }' || { detail="exposure $score > 2.0"; return 1; }
}
check "systemd-analyze security: exposure at most 2.0" exposure_low

# With the [mqtt] drop-in (systemd/mqtt.conf, installed as documentation): the unit and the drop-in in one file,
# as systemd merges them; it must still verify cleanly and stay at most 2.0.
mqtt_dropin_keeps_sandbox() {
    local dropin=$dest/usr/share/doc/beacond/systemd/mqtt.conf
    [[ -f $dropin ]] || { detail="make install did not install $dropin"; return 1; }
    mkdir -p "$work/verify-mqtt"
    cat "$work/verify/beacond.service" "$dropin" >"$work/verify-mqtt/beacond.service"
    grep -q '^RestrictAddressFamilies=AF_INET AF_INET6$' "$work/verify-mqtt/beacond.service" ||
        { detail="the drop-in allows no IP"; return 1; }
    local status=0 output
    output=$(systemd-analyze verify "$work/verify-mqtt/beacond.service" 2>&1) || status=$?
    [[ $status -eq 0 && -z "$output" ]] || { detail="verify: status $status: $output"; return 1; }
    output=$(systemd-analyze security --offline=yes "$work/verify-mqtt/beacond.service" 2>&1) || { detail=$output; return 1; }
    local score
    score=$(sed -n 's/.*Overall exposure level for beacond.service: \([0-9.]*\).*/\1/p' <<<"$output")
    echo "     exposure level with the MQTT drop-in $score"
    [[ -n "$score" ]] && awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }' || { detail="exposure $score > 2.0"; return 1; }
}
check "systemd/mqtt.conf: the unit with the MQTT drop-in verifies and stays at most 2.0" mqtt_dropin_keeps_sandbox

sysusers_creates_accounts() {
    local output
    output=$(systemd-sysusers --root="$dest" 2>&1) || { detail=$output; return 1; }
    local passwd=$dest/etc/passwd group=$dest/etc/group
    grep -q '^beacond:x:[0-9]*:[0-9]*:[^:]*:[^:]*:/usr/sbin/nologin$' "$passwd" ||
        { detail="no login-less user beacond in: $(cat "$passwd")"; return 1; }
    grep -q '^beacond:x:' "$group" || { detail="no group beacond"; return 1; }
    grep -q '^beacond-admin:x:' "$group" || { detail="no group beacond-admin"; return 1; }
    grep -q '^bluetooth:x:[0-9]*:\(.*,\)\?beacond\(,.*\)\?$' "$group" ||
        { detail="beacond not in group bluetooth: $(cat "$group")"; return 1; }
}
check "systemd-sysusers creates user beacond (no login), groups beacond, beacond-admin, bluetooth" \
    sysusers_creates_accounts

# The same names in four files that must agree.
names_agree() {
    local service=$dest/usr/share/dbus-1/system-services/org.beacond.service
    local policy=$dest/usr/share/dbus-1/system.d/org.beacond.conf
    grep -qx 'Name=org.beacond' "$service" && grep -qx 'User=beacond' "$service" &&
        grep -qx 'SystemdService=dbus-org.beacond.service' "$service" &&
        grep -qx 'Alias=dbus-org.beacond.service' "$unit" &&
        grep -q '<policy user="beacond">' "$policy" &&
        grep -q '<policy group="beacond-admin">' "$policy" &&
        grep -q '^u beacond ' systemd/beacond.sysusers && grep -q '^g beacond-admin ' systemd/beacond.sysusers ||
        { detail="activation file, unit, policy and sysusers disagree on org.beacond, beacond, beacond-admin"; return 1; }
}
check "activation file, unit Alias, policy and sysusers name the same bus name, user, group" names_agree

# ---------------------------------------------------------------------------------------------
# The D-Bus policy on a real dbus-daemon

policy_checks() {
    if [[ $(id -u) -ne 0 ]]; then
        detail="needs root: it creates users and calls the bus as each of them (setpriv)"
        fail "D-Bus policy checks"
        return
    fi
    if ! /usr/bin/python3 -c 'import dbus, dbus.mainloop.glib; from gi.repository import GLib' 2>/dev/null; then
        detail="/usr/bin/python3 lacks dbus or gi: scripts/install-deps.sh test installs python3-dbus python3-gi"
        fail "D-Bus policy checks"
        return
    fi

    # Accounts: the real ones from our sysusers file, and two test callers.
    local output
    if ! output=$(systemd-sysusers "$dest/usr/lib/sysusers.d/beacond.conf" 2>&1); then
        detail=$output
        fail "systemd-sysusers creates beacond and beacond-admin on this machine"
        return
    fi
    id beacond-test >/dev/null 2>&1 ||
        useradd --system --user-group --no-create-home --shell /usr/sbin/nologin beacond-test
    id beacond-test-admin >/dev/null 2>&1 ||
        useradd --system --user-group --no-create-home --shell /usr/sbin/nologin beacond-test-admin
    usermod -a -G beacond-admin beacond-test-admin
    if id -nG beacond-test-admin | grep -qw beacond-admin && ! id -nG beacond-test | grep -qw beacond-admin &&
        id beacond >/dev/null 2>&1; then
        pass "accounts beacond, beacond-test, beacond-test-admin (in beacond-admin) exist"
    else
        detail="$(id beacond 2>&1); $(id beacond-test 2>&1); $(id beacond-test-admin 2>&1)"
        fail "accounts beacond, beacond-test, beacond-test-admin (in beacond-admin) exist"
        return
    fi

    # A bus like the system bus (system.conf's default policy: deny owning and method calls,
    # allow signals, requested replies and the bus driver), plus the installed policy and
    # activation directory. No <user> (it stays root like the callers' bus would), no activation
    # helper: nothing is started.
    local py=$work/py
    mkdir -p "$work/bus" "$py"
    chmod 0755 "$work/bus" "$py"
    install -m 0644 Tests/System/dbus-policy/fake_beacond.py Tests/System/dbus-policy/call.py "$py/"
    cat >"$work/bus/system.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$work/bus/socket</listen>
  <auth>EXTERNAL</auth>
  <servicedir>$dest/usr/share/dbus-1/system-services</servicedir>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Properties"/>
  </policy>
  <include>$dest/usr/share/dbus-1/system.d/org.beacond.conf</include>
</busconfig>
EOF
    # --fork returns once the bus listens; it prints the address, then the pid.
    if ! output=$(dbus-daemon --config-file="$work/bus/system.conf" --fork --nosyslog \
        --print-address=1 --print-pid=1 2>&1); then
        detail=$output
        fail "dbus-daemon starts with the installed policy"
        return
    fi
    local address
    address=$(sed -n 1p <<<"$output")
    bus_pid=$(sed -n 2p <<<"$output")
    pass "dbus-daemon starts with the installed policy (pid $bus_pid)"

    # as USER COMMAND...: runs COMMAND as USER with USER's groups from /etc/group.
    as() {
        local user=$1
        shift
        if [[ $user == root ]]; then
            env -i PATH=/usr/bin:/bin "$@"
        else
            setpriv --reuid="$user" --regid="$user" --init-groups --reset-env -- "$@"
        fi
    }
    own() { as "$1" /usr/bin/python3 "$py/fake_beacond.py" own "$address" 2>&1; }
    # expect_own USER OUTCOME
    expect_own() {
        local got
        got=$(own "$1")
        [[ $got == "$2" ]] || { detail="$1 got: $got"; return 1; }
    }
    # expect_call USER EXPECTED PATH INTERFACE METHOD [SIGNATURE ARG...]: a call to org.beacond;
    # EXPECTED is the start of call.py's answer ("ok", "ok signal notDetermined",
    # "error org.freedesktop.DBus.Error.AccessDenied").
    expect_call() {
        local user=$1 expected=$2
        shift 2
        local got
        got=$(as "$user" /usr/bin/python3 "$py/call.py" "$address" org.beacond "$@" 2>&1)
        [[ $got == "$expected"* ]] || { detail="$user got: $got"; return 1; }
    }
    local denied=org.freedesktop.DBus.Error.AccessDenied

    activatable() {
        local got
        got=$(as root /usr/bin/python3 "$py/call.py" "$address" org.freedesktop.DBus \
            /org/freedesktop/DBus org.freedesktop.DBus ListActivatableNames 2>&1)
        [[ $got == *"'org.beacond'"* ]] || { detail="root got: $got"; return 1; }
    }
    check "the activation file loads: the bus lists org.beacond as activatable" activatable
    # This bus has no systemd to hand activation to, so it runs the file's Exec= itself: that must
    # be /bin/false, never the daemon outside its unit's sandbox.
    check "without systemd, activating org.beacond runs only Exec=/bin/false (Spawn.ChildExited)" \
        expect_call root "error org.freedesktop.DBus.Error.Spawn.ChildExited" /org/beacond org.beacond.Manager1 RegisterClient s org.example.app

    check "an unprivileged user may not own org.beacond" expect_own beacond-test "error $denied"
    check "a beacond-admin member may not own org.beacond" expect_own beacond-test-admin "error $denied"

    # The stand-in daemon, as user beacond, owns the name and answers until the end (exec: its
    # pid is the one cleanup kills).
    coproc OWNER {
        exec setpriv --reuid=beacond --regid=beacond --init-groups --reset-env -- \
            /usr/bin/python3 -u "$py/fake_beacond.py" serve "$address" 2>&1
    }
    owner_pid=$OWNER_PID
    local line=
    read -r -t 60 -u "${OWNER[0]}" line
    if [[ $line == owned ]]; then
        pass "user beacond owns org.beacond"
    else
        detail="the stand-in daemon said: ${line:-nothing within 60 s}"
        fail "user beacond owns org.beacond"
        return
    fi
    # Policy allows root to own: with the name taken it hears "exists", not AccessDenied.
    check "root may own org.beacond (taken now: exists, not AccessDenied)" expect_own root exists

    check "unprivileged: Manager1.RegisterClient answers, and its unicast AuthorizationChanged arrives" \
        expect_call beacond-test "ok signal notDetermined" /org/beacond org.beacond.Manager1 RegisterClient s org.example.app
    check "unprivileged: LocationManager1 on the client object answers" \
        expect_call beacond-test ok /org/beacond/client/1 org.beacond.LocationManager1 RequestWhenInUseAuthorization
    check "unprivileged: Introspectable.Introspect answers" \
        expect_call beacond-test ok /org/beacond org.freedesktop.DBus.Introspectable Introspect
    check "unprivileged: Peer.Ping answers" \
        expect_call beacond-test ok /org/beacond org.freedesktop.DBus.Peer Ping
    # The daemon pings its clients (flow control): user beacond may send Peer.Ping to a client's
    # connection, which the default policy's deny send_type="method_call" would otherwise stop.
    ping_a_client() {
        # Not a coproc: the stand-in daemon above is one, and bash runs one at a time.
        local out=$work/listener.out name= got tries
        setpriv --reuid=beacond-test --regid="$(id -g beacond-test)" --init-groups --reset-env -- \
            /usr/bin/python3 -u -c 'import sys, dbus, dbus.mainloop.glib
from gi.repository import GLib
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.bus.BusConnection(sys.argv[1])
print(bus.get_unique_name())
GLib.MainLoop().run()' "$address" >"$out" 2>&1 &
        local listener=$!
        for tries in $(seq 1 60); do
            name=$(head -n 1 "$out" 2>/dev/null)
            [[ $name == :* ]] && break
            sleep 0.5
        done
        got=$(as beacond /usr/bin/python3 "$py/call.py" "$address" "$name" / org.freedesktop.DBus.Peer Ping 2>&1)
        kill "$listener" 2>/dev/null
        wait "$listener" 2>/dev/null
        [[ $got == ok* ]] || { detail="beacond pinging ${name:-?} (a beacond-test connection) got: $got"; return 1; }
    }
    check "user beacond may Peer.Ping a client's connection" ping_a_client
    check "unprivileged: Properties.Get answers" \
        expect_call beacond-test "ok dbus.String('fake'" /org/beacond org.freedesktop.DBus.Properties Get ss org.beacond.Manager1 Version
    check "unprivileged: Properties.GetAll answers" \
        expect_call beacond-test ok /org/beacond org.freedesktop.DBus.Properties GetAll s org.beacond.Manager1
    check "unprivileged: Properties.Set is AccessDenied" \
        expect_call beacond-test "error $denied" /org/beacond org.freedesktop.DBus.Properties Set ssv org.beacond.Manager1 Version x
    check "unprivileged: Admin1.GetStatus is AccessDenied" \
        expect_call beacond-test "error $denied" /org/beacond org.beacond.Admin1 GetStatus
    check "unprivileged: Admin1.SetLocationServicesEnabled is AccessDenied" \
        expect_call beacond-test "error $denied" /org/beacond org.beacond.Admin1 SetLocationServicesEnabled b false
    check "unprivileged: GetStatus without an interface field is AccessDenied" \
        expect_call beacond-test "error $denied" /org/beacond - GetStatus
    check "beacond-admin member: Admin1.GetStatus answers" \
        expect_call beacond-test-admin ok /org/beacond org.beacond.Admin1 GetStatus
    check "beacond-admin member: Admin1.SetLocationServicesEnabled answers" \
        expect_call beacond-test-admin ok /org/beacond org.beacond.Admin1 SetLocationServicesEnabled b false
    check "beacond-admin member: Manager1.RegisterClient answers" \
        expect_call beacond-test-admin "ok signal notDetermined" /org/beacond org.beacond.Manager1 RegisterClient s org.example.app
    check "root: Admin1.GetStatus answers" \
        expect_call root ok /org/beacond org.beacond.Admin1 GetStatus
    check "root: Properties.Set answers" \
        expect_call root ok /org/beacond org.freedesktop.DBus.Properties Set ssv org.beacond.Manager1 Version x
}
policy_checks

# ---------------------------------------------------------------------------------------------
# make uninstall (last: the checks above use the installed files)

uninstalled() {
    detail=$(make --no-print-directory uninstall DESTDIR="$dest" 2>&1) || return 1
    local left
    left=$(cd "$dest" && find usr -type f 2>/dev/null)
    [[ -z "$left" ]] || { detail="left behind: $left"; return 1; }
    [[ -f $dest/etc/beacond/beacond.toml ]] || { detail="removed the administrator's beacond.toml"; return 1; }
    detail=
}
check "make uninstall removes every installed file but keeps /etc/beacond" uninstalled

finish
