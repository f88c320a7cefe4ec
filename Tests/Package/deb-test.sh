#!/usr/bin/env bash
# The Debian package (make deb), checked as Debian checks packages and as a user meets it:
#   - make deb builds it (timed, for docs/performance.md);
#   - what it holds: the version beacond reports, binaries that need no Swift runtime, Depends computed from
#     them, /etc/beacond/beacond.toml as a conffile, the unit, sysusers entry, D-Bus policy and activation
#     file, docs, man pages and completions where each tool looks;
#   - lintian --pedantic reports nothing (overrides are justified in debian/beacond.lintian-overrides);
#   - man --warnings is silent on every page; beacond.toml(5) is config/README.md's text (regenerated and
#     compared) with every key it documents; beaconctl(1) and beacond(8) name every subcommand;
#   - piuparts, in a clean Debian 12 root: apt-get install ./beacond_*.deb, beacond --version and beaconctl
#     --help with no Swift there (Tests/Package/piuparts/), remove, purge, nothing left behind;
#   - a clean Debian 12 root (mmdebstrap, no Swift) where apt installs the previous package, booted under QEMU
#     with its own systemd (Tests/System/run.sh --package): the service from the package, the client flow on
#     a virtual controller, the upgrade keeping the edited beacond.toml, the decisions and the regions, man
#     pages, completion in bash, fish and zsh, and purge.
# Usage: Tests/Package/deb-test.sh     (run by `make test`; needs root, and Debian's mirror for the roots)
#   BEACOND_DEB_MIRROR   the Debian mirror for the clean roots (default http://deb.debian.org/debian)
#   BEACOND_DEB_KEEP=1   keep the work directory (roots, logs) after a passing run too
# Prints one line per check and ends with "N passed, N failed"; exits 1 when any check failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
mirror=${BEACOND_DEB_MIRROR:-http://deb.debian.org/debian}
started=$SECONDS

# pass, fail, check.
# shellcheck source=../System/host-checks.sh
source Tests/System/host-checks.sh
work=$(mktemp -d /var/tmp/beacond-deb-test.XXXXXX)
chmod 0755 "$work"
finish() {
    echo "# package test took $((SECONDS - started)) s"
    echo "$passed passed, $failed failed"
    if [[ $failed -eq 0 && -z ${BEACOND_DEB_KEEP:-} ]]; then
        rm -rf --one-file-system "$work"
    else
        echo "# work directory kept: $work"
    fi
    [[ $failed -eq 0 ]]
    exit
}
if [[ $(id -u) -ne 0 ]]; then
    detail="piuparts, mmdebstrap and QEMU's shared root need root"
    fail "the package test runs as root"
    finish
fi

# ---------------------------------------------------------------------------------------------
# make deb

version=$(dpkg-parsechangelog -SVersion)
arch=$(dpkg --print-architecture)
outdir=.build/deb
deb=$outdir/beacond_${version}_${arch}.deb
build_deb() {
    local begun=$SECONDS
    rm -f "$deb"
    make deb DEB_OUTDIR="$outdir" >"$work/make-deb.log" 2>&1 || { detail=$(tail -n 30 "$work/make-deb.log"); return 1; }
    echo "# make deb took $((SECONDS - begun)) s; $(basename "$deb") is $(stat -c %s "$deb") bytes, installed size $(dpkg-deb -f "$deb" Installed-Size) KiB"
    [[ -f $deb ]] || { detail="make deb made no $deb"; return 1; }
}
check "make deb builds $deb" build_deb || finish

# ---------------------------------------------------------------------------------------------
# What the package holds

x=$work/contents
dpkg-deb -x "$deb" "$x" && dpkg-deb -e "$deb" "$x/DEBIAN"
contents_version() {
    local reported source
    reported=$("$x/usr/bin/beacond" --version) || { detail="beacond --version exited $?"; return 1; }
    source=$(sed -n 's/.*current = "\(.*\)".*/\1/p' Sources/BeacondAPI/BeacondVersion.swift)
    [[ $reported == "$version" && $source == "$version" && $("$x/usr/bin/beaconctl" --version) == "$version" ]] ||
        { detail="package $version, beacond --version $reported, BeacondVersion.current $source"; return 1; }
}
no_swift_runtime() {
    local binary libraries
    for binary in "$x/usr/bin/beacond" "$x/usr/bin/beaconctl"; do
        libraries=$(ldd "$binary") || { detail="ldd $binary failed"; return 1; }
        if grep -E -q 'swift|Foundation|dispatch|BlocksRuntime|not found' <<<"$libraries"; then
            detail="$(basename "$binary") needs: $(grep -E 'swift|Foundation|dispatch|BlocksRuntime|not found' <<<"$libraries" | tr '\n' ' ')"
            return 1
        fi
        if readelf -d "$binary" | grep -E -q 'RUNPATH|RPATH'; then
            detail="$(basename "$binary") has a run path: $(readelf -d "$binary" | grep -E 'RUNPATH|RPATH')"
            return 1
        fi
    done
}
computed_depends() {
    local depends package
    depends=$(dpkg-deb -f "$deb" Depends)
    echo "# Depends: $depends"
    for package in libdbus-1-3 libbluetooth3 libmosquitto1 libsqlite3-0 libc6 dbus; do
        grep -q "\b$package\b" <<<"$depends" || { detail="Depends has no $package: $depends"; return 1; }
    done
}
conffiles() {
    local listed
    listed=$(cat "$x/DEBIAN/conffiles")
    [[ $listed == /etc/beacond/beacond.toml ]] || { detail="conffiles: $listed"; return 1; }
    cmp -s "$x/etc/beacond/beacond.toml" config/beacond.toml || { detail="the packaged beacond.toml is not config/beacond.toml"; return 1; }
}
files_in_place() {
    local path missing=()
    for path in usr/bin/beacond usr/bin/beaconctl lib/systemd/system/beacond.service usr/lib/sysusers.d/beacond.conf \
        usr/share/dbus-1/system.d/org.beacond.conf usr/share/dbus-1/system-services/org.beacond.service \
        usr/share/doc/beacond/copyright usr/share/doc/beacond/changelog.gz usr/share/doc/beacond/README.md \
        usr/share/doc/beacond/systemd/mqtt.conf usr/share/doc/beacond/systemd/README.md usr/share/doc/beacond/config/README.md \
        usr/share/doc/beacond/examples/beacond.toml usr/share/doc/beacond/examples/apps.d/example.toml \
        usr/share/man/man8/beacond.8.gz usr/share/man/man1/beaconctl.1.gz usr/share/man/man5/beacond.toml.5.gz \
        usr/share/bash-completion/completions/beaconctl usr/share/bash-completion/completions/beacond \
        usr/share/zsh/vendor-completions/_beaconctl usr/share/zsh/vendor-completions/_beacond \
        usr/share/fish/vendor_completions.d/beaconctl.fish usr/share/fish/vendor_completions.d/beacond.fish; do
        [[ -f $x/$path ]] || missing+=("/$path")
    done
    [[ ${#missing[@]} -eq 0 ]] || { detail="missing: ${missing[*]}"; return 1; }
    cmp -s "$x/lib/systemd/system/beacond.service" systemd/beacond.service ||
        { detail="the packaged unit differs from systemd/beacond.service: $(diff systemd/beacond.service "$x/lib/systemd/system/beacond.service" | head -n 5)"; return 1; }
}
maintainer_scripts() {
    # What the scripts do is checked for real by piuparts and the guest; here, that debhelper wrote them.
    grep -q 'systemd-sysusers' "$x/DEBIAN/postinst" || { detail="postinst does not run systemd-sysusers"; return 1; }
    grep -q "deb-systemd-helper enable 'beacond.service'" "$x/DEBIAN/postinst" || { detail="postinst does not enable the unit"; return 1; }
    grep -q "deb-systemd-invoke \$_dh_action 'beacond.service'" "$x/DEBIAN/postinst" || { detail="postinst does not start the unit"; return 1; }
    grep -q "deb-systemd-invoke stop 'beacond.service'" "$x/DEBIAN/prerm" || { detail="prerm does not stop the unit"; return 1; }
    grep -q 'rm -rf /var/lib/beacond' "$x/DEBIAN/postrm" || { detail="postrm does not remove /var/lib/beacond on purge"; return 1; }
}
check "the package is version $version, as beacond --version and beaconctl --version say" contents_version
check "the binaries need no Swift runtime (ldd: no libswift*, Foundation or dispatch; no run path)" no_swift_runtime
check "Depends is computed from the binaries (dpkg-shlibdeps)" computed_depends
check "/etc/beacond/beacond.toml is the one conffile, the shipped defaults" conffiles
check "unit, sysusers, D-Bus policy and activation, docs, mqtt.conf, man pages and completions are in place" files_in_place
check "debhelper's maintainer scripts create the account, enable, start, stop, and purge the state" maintainer_scripts

# ---------------------------------------------------------------------------------------------
# lintian, man pages, completions

lintian_clean() {
    # As an unprivileged user, as lintian wants; every tag, to the pedantic ones (overrides are in the package).
    local output
    cp "$deb" "$work/lintian.deb" && chmod 0644 "$work/lintian.deb"
    output=$(setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME=/tmp TMPDIR=/tmp \
        lintian --pedantic --info --display-experimental --fail-on none "$work/lintian.deb" 2>&1)
    echo "$output" | grep -E '^[EWIPX]: ' >"$work/lintian.tags"
    [[ ! -s $work/lintian.tags ]] || { detail=$(cat "$work/lintian.tags"); return 1; }
}
check "lintian --pedantic reports no tag" lintian_clean

man_warnings() {
    local page warnings
    for page in "$x"/usr/share/man/man*/*; do
        warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$page" 2>&1 >/dev/null)
        [[ -z $warnings ]] || { detail="$(basename "$page"): $warnings"; return 1; }
    done
}
config_page_is_readme() {
    local date
    date=$(sed -n 's/^\.TH BEACOND\.TOML 5 "\([^"]*\)".*/\1/p' <(zcat "$x/usr/share/man/man5/beacond.toml.5.gz"))
    diff <(scripts/deb/config-manpage.py config/README.md "$version" "$date") <(zcat "$x/usr/share/man/man5/beacond.toml.5.gz") \
        >"$work/config-page.diff" || { detail="beacond.toml(5) is not config/README.md's text: $(head -n 5 "$work/config-page.diff")"; return 1; }
    local text key missing=()
    text=$(LC_ALL=C.UTF-8 MANWIDTH=200 man -l "$x/usr/share/man/man5/beacond.toml.5.gz" 2>/dev/null)
    # The first cell of every table row of config/README.md: the keys (and files) it documents.
    while IFS= read -r key; do
        grep -q -F -- "$key" <<<"$text" || missing+=("$key")
    done < <(sed -n 's/^| `\([^`]*\)`.*/\1/p' config/README.md)
    [[ ${#missing[@]} -eq 0 ]] || { detail="not in man 5 beacond.toml: ${missing[*]}"; return 1; }
    echo "# beacond.toml(5): $(sed -n 's/^| `\([^`]*\)`.*/\1/p' config/README.md | wc -l) keys and files of config/README.md"
}
subcommands_in_pages() {
    local command section name missing=()
    for command in beacond:8 beaconctl:1; do
        section=${command#*:}
        command=${command%:*}
        local page
        page=$(zcat "$x/usr/share/man/man$section/$command.$section.gz")
        while IFS= read -r name; do
            grep -q "^\.It Em $name\$" <<<"$page" || missing+=("$command $name")
        done < <("$x/usr/bin/$command" --experimental-dump-help | python3 -c '
import json, sys
def walk(command):
    for sub in command.get("subcommands", []):
        if sub["commandName"] != "help":
            print(sub["commandName"])
        walk(sub)
walk(json.load(sys.stdin)["command"])')
    done
    [[ ${#missing[@]} -eq 0 ]] || { detail="not in the man pages: ${missing[*]}"; return 1; }
}
check "man --warnings is silent on beacond(8), beaconctl(1) and beacond.toml(5)" man_warnings
check "beacond.toml(5) is config/README.md (regenerated and compared) with every key it documents" config_page_is_readme
check "beacond(8) and beaconctl(1) describe every subcommand" subcommands_in_pages

# ---------------------------------------------------------------------------------------------
# piuparts: install, remove and purge in a clean Debian 12 root

piuparts_run() {
    # piuparts also purges the dependencies it installed; systemd's purge leaves these directories of its own
    # (tmpfiles.d: /root/.ssh, the private and coredump directories), which are no file of beacond's.
    piuparts --distribution bookworm --mirror "$mirror" --no-upgrade-test --tmpdir "$work" \
        --scriptsdir Tests/Package/piuparts \
        --ignore-regex '^/(root/\.ssh|var/(cache|lib|log)/private|var/lib/systemd/(coredump|pstore))/$' \
        "$deb" >"$work/piuparts.log" 2>&1 || { detail=$(grep -E 'ERROR|FAIL' -A8 "$work/piuparts.log" | head -n 30); return 1; }
    grep -q 'post_install_beacond: ok' "$work/piuparts.log" ||
        { detail="piuparts did not run Tests/Package/piuparts/post_install_beacond"; return 1; }
    grep 'beacond --version:' "$work/piuparts.log" | head -n 1 | sed 's/^/# /'
    grep -q 'PASS: All tests' "$work/piuparts.log" || { detail="piuparts did not say PASS: $(tail -n 3 "$work/piuparts.log")"; return 1; }
}
check "piuparts: apt-get install ./$(basename "$deb") in a clean Debian 12 root with no Swift, beacond --version, beaconctl --help, remove, purge, nothing left" piuparts_run

# ---------------------------------------------------------------------------------------------
# The package under systemd, with an upgrade from the previous version

previous_deb=
previous() {
    previous_deb=$(scripts/deb/build-previous.sh 2>"$work/previous.log") || { detail=$(tail -n 20 "$work/previous.log"); return 1; }
    echo "# previous package: $previous_deb"
}
root=$work/root
make_root() {
    # minbase and what a machine running beacond has (systemd, the system bus, BlueZ with btvirt and btmgmt),
    # man-db and the three shells; python3 for the guest's speed measurement. Then apt installs the previous
    # package, as an administrator would have.
    mmdebstrap --variant=minbase --mode=root \
        --include=systemd,systemd-sysv,dbus,bluez,bluez-test-tools,man-db,bash-completion,fish,zsh,procps,python3 \
        --customize-hook="copy-in $previous_deb /root" \
        --customize-hook="chroot \"\$1\" apt-get install -y /root/$(basename "$previous_deb")" \
        bookworm "$root" "$mirror" >"$work/mmdebstrap.log" 2>&1 || { detail=$(tail -n 20 "$work/mmdebstrap.log"); return 1; }
    echo "# guest root: $(du -sh "$root" | cut -f1)"
}
if check "the previous package (scripts/deb/build-previous.sh)" previous &&
    check "a clean Debian 12 root (mmdebstrap) where apt installs the previous package" make_root; then
    previous_version=$(dpkg-deb -f "$previous_deb" Version)
    guest_output=$(Tests/System/run.sh --package "$root" "$deb" "$previous_version" 2>&1 | tee "$work/guest.log")
    while IFS= read -r line; do
        case $line in
            "ok   "*) pass "${line#ok   }" ;;
            "FAIL "*) fail "${line#FAIL }" ;;
            "# "* | "     "*) echo "$line" ;;
        esac
    done <<<"$guest_output"
    if ! grep -q '^[0-9]* passed, 0 failed$' <<<"$guest_output"; then
        detail=$(tail -n 80 "$work/guest.log")
        fail "the package guest run (Tests/System/run.sh --package) passed"
    fi
fi

finish
