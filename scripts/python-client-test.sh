#!/usr/bin/env bash
# Tests the Python client library (clients/python, beacon-location) as a user gets it: `pip install` from the
# repository into a fresh venv of Debian's Python (with dbus-fast from PyPI), which must write nothing into the
# checkout, mypy --strict on the package (it is typed, PEP 561), then its pytest suite and the examples against the
# real beacond on private buses.
# Usage: scripts/python-client-test.sh BEACOND   (the venv is .venv-clients, made anew each run)
set -euo pipefail
cd "$(dirname "$0")/.."
beacond=$(realpath "${1:?usage: $0 BEACOND}")
venv=.venv-clients
rm -rf "$venv"
/usr/bin/python3 -m venv "$venv"
# Every file with its time, ignored ones too (`git status` does not show build/ and *.egg-info, which .gitignore
# lists), and without git (a checkout from a tarball): what pip writes into clients/python, if anything.
listing() { find clients/python -printf '%p %T@\n' | sort; }
before=$(listing)
"$venv/bin/pip" install -q --disable-pip-version-check "./clients/python[test]" "mypy>=1.8"
after=$(listing)
if [ "$before" != "$after" ]; then
    echo "pip install ./clients/python wrote into the checkout:" >&2
    diff <(echo "$before") <(echo "$after") >&2 || true
    exit 1
fi
# The installed package, not the source tree: checked and imported from site-packages.
"$venv/bin/mypy" --strict --no-incremental -p beacon_location
cd clients/python/tests
BEACOND=$beacond ../../../"$venv"/bin/python -P -m pytest -p no:cacheprovider -q .
