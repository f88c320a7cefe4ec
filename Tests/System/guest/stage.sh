#!/bin/bash
# The guest's second stage, run chrooted in the overlay on the host's root (see init). Mounts what
# a Linux system has (proc, sys, dev, run, tmp), makes the guest kernel's modules reachable for
# modprobe, reads the run's settings from OUT/env (written by run.sh) and runs the scenario
# command with its output on the serial console. With `prepare-systemd` it only prepares the root
# for systemd (run.sh's systemd scenario boots it next).
set -u
mode=${1:-}
mount -t proc proc /proc
out=$(sed -n 's/.*systest\.out=\([^ ]*\).*/\1/p' /proc/cmdline)
# shellcheck source=/dev/null
. "$out/env"
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8
unset PYTHONPATH PYENV_VERSION VIRTUAL_ENV

# The guest kernel's modules, where modprobe and the kernel's request_module look.
# (Not in a package run's root, which has no view of this machine's cache: the initramfs loaded what it needs.)
if [[ -d $SYSTEST_KERNEL_ROOT/lib/modules/$SYSTEST_KERNEL_VERSION ]]; then
    mkdir -p "/lib/modules/$SYSTEST_KERNEL_VERSION"
    mount --bind "$SYSTEST_KERNEL_ROOT/lib/modules/$SYSTEST_KERNEL_VERSION" "/lib/modules/$SYSTEST_KERNEL_VERSION"
fi

# The guest's speed factor (pace.py), measured first, before anything else loads the guest: the scenarios'
# bounds and run.sh's deadline for this run are multiplied by it (SYSTEST SPEED), so a loaded host gets the time
# it takes while a hung guest still fails.
# (No process substitution: before systemd boots, this root has no /dev/fd.)
pace=$(python3 "$SYSTEST_REPO/Tests/System/guest/pace.py" guest "$SYSTEST_HOST_PACE")
# shellcheck disable=SC2086
set -- $pace
SYSTEST_SPEED=${1:-1}
[[ $SYSTEST_SPEED =~ ^[0-9]+(\.[0-9]+)?$ ]] || SYSTEST_SPEED=1
echo "SYSTEST NOTE guest speed factor $SYSTEST_SPEED: a unit of work takes ${3:-?} s here, ${2:-?} times the host's best"
echo "SYSTEST SPEED $SYSTEST_SPEED"
export SYSTEST_SPEED

if [[ $mode == prepare-systemd ]]; then
    "$SYSTEST_REPO/Tests/System/guest/prepare-systemd.sh"
    exit
fi

mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null || true
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs -o mode=0755 tmpfs /run
# A fresh /tmp, but a repository that lives under the host's /tmp (a CI clone) must stay visible: keep
# the host's /tmp reachable and bind the repository back into place.
mkdir -p /run/host-tmp
mount --bind /tmp /run/host-tmp
mount -t tmpfs -o mode=1777 tmpfs /tmp
if [[ "$SYSTEST_REPO" == /tmp/* ]]; then
    mkdir -p "$SYSTEST_REPO"
    mount --bind "/run/host-tmp/${SYSTEST_REPO#/tmp/}" "$SYSTEST_REPO"
fi
mount -t tmpfs -o mode=0755 tmpfs /var/lib/bluetooth 2>/dev/null || true
hostname systest

# shellcheck disable=SC2086
cd "$SYSTEST_REPO" && $SYSTEST_COMMAND </dev/null >/dev/console 2>&1
echo "SYSTEST DONE $?" >/dev/console
