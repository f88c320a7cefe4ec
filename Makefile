# beacond — build, run and test. The README's Quick start is `make run` and `make test`.
SHELL := /bin/bash
SWIFT ?= swift
PREFIX ?= /usr
DESTDIR ?=
RELEASE_BIN = .build/release
DEMO_CAPTURE = Tests/Fixtures/corpus/btsnoop/csacca+horizon-74-at-ble.btsnoop_hci.log
DEMO_UUID = 494E5445-4C4C-495F-524F-434B535F4857

.PHONY: all build run test deps test-deps bench clean

all: build

deps:
	@scripts/install-deps.sh run

test-deps:
	@scripts/install-deps.sh test

build: deps
	$(SWIFT) build -c release --product beacond
	$(SWIFT) build -c release --product beaconctl

# The main job. With no Bluetooth adapter (or before the daemon issue lands) this replays a real
# capture shipped in the repo through the whole decode → ranging → monitoring pipeline.
run: build
	@scripts/run-demo.sh "$(RELEASE_BIN)/beacond" "$(DEMO_CAPTURE)" "$(DEMO_UUID)"

# Every test suite (unit and CLI tests run by swift test).
test: test-deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

bench: test-deps
	scripts/bench/compare.sh

clean:
	rm -rf .build
