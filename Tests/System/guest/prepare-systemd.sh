#!/bin/bash
# Prepares the guest's overlay root for booting the host's systemd (run by stage.sh prepare-systemd,
# chrooted, before init switches to /lib/systemd/systemd): installs beacond the way an administrator
# does (`make install-only`, then the steps it prints: systemd-sysusers, systemctl enable), adds
# the test's accounts, and writes beacond-systest.target (booted with systemd.unit=) with the
# oneshot beacond-systest.service that runs systemd_test.sh and powers the guest off. Units that
# only slow a boot under software emulation, or wait for hardware the guest does not have, are
# masked. Everything written here lands in the overlay's tmpfs: the host is never changed.
set -u
say() { echo "SYSTEST $*" >/dev/console; }
log=$SYSTEST_LOGS/prepare-systemd.log
exec >>"$log" 2>&1
set -x

# In a package run (SYSTEST_PACKAGE=1) the root is a clean Debian 12 root where apt installed the package,
# which created the account and enabled the unit: nothing is installed here.
if [[ -z ${SYSTEST_PACKAGE:-} ]]; then
    # make install-only wants both binaries in one directory, under their own names.
    bin=$(dirname "$BEACOND")
    if [[ $(basename "$BEACOND") != beacond || $(basename "$BEACONCTL") != beaconctl ||
        $(dirname "$BEACONCTL") != "$bin" ]]; then
        bin=/var/tmp/beacond-systest-bin
        install -D -m 0755 "$BEACOND" "$bin/beacond" && install -D -m 0755 "$BEACONCTL" "$bin/beaconctl"
    fi
    # DESTDIR empty: the overlay is this guest's real root, so this is `make install` on the guest.
    if ! make -C "$SYSTEST_REPO" install-only DESTDIR= RELEASE_BIN="$bin"; then
        say "FAIL make install-only: see prepare-systemd.log"
    fi
    # What make install says to do next (daemon-reload and reloading dbus are moot before boot).
    systemd-sysusers || say "FAIL systemd-sysusers: see prepare-systemd.log"
    systemctl enable beacond.service || say "FAIL systemctl enable beacond: see prepare-systemd.log"
fi

# The test's callers (the host may already have them from packaging-test.sh; the overlay keeps
# any change here): an unprivileged user and an administrator.
getent passwd beacond-test >/dev/null || useradd --system --no-create-home --shell /usr/sbin/nologin beacond-test
getent passwd beacond-test-admin >/dev/null ||
    useradd --system --no-create-home --shell /usr/sbin/nologin beacond-test-admin
usermod -aG beacond-admin beacond-test-admin

# The host may be a container: its /.dockerenv would make systemd think so too (and then ignore
# systemd.unit= on the kernel command line). The guest is a virtual machine.
rm -f /.dockerenv

units=/etc/systemd/system
cat >"$units/beacond-systest.target" <<UNIT
[Unit]
Description=beacond system test under systemd
Wants=dbus.socket beacond-systest.service
UNIT
cat >"$units/beacond-systest.service" <<UNIT
[Unit]
Description=beacond system test checks
Requires=dbus.socket
After=dbus.socket basic.target
# Whatever happens, the guest powers off when the checks end (run.sh waits for QEMU to exit).
SuccessAction=poweroff-force
FailureAction=poweroff-force

[Service]
Type=oneshot
Environment=SYSTEST_OUT=$SYSTEST_OUT SYSTEST_LOGS=$SYSTEST_LOGS SYSTEST_REPO=$SYSTEST_REPO SYSTEST_SPEED=$SYSTEST_SPEED
Environment=SYSTEST_NEW_DEB=${SYSTEST_NEW_DEB:-} SYSTEST_NEW_VERSION=${SYSTEST_NEW_VERSION:-} SYSTEST_PREVIOUS_VERSION=${SYSTEST_PREVIOUS_VERSION:-}
ExecStart=/bin/bash $SYSTEST_REPO/Tests/System/guest/${SYSTEST_CHECKS:-systemd_test.sh}
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
# 240 s (600 s for the package run, which upgrades and purges) times the guest's speed factor (stage.sh
# measured it with pace.py).
TimeoutStartSec=$(awk -v t="${SYSTEST_PACKAGE:+600}" -v f="$SYSTEST_SPEED" 'BEGIN { printf "%d", (t ? t : 240) * f + 0.999 }')
UNIT

# Not needed for the test, and slow or hanging in a guest without disks, network or terminals.
# systemd-tmpfiles-setup (--create --remove --boot over the host's root on 9p) took 90 s under TCG.
set +x
for unit in systemd-tmpfiles-setup.service systemd-tmpfiles-clean.timer dpkg-db-backup.timer \
    getty.target serial-getty@ttyS0.service getty@tty1.service console-getty.service \
    systemd-udev-settle.service systemd-networkd.service networking.service NetworkManager.service \
    systemd-timesyncd.service systemd-pstore.service postgresql.service e2scrub_reap.service \
    remote-fs.target systemd-firstboot.service systemd-repart.service systemd-machine-id-commit.service \
    systemd-binfmt.service proc-sys-fs-binfmt_misc.automount systemd-random-seed.service \
    systemd-update-utmp.service systemd-logind.service cron.service ssh.service apt-daily.timer \
    apt-daily-upgrade.timer man-db.timer e2scrub_all.timer fstrim.timer logrotate.timer; do
    ln -sf /dev/null "$units/$unit"
    echo "masked $unit"
done
