#!/usr/bin/env bash
# `make run`: the main job. On a machine without a Bluetooth adapter it shows the real thing on a
# real capture shipped in the repo:
#   1. `beacond replay`: the capture through decode → ranging → monitoring, as fast as possible;
#   2. the daemon on a private D-Bus bus with the capture as its scanner (played in real time),
#      driven by `beaconctl`: a client asks for Always authorization, the administrator grants it,
#      the client monitors a region and another ranges, and `beaconctl status` shows the daemon's view
#      (the monitoring client runs until the ranging client is done: a second client of the app
#      registering while the first is gone would take its region over, and its Close would end it);
#   3. kill -9 while the beacon is inside, and a restart: the beacon still there gives no new entry, and
#      the app's next client hears one exit, when the capture ends and the beacon is really gone.
# The thermometers advertise every few seconds with silences up to 5.5 s: exits are adaptive
# (exit_timeout_min) with exit_timeout = 10, so no silence of a present beacon exits it; a beacon gets
# the full exit_timeout until its rhythm is learned, and never less than its longest silence.
set -euo pipefail
beacond=$1 beaconctl=$2 capture=$3 uuid=$4

adapters=$(ls /sys/class/bluetooth 2>/dev/null | grep -c '^hci' || true)
if [[ "$adapters" -eq 0 ]]; then
    echo "No Bluetooth adapter on this machine: using a real capture instead of the radio."
else
    echo "Found $adapters Bluetooth adapter(s); the demo still uses a shipped capture so its output is the same everywhere (live: beacond --scanner auto)."
fi
echo "Capture: $capture (Android HCI snoop log of Govee thermometers advertising iBeacons)"
echo
echo "== 1. beacond replay: the whole pipeline on the capture's own clock"
echo "   (adaptive exits, at most 10 s: each thermometer stays inside through its silences and exits once,"
echo "   after the capture's last advertisement of it)"
echo "\$ beacond replay --monitor $uuid:20594 --monitor $uuid:20597 --range $uuid --exit-timeout 10 --exit-timeout-min 1 --drain --stats CAPTURE"
"$beacond" replay --monitor "$uuid:20594" --monitor "$uuid:20597" --range "$uuid" \
    --exit-timeout 10 --exit-timeout-min 1 --drain --stats "$capture"

echo
echo "== 2. the daemon on a private D-Bus bus, scanner = the capture in real time (12 s of advertisements)"
work=$(mktemp -d /tmp/beacond-demo.XXXXXX)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    [[ -n "${bus_pid:-}" ]] && kill "$bus_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
cat > "$work/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$work/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default"><allow send_destination="*"/><allow receive_sender="*"/><allow own="*"/></policy>
</busconfig>
CONF
{ read -r address; read -r bus_pid; } < <(dbus-daemon --config-file="$work/bus.conf" --fork --print-address=1 --print-pid=1)
mkdir -p "$work/config/apps.d"
cat > "$work/config/beacond.toml" <<CONF
[authorization]
prompt = "admin"
[monitoring]
exit_timeout = 10
exit_timeout_min = 1
CONF
cat > "$work/config/apps.d/demo.toml" <<CONF
app_id = "org.example.BeaconDemo"
users = ["$(id -un)"]
when_in_use_usage = "Shows the thermometers near you."
always_usage = "Tells you when you come home, even when the app is closed."
CONF
ctl() { echo "\$ beaconctl $*"; "$beaconctl" --bus "$address" "$@"; }
echo "\$ cat DEMO-CONFIG/beacond.toml"
cat "$work/config/beacond.toml"
echo "\$ beacond --bus PRIVATE-BUS --config-dir DEMO-CONFIG --state-dir DEMO-STATE --scanner replay:CAPTURE"
"$beacond" --bus "$address" --config-dir "$work/config" --state-dir "$work/state" \
    --scanner "replay:$capture" --log-level notice 2> "$work/beacond.log" &
pids+=($!)
for _ in $(seq 100); do timeout 5 "$beaconctl" --bus "$address" status >/dev/null 2>&1 && break; sleep 0.1; done
echo
echo "-- a client monitors $uuid:20594 (it asks for Always and waits for the administrator)"
echo "\$ beaconctl client --app org.example.BeaconDemo monitor $uuid:20594 --keep-monitoring &"
"$beaconctl" --bus "$address" client --app org.example.BeaconDemo monitor "$uuid:20594" --keep-monitoring \
    > "$work/monitor.out" 2>&1 &
monitor=$!
pids+=($monitor)
sleep 1
ctl auth list
ctl auth grant org.example.BeaconDemo always
echo
echo "-- a second client ranges every beacon of $uuid for 4 cycles"
ctl client --app org.example.BeaconDemo range "$uuid" --count 4
echo
ctl status
echo
echo "-- the thermometer is silent from 2.3 s to 7.8 s of the capture: the monitoring client, stopped with SIGTERM once"
echo "   that silence is over, heard its entry and no exit; it leaves the region monitored for the app (--keep-monitoring)"
sleep 5
kill -TERM "$monitor" 2>/dev/null || true
timeout 10 tail --pid="$monitor" -f /dev/null || true
cat "$work/monitor.out"
echo
echo "-- the daemon's log (notice and above)"
cat "$work/beacond.log"

echo
echo "== 3. kill -9 while the beacon is inside, and restart: the region comes back from the state database without any"
echo "      client; the beacon still there gives no new DidEnterRegion; it exits once, when the capture ends"
daemon_pid=${pids[0]}
echo "\$ kill -9 $daemon_pid"
kill -9 "$daemon_pid"
wait "$daemon_pid" 2>/dev/null || true
echo "\$ beacond ... (the same state directory; the capture plays again from its start)"
"$beacond" --bus "$address" --config-dir "$work/config" --state-dir "$work/state" \
    --scanner "replay:$capture" --log-level info 2> "$work/beacond-2.log" &
pids+=($!)
for _ in $(seq 100); do timeout 5 "$beaconctl" --bus "$address" status >/dev/null 2>&1 && break; sleep 0.1; done
ctl regions
sleep 3
echo
echo "-- the app comes back: a new client takes the region over (events queued meanwhile would arrive first, late=yes;"
echo "   there are none), hears it is inside, and then one exit, 10 s after the capture's last advertisement (about 22 s"
echo "   after the restart)"
echo "\$ beaconctl client --app org.example.BeaconDemo monitor $uuid:20594 --count 3"
timeout -s TERM 40 "$beaconctl" --bus "$address" client --app org.example.BeaconDemo monitor "$uuid:20594" --count 3 || true
echo
echo "-- the restarted daemon's log about the region"
grep -E 'resumed|queued|delivered|entered|exited' "$work/beacond-2.log" || true
echo
echo "== 4. where on the floor plan: a minute of a real flat's drive (a robot carrying a tag past six receivers; derived"
echo "      from M. Kolakowski's BLE RSS dataset, CC BY 4.0) replayed as six ESPresense nodes through a private"
echo "      Mosquitto into beacond with the flat's floorplan.toml; each second, the robot's true place and room beside"
echo "      what beacond says over D-Bus"
/usr/bin/python3 "$(dirname "$0")/flat-demo.py" "$beacond" "$beaconctl" 60
