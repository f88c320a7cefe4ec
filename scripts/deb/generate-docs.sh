#!/usr/bin/env bash
# Generates what the Debian package ships besides the binaries (run by debian/rules):
#   man/beacond.8, man/beaconctl.1   swift-argument-parser's generate-manual, from the commands' own help
#   man/beacond.toml.5               scripts/deb/config-manpage.py, from config/README.md
#   completions/                     bash, zsh and fish, from the commands (--generate-completion-script)
# Usage: scripts/deb/generate-docs.sh RELEASE_BIN OUTDIR   (RELEASE_BIN has beacond, beaconctl, generate-manual)
# The pages' date is the package's (SOURCE_DATE_EPOCH, which debhelper takes from debian/changelog), so a
# rebuild gives the same pages.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=$1
out=$2
rm -rf "$out"
mkdir -p "$out/man" "$out/completions"
epoch=${SOURCE_DATE_EPOCH:-$(dpkg-parsechangelog -STimestamp)}
date=$(date -u -d "@$epoch" +%Y-%m-%d)
version=$(dpkg-parsechangelog -SVersion)
authors=(--authors "beacond maintainers<maintainers@users.noreply.a-seed-567393a1.example>")

# generate-manual runs COMMAND --experimental-dump-help and drops what is not ASCII; it gets the help through
# a wrapper that spells each such character @@U+XXXX@@, and tidy-mdoc.py turns those into groff's \[uXXXX].
wrappers=$(mktemp -d)
trap 'rm -rf "$wrappers"' EXIT
for command in beacond:8 beaconctl:1; do
    name=${command%:*}
    cat >"$wrappers/$name" <<WRAPPER
#!/bin/sh
"$(realpath "$bin/$name")" "\$@" | python3 -c 'import sys; sys.stdout.write("".join(c if ord(c) < 128 else "@@U+%04X@@" % ord(c) for c in sys.stdin.read()))'
WRAPPER
    chmod +x "$wrappers/$name"
    "$bin/generate-manual" "$wrappers/$name" --section "${command#*:}" --date "$date" "${authors[@]}" \
        --output-directory "$out/man"
    scripts/deb/tidy-mdoc.py "$out/man/$name.${command#*:}"
done
scripts/deb/config-manpage.py config/README.md "$version" "$date" >"$out/man/beacond.toml.5"

for command in beacond beaconctl; do
    # bash-completion sources the file: no #! line (lintian's bash-completion-with-hashbang).
    "$bin/$command" --generate-completion-script bash | sed '1{/^#!/d}' >"$out/completions/$command.bash"
    "$bin/$command" --generate-completion-script zsh >"$out/completions/_$command"
    "$bin/$command" --generate-completion-script fish >"$out/completions/$command.fish"
done

# What man would warn about (bad requests, lines it cannot fit) fails the build, as lintian would.
for page in "$out"/man/*; do
    warnings=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l "$page" 2>&1 >/dev/null)
    if [[ -n $warnings ]]; then
        echo "generate-docs.sh: man --warnings on $page:" >&2
        echo "$warnings" >&2
        exit 1
    fi
done
ls -1 "$out/man" "$out/completions"
