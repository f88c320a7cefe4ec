#!/usr/bin/env bash
# Installs the Debian packages beacond needs to build and test, only those missing.
# Usage: scripts/install-deps.sh [run|test]
set -euo pipefail

packages=(pkg-config libdbus-1-dev libbluetooth-dev dbus libsqlite3-dev libmosquitto-dev)
if [[ "${1:-run}" == run ]]; then
    # make run's last part replays a real flat's drive as ESPresense nodes through a private Mosquitto
    # (scripts/flat-demo.py, with paho-mqtt).
    packages+=(mosquitto python3 python3-paho-mqtt)
fi
if [[ "${1:-run}" == test || "${1:-run}" == deb ]]; then
    # make deb: debhelper (dh, dpkg-shlibdeps) and the man pages' check (man-db); the package is checked
    # with lintian and piuparts, in Debian 12 roots made by mmdebstrap.
    packages+=(debhelper dpkg-dev man-db python3 lintian piuparts mmdebstrap)
fi
if [[ "${1:-run}" == test ]]; then
    # python3-venv for the benchmark's Python peers; dbus (dbus-daemon, busctl) and libglib2.0-bin
    # (gdbus) are the real D-Bus clients the daemon's integration tests use; python3-dbus and
    # python3-gi drive the D-Bus policy check and systemd gives systemd-analyze and
    # systemd-sysusers to Tests/System/packaging-test.sh. Tests/System/run.sh boots a Debian kernel
    # under QEMU (qemu-system-x86) from an initramfs of busybox-static and kernel modules (cpio,
    # kmod), and runs BlueZ (bluez; btvirt and btmon come with bluez-test-tools) in it. The MQTT
    # tests start private Mosquitto brokers on loopback (mosquitto, with mosquitto_passwd), make
    # their TLS certificates with openssl and read as an ESPresense consumer would with paho-mqtt.
    # python3-cryptography's AES makes phones' resolvable private addresses in the tests (Tests/Integration/hci.py),
    # an AES independent of the daemon's.
    packages+=(dbus libglib2.0-bin python3 python3-venv python3-dbus python3-gi systemd
        qemu-system-x86 busybox-static cpio kmod bluez bluez-test-tools
        mosquitto openssl python3-paho-mqtt python3-cryptography)
fi

missing=()
for package in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing+=("$package")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "beacond: installing missing Debian packages: ${missing[*]}" >&2
if [[ $(id -u) -eq 0 ]]; then
    sudo=()
elif command -v sudo >/dev/null; then
    sudo=(sudo)
else
    echo "beacond: not root and no sudo; run as root: apt-get install ${missing[*]}" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
