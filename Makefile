# beacond — build, run and test. The README's Quick start is `make run` and `make test`.
SHELL := /bin/bash
SWIFT ?= swift
PREFIX ?= /usr
DESTDIR ?=
RELEASE_BIN = .build/release
DEMO_CAPTURE = Tests/Fixtures/corpus/btsnoop/csacca+horizon-74-at-ble.btsnoop_hci.log
DEMO_UUID = 494E5445-4C4C-495F-524F-434B535F4857

.PHONY: all build run test deps test-deps deb-deps bench clean install install-only uninstall deb

# Where `make install` puts things (DESTDIR is prepended to every path, for packaging). systemd
# and dbus-daemon look for units, sysusers and activation files under /usr and /usr/local alike,
# but for bus policies only in /usr/share/dbus-1/system.d and /etc/dbus-1/system.d: with a
# PREFIX other than /usr the policy goes to /etc.
BINDIR ?= $(PREFIX)/bin
SYSCONFDIR ?= /etc
DATADIR ?= $(PREFIX)/share
DOCDIR ?= $(DATADIR)/doc/beacond
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
DBUS_POLICYDIR ?= $(if $(filter /usr,$(PREFIX)),$(DATADIR)/dbus-1/system.d,$(SYSCONFDIR)/dbus-1/system.d)
DBUS_SERVICESDIR ?= $(DATADIR)/dbus-1/system-services
CONFDIR = $(SYSCONFDIR)/beacond
# Shipped documentation, installed under DOCDIR with the same relative paths so links work.
DOC_FILES = README.md $(wildcard docs/*.md docs/*.png) systemd/README.md systemd/mqtt.conf config/README.md

all: build

deps:
	@scripts/install-deps.sh run

test-deps:
	@scripts/install-deps.sh test

build: deps
	$(SWIFT) build -c release --product beacond
	$(SWIFT) build -c release --product beaconctl

# The main job. With no Bluetooth adapter this replays a real
# capture shipped in the repo through the whole decode → ranging → monitoring pipeline.
run: build
	@scripts/run-demo.sh "$(RELEASE_BIN)/beacond" "$(RELEASE_BIN)/beaconctl" "$(DEMO_CAPTURE)" "$(DEMO_UUID)"

# Every test suite (first the code's layout: scripts/check-format.sh runs swift-format's lint with
# .swift-format and checks its line limit; then unit and CLI tests run by swift test, then 20 s of libFuzzer on each decoder
# and capture reader (scripts/fuzz.sh, docs/reliability.md; about 3.5 min with its build), then the
# packaging checks: systemd-analyze verify, make install into a temporary root, the D-Bus policy on
# a real bus),
# then the daemon's integration tests on a private bus (beacond and beaconctl are built by
# `swift build --build-tests`, which builds every product), then the system test on the real
# Linux Bluetooth stack in a QEMU guest (Tests/System/run.sh). promises_test.py tries what the docs promise as
# a hostile client or careless administrator would (docs/reliability.md, "Promises the docs make"); containment_test.py
# floods the daemon as an authorized hostile user for 40 s and checks another client, memory and replies stay bounded.
# BeaconLocationTests (the Swift client library, its examples and `beaconctl client` against real beacond processes on
# private buses) run in a swift test of their own, so their waits never compete for the concurrency pool with the
# unit tests that block it. scripts/python-client-test.sh installs the Python client library (clients/python) with pip into a fresh venv and runs
# its pytest suite and examples/python against the real daemon (docs/clients.md); snippets_test.py then builds and
# runs every Swift and Python block of README.md and docs/clients.md against it (with that venv's Python). mqtt_test.py runs
# the daemon as a receiver on private Mosquitto brokers, and a real Home Assistant on one (scripts/install-ha.sh puts
# it in /var/cache/beacond-ha once, about 3 minutes; docs/fleet.md). The soak test keeps the daemon under
# steady load for 3 minutes and fails if its memory or descriptors grow (see docs/performance.md). Last,
# Tests/Package/deb-test.sh builds the Debian package (make deb) and checks it as Debian does (lintian, piuparts in a
# clean Debian 12 root) and as a user meets it: a clean Debian 12 root with the previous package, booted under QEMU with
# systemd, upgraded to this one and purged (docs/packaging.md; the previous package is built once into
# /var/cache/beacond-deb).
test: test-deps
	SWIFT=$(SWIFT) scripts/check-format.sh
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --skip BeaconLocationTests
	$(SWIFT) test --skip-build --filter BeaconLocationTests
	SWIFT=$(SWIFT) scripts/fuzz.sh --seconds 20
	Tests/System/packaging-test.sh
	/usr/bin/python3 Tests/Integration/daemon_test.py .build/debug/beacond .build/debug/beaconctl
	/usr/bin/python3 Tests/Integration/durability_test.py .build/debug/beacond .build/debug/beaconctl
	/usr/bin/python3 Tests/Integration/promises_test.py .build/debug/beacond .build/debug/beaconctl
	/usr/bin/python3 Tests/Integration/containment_test.py .build/debug/beacond .build/debug/beaconctl
	/usr/bin/python3 Tests/Integration/kinds_test.py .build/debug/beacond .build/debug/beaconctl
	/usr/bin/python3 Tests/Integration/api_test.py .build/debug/beacond .build/debug/beaconctl
	scripts/python-client-test.sh .build/debug/beacond
	/usr/bin/python3 Tests/Integration/snippets_test.py .build/debug/beacond .build/debug .venv-clients/bin/python
	scripts/install-ha.sh
	/usr/bin/python3 Tests/Integration/mqtt_test.py .build/debug/beacond .build/debug/beaconctl
	/usr/bin/python3 Tests/Integration/soak_test.py .build/debug/beacond --minutes 3
	Tests/System/run.sh .build/debug/beacond .build/debug/beaconctl
	Tests/Package/deb-test.sh

bench: test-deps
	scripts/bench/compare.sh
	scripts/bench/replay.sh

# Builds release binaries, then installs them with the unit, sysusers, D-Bus and config files.
install: build
	@$(MAKE) --no-print-directory install-only

# Installs what is already built in RELEASE_BIN (packagers who build separately, and the
# packaging test with a prebuilt RELEASE_BIN). /etc/beacond/beacond.toml is configuration the
# administrator owns: an existing one is never overwritten; when the shipped defaults differ,
# they go next to it as beacond.toml.dist (as dpkg does with .dpkg-dist).
install-only:
	install -D -m 0755 $(RELEASE_BIN)/beacond $(DESTDIR)$(BINDIR)/beacond
	install -D -m 0755 $(RELEASE_BIN)/beaconctl $(DESTDIR)$(BINDIR)/beaconctl
	install -d -m 0755 $(DESTDIR)$(SYSTEMDUNITDIR)
	sed -e 's|/usr/bin/beacond|$(BINDIR)/beacond|g' -e 's|/etc/beacond|$(CONFDIR)|g' \
	    -e 's|/usr/share/doc/beacond|$(DOCDIR)|g' systemd/beacond.service \
	    > $(DESTDIR)$(SYSTEMDUNITDIR)/beacond.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/beacond.service
	install -D -m 0644 systemd/beacond.sysusers $(DESTDIR)$(SYSUSERSDIR)/beacond.conf
	install -D -m 0644 config/dbus-1/system.d/org.beacond.conf \
	    $(DESTDIR)$(DBUS_POLICYDIR)/org.beacond.conf
	install -D -m 0644 config/dbus-1/system-services/org.beacond.service \
	    $(DESTDIR)$(DBUS_SERVICESDIR)/org.beacond.service
	install -d -m 0755 $(DESTDIR)$(CONFDIR) $(DESTDIR)$(CONFDIR)/apps.d
	@if [ ! -f config/beacond.toml ]; then \
	    echo "make install: config/beacond.toml is missing from this tree; not installed" >&2; \
	elif [ ! -e $(DESTDIR)$(CONFDIR)/beacond.toml ]; then \
	    echo "install -m 0644 config/beacond.toml $(DESTDIR)$(CONFDIR)/beacond.toml"; \
	    install -m 0644 config/beacond.toml $(DESTDIR)$(CONFDIR)/beacond.toml; \
	elif cmp -s config/beacond.toml $(DESTDIR)$(CONFDIR)/beacond.toml; then \
	    echo "make install: $(DESTDIR)$(CONFDIR)/beacond.toml is already the shipped one"; \
	else \
	    install -m 0644 config/beacond.toml $(DESTDIR)$(CONFDIR)/beacond.toml.dist; \
	    echo "make install: kept your $(DESTDIR)$(CONFDIR)/beacond.toml;" \
	         "the shipped defaults are in beacond.toml.dist next to it" >&2; \
	fi
	@for f in $(wildcard config/beacond.toml) $(wildcard config/apps.d/*.toml); do \
	    echo "install -D -m 0644 $$f $(DESTDIR)$(DOCDIR)/examples/$${f#config/}"; \
	    install -D -m 0644 $$f $(DESTDIR)$(DOCDIR)/examples/$${f#config/} || exit 1; \
	done
	@for f in $(DOC_FILES); do \
	    echo "install -D -m 0644 $$f $(DESTDIR)$(DOCDIR)/$$f"; \
	    install -D -m 0644 $$f $(DESTDIR)$(DOCDIR)/$$f || exit 1; \
	done
	@if [ -z "$(DESTDIR)" ]; then \
	    echo "Installed. Next: systemd-sysusers; systemctl daemon-reload; systemctl reload dbus;" \
	         "systemctl enable --now beacond (see $(DOCDIR)/systemd/README.md)"; \
	fi

# Removes what install put in place except configuration and state (/etc/beacond,
# /var/lib/beacond) and the beacond user, which stay for a reinstall, as dpkg's remove does.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/beacond $(DESTDIR)$(BINDIR)/beaconctl
	rm -f $(DESTDIR)$(SYSTEMDUNITDIR)/beacond.service $(DESTDIR)$(SYSUSERSDIR)/beacond.conf
	rm -f $(DESTDIR)$(DBUS_POLICYDIR)/org.beacond.conf
	rm -f $(DESTDIR)$(DBUS_SERVICESDIR)/org.beacond.service
	rm -rf $(DESTDIR)$(DOCDIR)
	@echo "make uninstall: kept $(DESTDIR)$(CONFDIR) and $(DESTDIR)/var/lib/beacond (remove them by hand to purge)"

# The Debian package: builds beacond_VERSION_ARCH.deb into DEB_OUTDIR with debhelper (debian/rules), the
# Swift runtime linked statically so the target needs no Swift. Checks the build dependencies first (as
# dpkg-buildpackage does) and installs missing ones with scripts/install-deps.sh. docs/packaging.md.
DEB_OUTDIR ?= .build/deb
deb-deps:
	@scripts/install-deps.sh deb

deb: deb-deps
	@dpkg-checkbuilddeps || { echo "make deb: install the build dependencies above (scripts/install-deps.sh deb)" >&2; exit 1; }
	@command -v $(SWIFT) >/dev/null || { echo "make deb: no $(SWIFT) on PATH: install the Swift 6.2+ toolchain (swift.org) or set SWIFT=" >&2; exit 1; }
	mkdir -p $(DEB_OUTDIR)
	debian/rules clean
	SWIFT=$(SWIFT) DEB_OUTDIR=$(abspath $(DEB_OUTDIR)) debian/rules binary
	@ls -l $(DEB_OUTDIR)/beacond_*.deb

clean:
	rm -rf .build .build-fuzz-run debian/generated debian/beacond debian/.debhelper debian/debhelper-build-stamp debian/files debian/*.substvars debian/*.debhelper.log
