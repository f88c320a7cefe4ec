#!/usr/bin/env bash
# `make run`: the main job. Live scanning needs the daemon (see README, "Status"); until then, and on
# any machine without a Bluetooth adapter, replay a real capture through the full pipeline so the
# output is what a user of ranging and monitoring would see.
set -euo pipefail
beacond=$1 capture=$2 uuid=$3

adapters=$(ls /sys/class/bluetooth 2>/dev/null | grep -c '^hci' || true)
if [[ "$adapters" -eq 0 ]]; then
    echo "No Bluetooth adapter on this machine: replaying a real capture through the full pipeline."
else
    echo "Found $adapters Bluetooth adapter(s); live scanning is not part of this build yet: replaying a real capture."
fi
echo "Capture: $capture (Android HCI snoop log of Govee thermometers advertising iBeacons)"
echo "Command: $beacond replay --monitor $uuid:20594 --monitor $uuid:20597 --range $uuid --exit-timeout 5 --drain --stats $capture"
echo
exec "$beacond" replay --monitor "$uuid:20594" --monitor "$uuid:20597" --range "$uuid" \
    --exit-timeout 5 --drain --stats "$capture"
