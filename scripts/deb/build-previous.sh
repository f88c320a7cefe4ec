#!/usr/bin/env bash
# Builds the package of the previous release, for the upgrade test (Tests/Package/deb-test.sh): beacond
# 0.3.0, the last version before there was a package, from its commit in this repository's history, packaged
# with this recipe (debian/, scripts/deb/) because that release had none. A released package does not change,
# so it is built once and kept in the cache (about 6 minutes on 2 cores); delete the cache to build it again.
#
# Usage: scripts/deb/build-previous.sh     prints the path of the .deb
#   BEACOND_DEB_CACHE   where it is kept (default /var/cache/beacond-deb)
set -euo pipefail
cd "$(dirname "$0")/../.."
previous_version=0.3.0
previous_commit=fb7f6240f720203f0c35e7c1b7cc7e00729f7f1d
cache=${BEACOND_DEB_CACHE:-/var/cache/beacond-deb}
deb=$cache/beacond_${previous_version}_$(dpkg --print-architecture).deb
if [[ -f $deb ]]; then
    echo "$deb"
    exit 0
fi
if ! git cat-file -e "$previous_commit^{commit}" 2>/dev/null; then
    echo "build-previous.sh: commit $previous_commit (beacond $previous_version) is not in this clone's history;" \
        "clone the repository with its history (not --depth 1)" >&2
    exit 1
fi
mkdir -p "$cache"
work=$(mktemp -d /var/tmp/beacond-previous.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/src" "$work/out"
git archive "$previous_commit" | tar -x -C "$work/src"
# The recipe as this tree has it (its tracked files only: no build state of this tree's own package).
git ls-files -z debian scripts/deb | xargs -0 cp --parents -t "$work/src"
grep -q "\"$previous_version\"" "$work/src/Sources/BeacondAPI/BeacondVersion.swift" || {
    echo "build-previous.sh: $previous_commit is not beacond $previous_version" >&2
    exit 1
}
cat >"$work/src/debian/changelog" <<CHANGELOG
beacond ($previous_version) bookworm; urgency=medium

  * beacond $previous_version, packaged with the recipe of the first package
    for the upgrade test.

 -- beacond maintainers <maintainers@users.noreply.a-seed-567393a1.example>  Sat, 28 Nov 2026 06:00:00 +0000
CHANGELOG
echo "build-previous.sh: building beacond $previous_version ($previous_commit) into $cache (once)" >&2
(cd "$work/src" && SWIFT_SCRATCH="$work/build" DEB_OUTDIR="$work/out" debian/rules binary) >"$work/build.log" 2>&1 || {
    tail -n 40 "$work/build.log" >&2
    echo "build-previous.sh: the build of beacond $previous_version failed" >&2
    exit 1
}
mv "$work/out/$(basename "$deb")" "$deb"
echo "$deb"
