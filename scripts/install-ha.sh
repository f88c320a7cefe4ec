#!/usr/bin/env bash
# Installs a real Home Assistant (2024.1.6, the last release that runs on Debian 12's Python 3.11) into a venv
# outside the repository, for mqtt_test.py's discovery test: /var/cache/beacond-ha/venv (BEACOND_HA_CACHE to move
# it). Pinned as Home Assistant pins its own dependencies (its package_constraints.txt, read from the wheel), with
# the MQTT integration's requirements. Does nothing when the venv is there already. About 3 minutes the first time.
set -euo pipefail
cache=${BEACOND_HA_CACHE:-/var/cache/beacond-ha}
venv=$cache/venv
version=2024.1.6
if [[ -x $venv/bin/hass ]] && "$venv/bin/python" -c "import homeassistant.const as c, janus, aiohttp_cors; assert c.__version__ == '$version'" 2>/dev/null; then
    exit 0
fi
echo "install-ha: installing Home Assistant $version into $venv (once; about 3 minutes)" >&2
mkdir -p "$cache"
rm -rf "$venv" "$cache/wheel"
/usr/bin/python3 -m venv "$venv"
"$venv/bin/pip" download -q --no-deps -d "$cache/wheel" "homeassistant==$version"
/usr/bin/python3 - "$cache/wheel"/homeassistant-"$version"-*.whl "$cache/constraints.txt" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    open(sys.argv[2], "wb").write(wheel.read("homeassistant/package_constraints.txt"))
PY
"$venv/bin/pip" install -q -c "$cache/constraints.txt" "$cache/wheel"/homeassistant-"$version"-*.whl \
    paho-mqtt==1.6.1 janus==1.0.0 aiohttp_cors==0.7.0
"$venv/bin/python" -c "import homeassistant.const as c; print('install-ha: Home Assistant', c.__version__)" >&2
