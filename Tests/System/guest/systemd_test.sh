#!/bin/bash
# The checks of run.sh's systemd guest run, started by beacond-systest.service under the guest's
# systemd (prepare-systemd.sh installed beacond with make install-only and wrote that unit): bus
# activation of beacond.service through the installed activation file, the name owned by user
# beacond, beaconctl as root, an administrator and an unprivileged user against the installed D-Bus
# policy, the daemon's journal, and clean stops. One console line per check (run.sh counts them);
# command output goes to $SYSTEST_LOGS/systemd-checks.log.
set -u
export PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8
log=$SYSTEST_LOGS/systemd-checks.log
# check, say, as, bound, within.
# shellcheck source=checks.sh
source "$(dirname "$0")/checks.sh"
# is_state STATE: beacond.service's ActiveState is STATE.
is_state() { [[ $(systemctl show -p ActiveState --value beacond.service) == "$1" ]]; }
# until_state STATE: waits (bounded) for beacond.service's ActiveState to become STATE.
until_state() {
    within 30 is_state "$1" && return 0
    detail="beacond.service is $(systemctl show -p ActiveState,SubState,Result beacond.service | tr '\n' ' ')"
    return 1
}

installed() {
    local path
    for path in /usr/bin/beacond /usr/bin/beaconctl; do
        [[ -x $path ]] || { detail="$path is not installed"; return 1; }
    done
    for path in /usr/lib/systemd/system/beacond.service /usr/lib/sysusers.d/beacond.conf \
        /usr/share/dbus-1/system.d/org.beacond.conf /usr/share/dbus-1/system-services/org.beacond.service \
        /etc/beacond/beacond.toml; do
        [[ -f $path ]] || { detail="$path is not installed"; return 1; }
    done
    [[ $(systemctl is-enabled beacond.service) == enabled ]] || { detail="beacond.service is not enabled"; return 1; }
    systemctl status --no-pager beacond.service
    until_state inactive
}

activated_by_bus() {
    # busctl asks for auto-start: dbus-daemon reads org.beacond.service and asks systemd for
    # dbus-org.beacond.service, the alias `systemctl enable` made.
    version=$(busctl get-property org.beacond /org/beacond org.beacond.Manager1 Version) ||
        { detail="busctl get-property Version as root failed: $(tail -n 1 "$log")"; return 1; }
    echo "Version: $version"
    until_state active
}

owned_by_beacond() {
    local uid pid main
    uid=$(busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus \
        GetConnectionUnixUser s org.beacond | awk '{print $2}')
    pid=$(busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus \
        GetConnectionUnixProcessID s org.beacond | awk '{print $2}')
    main=$(systemctl show -p MainPID --value beacond.service)
    echo "owner uid=$uid pid=$pid MainPID=$main"
    [[ $uid == "$(id -u beacond)" ]] || { detail="org.beacond is owned by uid '$uid', not beacond ($(id -u beacond))"; return 1; }
    [[ $pid == "$main" ]] || { detail="org.beacond is owned by pid '$pid', not the unit's MainPID $main"; return 1; }
}

status_as_root() {
    local output
    output=$(beaconctl status 2>&1) || { detail="exit $?: $(echo "$output" | tail -n 1)"; echo "$output"; return 1; }
    echo "$output"
    grep -i -E 'scanner|adapter|hci' <<<"$output" | head -n 6 | while IFS= read -r line; do say "NOTE beaconctl status: $line"; done
    return 0
}

status_as_admin() {
    local output
    output=$(as beacond-test-admin beaconctl status 2>&1) ||
        { detail="exit $?: $(echo "$output" | tail -n 1)"; echo "$output"; return 1; }
    echo "$output"
}

client_calls_as_user() {
    as beacond-test beaconctl --help >/dev/null || { detail="beaconctl --help as beacond-test exited $?"; return 1; }
    local user_version
    user_version=$(as beacond-test busctl get-property org.beacond /org/beacond org.beacond.Manager1 Version) ||
        { detail="busctl get-property Version as beacond-test failed"; return 1; }
    echo "Version as beacond-test: $user_version"
    [[ $user_version == "$version" ]] || { detail="beacond-test read Version $user_version, root $version"; return 1; }
}

status_denied_to_user() {
    local output status
    output=$(as beacond-test beaconctl status 2>&1)
    status=$?
    echo "$output"
    [[ $status == 77 ]] || { detail="beaconctl status as beacond-test exited $status, not 77: $(echo "$output" | tail -n 1)"; return 1; }
    # The daemon refuses non-admins too (exit 77 either way): the bus's own log says the installed
    # policy stopped the call before it reached the daemon.
    local uid
    uid=$(id -u beacond-test)
    within 10 bus_rejected "$uid" && return 0
    detail="dbus-daemon logged no rejection of Admin1.GetStatus from uid $uid: the policy let it through"
    return 1
}

# bus_rejected UID: dbus-daemon logged that its policy refused UID's Admin1.GetStatus.
bus_rejected() {
    journalctl --no-pager -o cat -t dbus-daemon | grep 'Rejected send message' | grep "(uid=$1 " |
        grep -q 'interface="org.beacond.Admin1" member="GetStatus"'
}

# scanning_now: beaconctl status says the daemon scans.
scanning_now() { beaconctl status 2>&1 | grep -q '^scanning now  *yes'; }

# scans_with_hci: a client ranging makes the daemon start its scanner; with the unit's ambient
# CAP_NET_RAW and CAP_NET_ADMIN, `auto` must pick hci on bluetoothd's hci0 and scan.
APP=org.beacond.SystemTest
scans_with_hci() {
    # Not through `as`: $! must be beaconctl itself (setpriv and env exec it), so that SIGTERM
    # reaches it and it ends its ranging before the daemon is stopped. A client still talking to
    # org.beacond during `systemctl stop` re-activates the daemon and cancels the stop job.
    setpriv --reuid=beacond-test --regid="$(id -g beacond-test)" --init-groups env HOME=/ \
        beaconctl client --app "$APP" range E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 \
        >"$SYSTEST_LOGS/client.log" 2>&1 &
    local client=$! output status
    within 30 beaconctl auth grant "$APP" when-in-use ||
        { detail="beaconctl auth grant $APP when-in-use never succeeded in $(bound 30) s"; kill "$client"; return 1; }
    within 30 scanning_now
    output=$(beaconctl status 2>&1)
    kill "$client"
    wait "$client"
    status=$?
    echo "$output"
    grep -E -A1 '^scanner ' <<<"$output" | while IFS= read -r line; do say "NOTE beaconctl status while ranging: $line"; done
    grep -q '^scanning now  *yes' <<<"$output" ||
        { detail="not scanning $(bound 30) s after the grant: $(grep -E -A1 '^scanner ' <<<"$output" | tr -s ' \n' ' ')"; return 1; }
    # The detail line under "scanner": "hci (auto: CAP_NET_RAW present): hci0 (ADDRESS): ...".
    grep -E -A1 '^scanner ' <<<"$output" | sed -n 2p | grep -E -q '^ *hci \(auto[^)]*\): hci0 ' ||
        { detail="auto did not pick hci on hci0: $(grep -E -A1 '^scanner ' <<<"$output" | tr -s ' \n' ' ')"; return 1; }
    [[ $status == 0 ]] || { detail="beaconctl client exited $status after SIGTERM (client.log)"; return 1; }
}

journal_shows_serving() {
    local journal
    journal=$(journalctl --no-pager -o short -u beacond.service)
    echo "$journal"
    grep -q 'beacond\[[0-9]*\]: beacond .* serving org.beacond on the system bus' <<<"$journal" ||
        { detail="journalctl -u beacond has no 'beacond[PID]: ... serving org.beacond on the system bus' line"; return 1; }
}

# stops_cleanly: systemctl stop, and the main process exited by itself with status 0.
stops_cleanly() {
    systemctl stop beacond.service || { detail="systemctl stop beacond exited $?"; return 1; }
    until_state inactive || return 1
    local show
    show=$(systemctl show -p ActiveState,Result,ExecMainCode,ExecMainStatus beacond.service)
    echo "$show"
    # ExecMainCode 1 = CLD_EXITED (not killed by a signal).
    grep -qx 'ExecMainStatus=0' <<<"$show" && grep -qx 'ExecMainCode=1' <<<"$show" &&
        grep -qx 'Result=success' <<<"$show" || { detail=$(tr '\n' ' ' <<<"$show"); return 1; }
}

started_by_systemctl() {
    systemctl start beacond.service || { detail="systemctl start beacond exited $?"; systemctl status --no-pager beacond.service; return 1; }
    until_state active || return 1
    beaconctl status >/dev/null || { detail="beaconctl status after systemctl start exited $?"; return 1; }
}

# hci0_powered: bluetoothd says its hci0 is powered.
hci0_powered() {
    busctl get-property org.bluez /org/bluez/hci0 org.bluez.Adapter1 Powered 2>/dev/null | grep -qx 'b true'
}

# bluetoothd (bluetooth.service, which beacond.service wants) with a virtual controller from btvirt
# (a transient unit), started one after the other: together, under software emulation, the
# kernel's HCI Reset to the new controller once timed out (hci0: Opcode 0x0c03 failed: -110).
virtual_controller() {
    systemctl start bluetooth.service || { detail="systemctl start bluetooth exited $?"; return 1; }
    systemd-run --unit=systest-btvirt --service-type=simple /usr/bin/btvirt -l1 ||
        { detail="systemd-run btvirt exited $?"; return 1; }
    within 30 hci0_powered && return 0
    detail="bluetoothd has no powered /org/bluez/hci0 $(bound 30) s after btvirt -l1 started"
    return 1
}

# monitors_door: beaconctl status lists the region systest-door.
monitors_door() { beaconctl status 2>/dev/null | grep -q systest-door; }
# restarted OLD: beacond.service is active with a main process other than OLD.
restarted() {
    local new
    new=$(systemctl show -p MainPID --value beacond.service)
    [[ $new != 0 && $new != "$1" ]] && is_state active
}

# regions_survive_kill: an Always app's region, left monitoring by its client, is in /var/lib/beacond
# (the hardened unit may write only its StateDirectory); after SIGKILL, Restart=on-failure starts a new
# daemon, which resumes the region without any client.
regions_survive_kill() {
    beaconctl auth grant "$APP" always || { detail="beaconctl auth grant $APP always exited $?"; return 1; }
    setpriv --reuid=beacond-test --regid="$(id -g beacond-test)" --init-groups env HOME=/ \
        beaconctl client --app "$APP" monitor E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1 --identifier systest-door \
        --keep-monitoring >"$SYSTEST_LOGS/monitor-client.log" 2>&1 &
    local client=$! old new output
    within 30 monitors_door
    kill "$client"
    wait "$client"
    output=$(beaconctl status 2>&1)
    echo "$output"
    grep -q systest-door <<<"$output" || { detail="the region is not monitored after its client left (--keep-monitoring)"; return 1; }
    ls -l /var/lib/beacond
    old=$(systemctl show -p MainPID --value beacond.service)
    systemctl kill -s KILL beacond.service || { detail="systemctl kill exited $?"; return 1; }
    within 30 restarted "$old"
    new=$(systemctl show -p MainPID --value beacond.service)
    [[ $new != 0 && $new != "$old" ]] || { detail="no new main process $(bound 30) s after SIGKILL (MainPID $new, was $old)"; return 1; }
    output=$(beaconctl status 2>&1)
    echo "$output"
    grep -q systest-door <<<"$output" ||
        { detail="the restarted daemon (pid $new) does not monitor systest-door: $(journalctl --no-pager -o cat -u beacond.service | tail -n 3 | tr '\n' ' ')"; return 1; }
    journalctl --no-pager -o cat -u beacond.service | grep -q 'resumed 1 monitored regions' ||
        { detail="the journal does not say the region was resumed"; return 1; }
}

# The app the clients register as, for beacond-test only (read when the daemon starts).
cat >/etc/beacond/apps.d/$APP.toml <<TOML
app_id = "$APP"
users = ["beacond-test"]
when_in_use_usage = "The system test ranges a beacon."
always_usage = "The system test monitors a region while nobody watches."
TOML

version=
check "bluetoothd powers hci0 from btvirt -l1" virtual_controller
check "beacond is installed by make install-only and enabled, not yet running" installed
check "a call to org.beacond activates beacond.service through the bus" activated_by_bus
check "org.beacond is owned by the unit's main process, running as user beacond" owned_by_beacond
check "beaconctl status as root" status_as_root
check "beaconctl status as beacond-test-admin (group beacond-admin)" status_as_admin
check "beaconctl --help and Manager1.Version as unprivileged beacond-test" client_calls_as_user
check "beaconctl status as beacond-test is refused by the bus policy (exit 77)" status_denied_to_user
check "a client ranging starts the hci scanner on hci0 (auto, ambient CAP_NET_RAW)" scans_with_hci
check "journalctl -u beacond shows the daemon serving org.beacond" journal_shows_serving
check "systemctl stop beacond: the daemon exits 0" stops_cleanly
check "systemctl start beacond: active and answering" started_by_systemctl
check "systemctl stop beacond again: the daemon exits 0" stops_cleanly
check "systemctl start beacond: active and answering" started_by_systemctl
check "an Always region survives SIGKILL: Restart=on-failure resumes it from /var/lib/beacond" regions_survive_kill
systemctl stop beacond.service

journalctl --no-pager -o short -b >"$SYSTEST_LOGS/journal.log" 2>&1
say "DONE $failures"
