#!/bin/bash
# The checks of run.sh's systemd-package guest run (Tests/Package/deb-test.sh builds its root): a clean Debian
# 12 root made by mmdebstrap, with no Swift, where `apt-get install` put the previous package (beacond
# $SYSTEST_PREVIOUS_VERSION), booted under its own systemd. Started by beacond-systest.service
# (prepare-systemd.sh), it does what a user of the package does: starts beacond.service from the package,
# edits beacond.toml, runs the client flow with the package's beaconctl against the scanner on btvirt's
# virtual controllers, upgrades to the new package with apt (the edit, the decisions and the regions must
# stay, and the service must come back as the new version), reads the man pages, completes commands in
# bash, fish and zsh, and purges the package (nothing of it may stay). One console line per check (run.sh
# counts them); command output goes to $SYSTEST_LOGS/package-checks.log.
set -u
export PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive
log=$SYSTEST_LOGS/package-checks.log
# check, say, as, bound, within.
# shellcheck source=checks.sh
source "$(dirname "$0")/checks.sh"
APP=com.example.systest
UUID=E2C56DB5-DFFB-48D2-B060-D0F5A71096E0
ADVERT=1
new_deb=/root/$(basename "$SYSTEST_NEW_DEB")
new_version=$SYSTEST_NEW_VERSION
previous_version=$SYSTEST_PREVIOUS_VERSION

is_state() { [[ $(systemctl show -p ActiveState --value beacond.service) == "$1" ]]; }
main_pid() { systemctl show -p MainPID --value beacond.service; }
bus_version() { busctl get-property org.beacond /org/beacond org.beacond.Manager1 Version 2>/dev/null; }
powered() {
    busctl get-property org.bluez "/org/bluez/$1" org.bluez.Adapter1 Powered 2>/dev/null | grep -qx 'b true'
}
# in_log FILE PATTERN: FILE has a line matching PATTERN.
in_log() { grep -q -- "$2" "$1" 2>/dev/null; }

no_swift() {
    dpkg-query -W -f '${Version} ${Status}\n' beacond
    [[ $(dpkg-query -W -f '${Version}' beacond) == "$previous_version" ]] ||
        { detail="beacond $(dpkg-query -W -f '${Version}' beacond) is installed, not $previous_version"; return 1; }
    [[ $(systemctl is-enabled beacond.service) == enabled ]] || { detail="apt did not enable beacond.service"; return 1; }
    if command -v swift swiftc; then detail="a Swift toolchain is on PATH"; return 1; fi
    local runtime
    runtime=$(find /usr /lib /opt -name 'libswiftCore.so*' -o -name 'libFoundation.so*' -o -name 'libdispatch.so*' 2>/dev/null)
    [[ -z $runtime ]] || { detail="a Swift runtime is on the system: $runtime"; return 1; }
    ldd /usr/bin/beacond /usr/bin/beaconctl
    ! ldd /usr/bin/beacond /usr/bin/beaconctl | grep -q 'not found' || { detail="a library the binaries need is missing"; return 1; }
    id beacond && getent group beacond-admin
}

# btvirt's two controllers first, then bluetoothd (as btvirt_test.py does): bringing both up while bluetoothd
# initialises them under software emulation once timed out the kernel's HCI Reset, leaving hci0 down.
controllers_present() { [[ -e /sys/class/bluetooth/hci0 && -e /sys/class/bluetooth/hci1 ]]; }
controllers_gone() { [[ ! -e /sys/class/bluetooth/hci0 && ! -e /sys/class/bluetooth/hci1 ]]; }
virtual_controllers() {
    # On a loaded host, btvirt (a process of this emulated guest, paged in over 9p) can miss the kernel's fixed
    # 10 s bound for answering the first HCI Reset (hci0: Opcode 0x0c03 failed: -110, seen with another guest
    # running on the host), and the controller stays down. That is the emulation's timing, not beacond's: the
    # programs are read once beforehand, and the controllers are made again, up to three times.
    cat /usr/bin/btvirt /usr/libexec/bluetooth/bluetoothd /usr/bin/btmgmt >/dev/null
    local attempt
    for attempt in 1 2 3; do
        systemctl stop bluetooth.service systest-btvirt.service 2>/dev/null
        systemctl reset-failed systest-btvirt.service 2>/dev/null
        within 30 controllers_gone || { detail="btvirt's controllers did not go away"; return 1; }
        systemd-run --unit=systest-btvirt --service-type=simple /usr/bin/btvirt -l2 ||
            { detail="systemd-run btvirt exited $?"; return 1; }
        within 30 controllers_present || { detail="btvirt -l2 made no hci0 and hci1 in $(bound 30) s"; return 1; }
        systemctl start bluetooth.service || { detail="systemctl start bluetooth exited $?"; return 1; }
        within 30 powered hci0 && within 30 powered hci1 && return 0
        echo "attempt $attempt: hci0 $(powered hci0 && echo on || echo off), hci1 $(powered hci1 && echo on || echo off)"
        dmesg | grep -i 'hci[01]' | tail -n 5
        say "NOTE attempt $attempt: btvirt's controllers were not both powered; made again"
    done
    detail="bluetoothd had no powered hci0 and hci1 after 3 attempts (hci0: $(powered hci0 && echo on || echo off), hci1: $(powered hci1 && echo on || echo off))"
    return 1
}

# hci1 advertises the iBeacon UUID:1:11 (manufacturer data, Apple's company id); btvirt reports it to the
# scanning hci0 once per scan enable.
advertise() {
    btmgmt --index 1 add-adv -d 1aff4c000215${UUID//-/}0001000bc5 -g "$ADVERT"
}

# The administrator's edit the upgrade must keep, and the app's declaration (an administrator's own file).
configure() {
    # hci0 scans; hci1 is the beacon.
    sed -i -e 's/^#exit_timeout = 30$/exit_timeout = 12/' -e 's/^#source = "auto"$/source = "hci:hci0"/' /etc/beacond/beacond.toml
    grep -qx 'exit_timeout = 12' /etc/beacond/beacond.toml && grep -qx 'source = "hci:hci0"' /etc/beacond/beacond.toml ||
        { detail="the shipped beacond.toml has no '#exit_timeout = 30' or '#source = \"auto\"' line"; return 1; }
    cat >/etc/beacond/apps.d/$APP.toml <<TOML
app_id = "$APP"
users = ["beacond-test"]
always_usage = "The package test monitors a region while nobody watches."
TOML
}

started() {
    systemctl start beacond.service || { detail="systemctl start beacond exited $?: $(journalctl --no-pager -o cat -u beacond.service | tail -n 3 | tr '\n' ' ')"; return 1; }
    within 30 is_state active || { detail="beacond.service is $(systemctl show -p ActiveState --value beacond.service)"; return 1; }
    local version uid
    version=$(bus_version)
    echo "Version $version"
    [[ $version == "s \"$previous_version\"" ]] || { detail="org.beacond says Version $version"; return 1; }
    uid=$(busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus GetConnectionUnixUser s org.beacond | awk '{print $2}')
    [[ $uid == "$(id -u beacond)" ]] || { detail="org.beacond is owned by uid $uid, not beacond"; return 1; }
}

client_before=$SYSTEST_LOGS/client-before-upgrade.log
client_pid=
enters_before_upgrade() {
    beaconctl auth grant "$APP" always || { detail="beaconctl auth grant exited $?"; return 1; }
    as beacond-test beaconctl client --app "$APP" monitor "$UUID:1" --identifier systest-door --keep-monitoring \
        >"$client_before" 2>&1 &
    client_pid=$!
    within 60 in_log "$client_before" DidEnterRegion && return 0
    detail="no DidEnterRegion in $(bound 60) s: $(tail -n 3 "$client_before" | tr '\n' ' ')"
    return 1
}
# bluetoothd's discovery starts scanning anew every few seconds, and btvirt reports the advert at each start:
# the beacon is silent only once hci1 stops advertising.
exits_before_upgrade() {
    btmgmt --index 1 rm-adv "$ADVERT" || { detail="btmgmt rm-adv exited $?"; return 1; }
    within 60 in_log "$client_before" DidExitRegion && return 0
    detail="no DidExitRegion in $(bound 60) s after hci1 stopped advertising: $(tail -n 3 "$client_before" | tr '\n' ' ')"
    return 1
}

old_pid=
upgraded() {
    old_pid=$(main_pid)
    cp /etc/beacond/beacond.toml /root/beacond.toml.before
    # As an administrator would: no --force-conf* option, stdin not a terminal.
    apt-get install -y "$new_deb" </dev/null || { detail="apt-get install $new_deb exited $?"; return 1; }
    [[ $(dpkg-query -W -f '${Version}' beacond) == "$new_version" ]] ||
        { detail="beacond $(dpkg-query -W -f '${Version}' beacond) is installed after the upgrade"; return 1; }
}
kept_config() {
    cmp /root/beacond.toml.before /etc/beacond/beacond.toml || { detail="beacond.toml changed in the upgrade"; return 1; }
    local leftovers
    leftovers=$(ls /etc/beacond/*.dpkg-* 2>/dev/null)
    [[ -z $leftovers ]] || { detail="dpkg left $leftovers"; return 1; }
}
restarted_as_new() {
    within 30 is_state active || { detail="beacond.service is not active after the upgrade"; return 1; }
    local pid version
    pid=$(main_pid)
    version=$(bus_version)
    echo "MainPID $old_pid -> $pid, Version $version"
    [[ $pid != "$old_pid" && $pid != 0 ]] || { detail="the upgrade did not restart beacond (MainPID $pid)"; return 1; }
    [[ $version == "s \"$new_version\"" ]] || { detail="org.beacond says Version $version after the upgrade"; return 1; }
}
kept_decisions() {
    local output
    output=$(beaconctl auth list 2>&1)
    echo "$output"
    grep "$APP" <<<"$output" | grep -q -i always || { detail="beaconctl auth list: $(grep "$APP" <<<"$output")"; return 1; }
}
kept_regions() {
    local output
    output=$(beaconctl regions 2>&1)
    echo "$output"
    grep -q systest-door <<<"$output" || { detail="beaconctl regions does not list systest-door"; return 1; }
    journalctl --no-pager -o cat -u beacond.service | grep 'resumed'
}

client_after=$SYSTEST_LOGS/client-after-upgrade.log
# The app's next client takes the region over from the new daemon (it was outside when the upgrade came);
# then hci1 advertises again, and the client hears the entry.
enters_after_upgrade() {
    as beacond-test beaconctl client --app "$APP" monitor "$UUID:1" --identifier systest-door --keep-monitoring \
        >"$client_after" 2>&1 &
    local pid=$!
    within 30 in_log "$client_after" DidStartMonitoring || { detail="the client did not start monitoring: $(tail -n 3 "$client_after" | tr '\n' ' ')"; kill "$pid"; return 1; }
    ! in_log "$client_after" DidEnterRegion || { detail="an entry before hci1 advertised again"; kill "$pid"; return 1; }
    advertise || { detail="btmgmt add-adv exited $?"; kill "$pid"; return 1; }
    within 60 in_log "$client_after" DidEnterRegion
    local status=$?
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    ((status == 0)) || { detail="no DidEnterRegion in $(bound 60) s: $(tail -n 3 "$client_after" | tr '\n' ' ')"; return 1; }
}

man_pages() {
    man -w beacond beaconctl 5 beacond.toml || { detail="man -w does not find the pages"; return 1; }
    MANWIDTH=100 man 8 beacond | grep -q -- '--state-dir' || { detail="man beacond has no --state-dir"; return 1; }
    MANWIDTH=100 man 1 beaconctl | grep -q 'auth' || { detail="man beaconctl has no auth"; return 1; }
    MANWIDTH=100 man 5 beacond.toml | grep -q 'max_regions_per_app' || { detail="man 5 beacond.toml has no max_regions_per_app"; return 1; }
}
bash_completion() {
    local words
    words=$(bash -c 'source /usr/share/bash-completion/bash_completion; _completion_loader beaconctl
        COMP_WORDS=(beaconctl auth gr); COMP_CWORD=2; COMP_LINE="beaconctl auth gr"; COMP_POINT=${#COMP_LINE}
        _beaconctl beaconctl gr auth; printf "%s\n" "${COMPREPLY[@]}"')
    echo "$words"
    [[ $words == grant ]] || { detail="bash completes 'beaconctl auth gr' to '$words'"; return 1; }
}
fish_completion() {
    local words
    words=$(HOME=/root fish -c 'complete -C "beaconctl auth gr"' | cut -f1)
    echo "$words"
    [[ $words == grant ]] || { detail="fish completes 'beaconctl auth gr' to '$words'"; return 1; }
}
zsh_completion() {
    # compinit binds both commands to the package's functions ...
    local binding words
    binding=$(zsh -fc 'autoload -U compinit; compinit -u -d /tmp/zcompdump; print -r -- "${_comps[beaconctl]} ${_comps[beacond]}"')
    echo "$binding"
    [[ $binding == "_beaconctl _beacond" ]] || { detail="zsh's compinit binds beaconctl and beacond to '$binding'"; return 1; }
    # ... and a tab typed in an interactive zsh (on zpty's pseudo-terminal) offers grant: compadd is wrapped to
    # write down what the completion functions offer.
    rm -f /tmp/zsh-offers
    cat >/tmp/zsh-complete.zsh <<ZSH
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z 'autoload -U compinit; compinit -u -d /tmp/zcompdump'
zpty -w z 'compadd () { builtin compadd -O offers "\$@"; builtin compadd "\$@"; print -l -- \${offers[@]} >>/tmp/zsh-offers }'
zpty -w z \$'beaconctl auth gr\t'
integer i
for (( i = 0; i < $(bound 30) * 2; i++ )); do [[ -s /tmp/zsh-offers ]] && break; sleep 0.5; done
sleep 1
zpty -d z
ZSH
    zsh -f /tmp/zsh-complete.zsh
    words=$(sort -u /tmp/zsh-offers 2>/dev/null)
    echo "$words"
    [[ $words == grant ]] || { detail="zsh completes 'beaconctl auth gr' to '$words'"; return 1; }
}

purged() {
    rm /etc/beacond/apps.d/$APP.toml
    apt-get purge -y beacond </dev/null || { detail="apt-get purge beacond exited $?"; return 1; }
    local path left=()
    for path in /usr/bin/beacond /usr/bin/beaconctl /lib/systemd/system/beacond.service /usr/lib/sysusers.d/beacond.conf \
        /usr/share/dbus-1/system.d/org.beacond.conf /usr/share/dbus-1/system-services/org.beacond.service \
        /usr/share/doc/beacond /etc/beacond /var/lib/beacond /etc/systemd/system/multi-user.target.wants/beacond.service \
        /etc/systemd/system/dbus-org.beacond.service /usr/share/man/man8/beacond.8.gz; do
        [[ -e $path || -L $path ]] && left+=("$path")
    done
    [[ ${#left[@]} -eq 0 ]] || { detail="purge left ${left[*]}"; return 1; }
    if pgrep -x beacond; then detail="a beacond process runs after purge"; return 1; fi
    ! busctl status org.beacond >/dev/null 2>&1 || { detail="org.beacond is still on the bus"; return 1; }
}

# A machine that never had beacond: the accounts go too (purge keeps them, as Debian does). Installing on a
# running system must create the account, enable and start the service, and the bus must let user beacond own
# org.beacond.
installed_fresh() {
    userdel beacond && groupdel beacond-admin || { detail="could not delete the accounts"; return 1; }
    getent group beacond >/dev/null && groupdel beacond
    apt-get install -y "$new_deb" </dev/null || { detail="apt-get install $new_deb exited $?"; return 1; }
    within 30 is_state active || { detail="beacond.service is $(systemctl show -p ActiveState,Result --value beacond.service | tr '\n' ' '): $(journalctl --no-pager -o cat -u beacond.service | tail -n 3 | tr '\n' ' ')"; return 1; }
    local version uid
    version=$(bus_version)
    uid=$(busctl call org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus GetConnectionUnixUser s org.beacond | awk '{print $2}')
    echo "Version $version, owner uid $uid"
    [[ $version == "s \"$new_version\"" && $uid == "$(id -u beacond)" ]] ||
        { detail="org.beacond says Version $version, owned by uid $uid"; return 1; }
}

check "beacond $previous_version installed by apt and enabled; no Swift toolchain or runtime on the system" no_swift
check "bluetoothd powers btvirt's hci0 and hci1" virtual_controllers
check "hci1 advertises an iBeacon (btmgmt add-adv)" advertise
check "the administrator edits beacond.toml (exit_timeout, scanner source) and declares an app in apps.d" configure
check "systemctl start beacond: the package's unit runs $previous_version as user beacond" started
check "an Always client ($previous_version) hears DidEnterRegion from the scanner on hci0" enters_before_upgrade
check "... and DidExitRegion once hci1 stops advertising (btmgmt rm-adv)" exits_before_upgrade
[[ -n $client_pid ]] && kill "$client_pid" 2>/dev/null
check "apt-get install ./beacond_${new_version}.deb upgrades $previous_version" upgraded
check "the upgrade keeps the edited beacond.toml (no prompt, no .dpkg-dist)" kept_config
check "the upgrade restarts beacond.service as $new_version" restarted_as_new
check "the authorization decision survives the upgrade (beaconctl auth list)" kept_decisions
check "the monitored region survives the upgrade (beaconctl regions)" kept_regions
check "after the upgrade the app's next client takes the region over and hears DidEnterRegion when hci1 advertises again" enters_after_upgrade
check "man beacond, man beaconctl, man 5 beacond.toml" man_pages
check "bash completes 'beaconctl auth gr' to grant" bash_completion
check "fish completes 'beaconctl auth gr' to grant" fish_completion
check "zsh completes 'beaconctl auth gr' to grant (compinit binds both commands)" zsh_completion
check "apt-get purge beacond: the service stops and nothing of the package is left" purged
check "apt-get install on the running system, with no beacond account yet: the service starts and owns org.beacond" installed_fresh

journalctl --no-pager -o short -b >"$SYSTEST_LOGS/journal.log" 2>&1
say "DONE $failures"
