#!/usr/bin/env bash
# The system test on the real Linux Bluetooth stack: boots a Debian kernel under QEMU (software
# emulation: these machines have no radio and their own kernel has no Bluetooth), shares this
# machine's root read-only with the guest so it runs the freshly built beacond and beaconctl, the
# installed dbus-daemon, bluetoothd and BlueZ's tools, and runs scenarios there: virtual controllers
# from btvirt and from our own scripted controller (vhci_controller.py), beacond with the hci and
# the bluez scanner, adapter lifecycle, and the real beacond.service under the guest's systemd.
#
# Usage: Tests/System/run.sh [BEACOND BEACONCTL]    (default .build/debug/beacond, .build/debug/beaconctl;
#        or the environment's BEACOND and BEACONCTL)
#        Tests/System/run.sh --package ROOT NEW_DEB PREVIOUS_VERSION
#            the package run alone (Tests/Package/deb-test.sh): boots ROOT, a clean Debian 12 root where apt
#            installed beacond PREVIOUS_VERSION, under its own systemd, and runs guest/package_test.sh there,
#            which upgrades to NEW_DEB; ROOT is shared with the guest instead of this machine's root
#   BEACOND_SYSTEST_CACHE   where the kernel package is kept between runs (default /var/cache/beacond-systest)
#   BEACOND_SYSTEST_ONLY    run only the guest runs whose names contain this word (e.g. btvirt)
#   BEACOND_SYSTEST_KEEP=1  keep the run's directory (logs, captures) after a passing run too
# Needs root (apt-get, and the guest shares / as this user). Prints one line per check, the logs
# of a guest run with a failure, and ends with "N passed, N failed"; exits 1 when any check failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
package_root=
if [[ ${1:-} == --package ]]; then
    package_root=$(realpath "$2")
    package_deb=$(realpath "$3")
    package_previous=$4
    set -- /usr/bin/beacond /usr/bin/beaconctl
fi
beacond=$(realpath -m "${1:-${BEACOND:-.build/debug/beacond}}")
beaconctl=$(realpath -m "${2:-${BEACONCTL:-.build/debug/beaconctl}}")
# The root the guest boots (shared read-only over 9p, under a tmpfs overlay) and where the guest scripts are
# in it: this machine's root and this repository, or a package root with the scripts copied in.
guest_root=/
guest_repo=$repo
cache=${BEACOND_SYSTEST_CACHE:-/var/cache/beacond-systest}
only=${BEACOND_SYSTEST_ONLY:-}
started=$SECONDS

passed=0
failed=0
pass() { echo "ok   $1"; passed=$((passed + 1)); }
fail() {
    echo "FAIL $1"
    failed=$((failed + 1))
}
finish() {
    echo "# system test took $((SECONDS - started)) s"
    echo "$passed passed, $failed failed"
    if [[ $failed -eq 0 && -z "${BEACOND_SYSTEST_KEEP:-}" ]]; then
        rm -rf "$work"
    else
        echo "# logs kept in $work"
    fi
    [[ $failed -eq 0 ]]
    exit
}

# Not under /tmp: the guest mounts a fresh tmpfs there, which would hide the shared directory.
work=$(mktemp -d /var/tmp/beacond-systest.XXXXXX)
chmod 0755 "$work"

# ---------------------------------------------------------------------------------------------
# What the guest needs on this machine

if [[ $(id -u) -ne 0 ]]; then
    fail "the system test runs as root (apt-get; the guest shares / as this user)"
    finish
fi
if ! deps_log=$(scripts/install-deps.sh test 2>&1); then
    echo "$deps_log" | tail -n 20 | sed 's/^/       /'
    fail "scripts/install-deps.sh test installs QEMU, busybox, BlueZ and their tools"
    finish
fi
for binary in "$beacond" "$beaconctl"; do
    if [[ -z $package_root && ! -x $binary ]]; then
        fail "$binary is built (make test builds it with swift build --build-tests)"
        finish
    fi
done

# ---------------------------------------------------------------------------------------------
# The kernel: Debian's, downloaded once into the cache, unpacked, with modules.dep

kernel_package=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -n 1)
kernel_version=${kernel_package#linux-image-}
if [[ -z $kernel_package ]]; then
    fail "apt-cache depends linux-image-amd64 names a kernel package (run apt-get update)"
    finish
fi
kernel_root=$cache/$kernel_version/root
if [[ ! -f $cache/$kernel_version/ready ]]; then
    echo "# downloading $kernel_package into $cache (once)"
    rm -rf "${cache:?}/$kernel_version"
    mkdir -p "$cache/$kernel_version"
    if ! (cd "$cache/$kernel_version" && apt-get download "$kernel_package" >download.log 2>&1 &&
        dpkg-deb -x "$kernel_package"_*.deb root && rm -f "$kernel_package"_*.deb &&
        depmod -b root "$kernel_version" && touch ready); then
        sed 's/^/       /' "$cache/$kernel_version/download.log"
        fail "download and unpack $kernel_package into $cache"
        finish
    fi
fi
pass "kernel $kernel_version unpacked in $cache"

# The initramfs: static busybox, the modules the guest needs (in load order), guest/init.
modules=(virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci netfs fscache 9pnet
    9pnet_virtio 9p overlay crc16 ecc ecdh_generic rfkill af_alg algif_hash algif_skcipher cmac ecb
    bluetooth hci_vhci)
build_initramfs() {
    local tree=$work/initramfs module path
    mkdir -p "$tree/bin" "$tree/modules" "$tree/proc" "$tree/sys" "$tree/dev"
    cp /bin/busybox "$tree/bin/busybox" || return 1
    file -L "$tree/bin/busybox" 2>/dev/null | grep -q 'statically linked' ||
        ldd /bin/busybox 2>&1 | grep -q 'not a dynamic' || { echo "/bin/busybox is not static"; return 1; }
    for module in "${modules[@]}"; do
        path=$(modinfo -b "$kernel_root" -k "$kernel_version" -n "$module" 2>&1) ||
            { echo "module $module: $path"; return 1; }
        cp "$path" "$tree/modules/$module.ko" || return 1
        echo "$module" >>"$tree/modules.order"
    done
    install -m 0755 Tests/System/guest/init "$tree/init"
    (cd "$tree" && find . | cpio -o -H newc --quiet | gzip -1 >"$work/initrd.gz")
}
if ! initramfs_log=$(build_initramfs 2>&1); then
    echo "$initramfs_log" | sed 's/^/       /'
    fail "initramfs with busybox-static and the Bluetooth, 9p and overlay modules"
    finish
fi
pass "initramfs with busybox-static and ${#modules[@]} modules"

# ---------------------------------------------------------------------------------------------
# Guest runs

# guest_run NAME TIMEOUT COMMAND...: boots the guest, which runs COMMAND (in the repo, as root) with
# BEACOND, BEACONCTL and SYSTEST_OUT (a directory shared with this machine, for logs) in its
# environment. Every "SYSTEST PASS name" / "SYSTEST FAIL name: reason" line on the serial console
# is a check. The run itself fails when the guest does not report "SYSTEST DONE" within TIMEOUT
# seconds times the guest's speed factor: as it starts, the guest times a unit of work against this
# machine's best time for it (Tests/System/guest/pace.py; SYSTEST_HOST_PACE) and reports how much
# slower than on an idle host it runs ("SYSTEST SPEED factor", 1 to 6); its own bounds grow alike.
# With any failure, the guest's logs are printed.
guest_run() {
    local name=$1 timeout=$2
    shift 2
    if [[ -n $only && $name != *"$only"* ]]; then
        return
    fi
    local out=$work/$name
    mkdir -p "$out/logs"
    chmod 0777 "$out" "$out/logs"
    local host_pace
    host_pace=$(python3 Tests/System/guest/pace.py host) || host_pace=0.005
    cat >"$out/env" <<ENV
export SYSTEST_REPO='$guest_repo' SYSTEST_OUT='$out' SYSTEST_LOGS='$out/logs'
export SYSTEST_KERNEL_VERSION='$kernel_version' SYSTEST_KERNEL_ROOT='$kernel_root'
export BEACOND='$beacond' BEACONCTL='$beaconctl'
export SYSTEST_COMMAND='$*' SYSTEST_HOST_PACE='$host_pace'
ENV
    if [[ -n $package_root ]]; then
        cat >>"$out/env" <<ENV
export SYSTEST_PACKAGE=1 SYSTEST_CHECKS=package_test.sh SYSTEST_NEW_DEB='$package_deb'
export SYSTEST_NEW_VERSION='$(dpkg-deb -f "$package_deb" Version)' SYSTEST_PREVIOUS_VERSION='$package_previous'
ENV
    fi
    # A systemd run boots the host's systemd into the test's own target (prepare-systemd.sh).
    local systemd=0 boot=
    [[ $name == systemd* ]] && systemd=1 boot=" systemd.unit=beacond-systest.target"
    echo "# guest run $name: $*"
    local run_started=$SECONDS failures_before=$failed done= line speed=1 limit=$timeout qemu console
    exec {console}< <(exec qemu-system-x86_64 -accel tcg -cpu max -m 2048 -smp 2 \
        -nographic -no-reboot -monitor none -serial stdio \
        -kernel "$kernel_root/boot/vmlinuz-$kernel_version" -initrd "$work/initrd.gz" \
        -append "console=ttyS0 quiet loglevel=3 panic=-1 systest.out=$out systest.systemd=$systemd systest.stage=$guest_repo/Tests/System/guest/stage.sh$boot" \
        -fsdev local,id=host,path="$guest_root",security_model=none,readonly=on,multidevs=remap \
        -device virtio-9p-pci,fsdev=host,mount_tag=host \
        -fsdev local,id=out,path="$out",security_model=none,multidevs=remap \
        -device virtio-9p-pci,fsdev=out,mount_tag=out \
        -nic none </dev/null 2>&1)
    qemu=$!
    # Until the console closes (QEMU exits) or the deadline passes; the deadline moves once the guest
    # reports its speed factor.
    while (( SECONDS - run_started < limit )); do
        IFS= read -r -t $((limit - (SECONDS - run_started))) -u "$console" line || { (($? > 128)) && continue; break; }
        line=${line//$'\r'/}
        echo "$line" >>"$out/console.log"
        case "$line" in
            *"SYSTEST PASS "*) pass "$name: ${line#*SYSTEST PASS }" ;;
            *"SYSTEST FAIL "*) fail "$name: ${line#*SYSTEST FAIL }" ;;
            *"SYSTEST NOTE "*) echo "     ${line#*SYSTEST NOTE }" ;;
            *"SYSTEST SPEED "*)
                speed=${line#*SYSTEST SPEED }
                [[ $speed =~ ^[0-9]+(\.[0-9]+)?$ ]] || speed=1
                limit=$(awk -v t="$timeout" -v f="$speed" 'BEGIN { printf "%d", t * (f < 1 ? 1 : f > 6 ? 6 : f) + 0.999 }') ;;
            *"SYSTEST DONE "*) done=${line#*SYSTEST DONE } ;;
        esac
    done
    if kill -0 "$qemu" 2>/dev/null; then
        kill "$qemu" 2>/dev/null
        sleep 2
        kill -9 "$qemu" 2>/dev/null
    fi
    wait "$qemu" 2>/dev/null
    exec {console}<&-
    if [[ -z $done ]]; then
        fail "$name: the guest finished its run within $limit s ($timeout s times its speed factor $speed; console: $out/console.log)"
    elif [[ $done != 0 ]]; then
        fail "$name: the guest's scenario exited with status $done"
    fi
    echo "# guest run $name took $((SECONDS - run_started)) s"
    if [[ $failed -gt $failures_before ]]; then
        echo "# ---- $name: console (last 60 lines)"
        tail -n 60 "$out/console.log" | sed 's/^/    /'
        local log
        for log in "$out"/logs/*; do
            [[ -f $log ]] || continue
            echo "# ---- $name: $(basename "$log") (last 60 lines)"
            if [[ $log == *.btsnoop ]]; then
                btmon -r "$log" 2>&1 | tail -n 60 | sed 's/^/    /'
            else
                tail -n 60 "$log" | sed 's/^/    /'
            fi
        done
    fi
}

if [[ -n $package_root ]]; then
    # The guest scripts and the new package, put where the guest finds them in its root.
    guest_root=$package_root
    guest_repo=/opt/beacond-systest
    mkdir -p "$guest_root$guest_repo/Tests/System/guest"
    cp Tests/System/guest/{stage.sh,prepare-systemd.sh,pace.py,checks.sh,package_test.sh} "$guest_root$guest_repo/Tests/System/guest/"
    cp "$package_deb" "$guest_root/root/"
    # Under systemd the command is beacond-systest.service's (prepare-systemd.sh); named here for the log.
    guest_run systemd-package 600 Tests/System/guest/package_test.sh
    finish
fi

guest=(/usr/bin/python3 -u)
guest_run btvirt 300 "${guest[@]}" Tests/System/guest/btvirt_test.py
guest_run vhci 400 "${guest[@]}" Tests/System/guest/vhci_test.py
guest_run lifecycle 400 "${guest[@]}" Tests/System/guest/lifecycle_test.py
# Under systemd the command is beacond-systest.service's (prepare-systemd.sh); named here for the log.
guest_run systemd 200 Tests/System/guest/systemd_test.sh

finish
