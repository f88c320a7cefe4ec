// swift-tools-version: 6.2
import PackageDescription

// Module layout follows docs/architecture in README.md: BeaconKit is the pure core
// (no I/O), C is reached only through the CDBus/CBlueZ system-library targets.
let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    // "No warnings" is enforced, not hoped for (our targets only; dependencies are not affected).
    .treatAllWarnings(as: .error),
    // The engine is generic over the caller's key type; without cross-module optimization every
    // sighting pays for runtime generic metadata lookups (measured: docs/performance.md).
    .unsafeFlags(["-cross-module-optimization"], .when(configuration: .release)),
]

let package = Package(
    name: "beacond",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "beacond", targets: ["beacond"]),
        .executable(name: "beaconctl", targets: ["beaconctl"]),
        .executable(name: "beacond-bench", targets: ["beacond-bench"]),
        .library(name: "BeaconKit", targets: ["BeaconKit"]),
        // The client library apps use: Core Location's CLLocationManager and CLMonitor over beacond's D-Bus API.
        .library(name: "BeaconLocation", targets: ["BeaconLocation"]),
        // For the fuzz targets in Fuzz/, a separate package so their missing `main` never reaches this build.
        .library(name: "Captures", targets: ["Captures"]),
        .library(name: "Fleet", targets: ["Fleet"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // beacond.toml and apps.d/*.toml.
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        // The durable authorization-decision store (SQLite; libsqlite3-dev on Linux).
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // Graceful SIGTERM shutdown and SIGHUP reload for the daemon.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // AES-128 for resolving private addresses with Identity Resolving Keys (the specification's `ah`).
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        // ESPresense-companion's config.yaml, for `beaconctl floorplan import`.
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
    ],
    targets: [
        // Pure domain: decoding, identities, regions, monitoring, ranging, authorization.
        .target(
            name: "BeaconKit",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        // Capture file formats (btsnoop, pcap, pcapng, hex lines) → HCI events.
        .target(name: "Captures", dependencies: ["BeaconKit"], swiftSettings: strict),
        .systemLibrary(
            name: "CDBus", pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]),
        .systemLibrary(
            name: "CBlueZ", pkgConfig: "bluez",
            providers: [.apt(["libbluetooth-dev"])]),
        .systemLibrary(
            name: "CMosquitto", pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]),
        // The one thread that polls descriptors and timers and runs the daemon's actor: the bus, scanners and
        // timers all use it, so it is no part of the D-Bus wrapper.
        .target(name: "MainLoopKit", swiftSettings: strict),
        .target(name: "DBus", dependencies: ["CDBus", "MainLoopKit"], swiftSettings: strict),
        // The one Swift wrapper of libmosquitto: a broker connection driven by the MainLoop.
        .target(name: "MQTT", dependencies: ["CMosquitto", "MainLoopKit"], swiftSettings: strict),
        .target(name: "BlueZ", dependencies: ["BeaconKit", "DBus", "MainLoopKit", "CBlueZ"], swiftSettings: strict),
        .target(name: "BeacondAPI", swiftSettings: strict),
        // Several receivers as one: ESPresense's MQTT conventions (topics, device ids, readings); pure, no I/O.
        .target(name: "Fleet", dependencies: ["BeaconKit", "BeacondAPI"], swiftSettings: strict),
        // Helpers shared by tests and the benchmark (seeded randomness, a private dbus-daemon and Mosquitto, waiting on a
        // running loop); never linked into the daemon.
        .target(name: "TestKit", dependencies: ["MainLoopKit"], swiftSettings: strict),
        // Pure and seeded: simulated floors, receivers and beacons for the presence evaluation (docs/presence.md).
        .target(name: "PresenceSimulation", dependencies: ["BeaconKit", "TestKit"], swiftSettings: strict),
        // The daemon's decisions: inputs in, effects out, no I/O (docs/architecture.md). Its dependencies are the
        // compiler's proof: no DBus, MQTT, GRDB, capture files or Foundation I/O can be reached from here.
        .target(
            name: "BeacondCore",
            dependencies: ["BeaconKit", "BeacondAPI", "Fleet", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict),
        .target(
            name: "BeacondService",
            dependencies: [
                "BeacondCore", "BeaconKit", "Captures", "BeacondAPI", "DBus", "MainLoopKit", "BlueZ", "MQTT", "Fleet",
                .product(name: "TOMLKit", package: "TOMLKit"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "beacond",
            dependencies: [
                "BeacondService", "BeacondCore", "BeaconKit", "Captures", "DBus", "MainLoopKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict),
        // Apps' client library: one connection per client, kept across beacond's restarts (docs/clients.md).
        .target(name: "BeaconLocation", dependencies: ["DBus", "MainLoopKit", "BeacondAPI"], swiftSettings: strict),
        // beaconctl's logic that needs no process (typed daemon calls, output, doctor checks), so tests can reach it.
        .target(
            name: "BeaconctlKit", dependencies: ["DBus", "BeacondAPI", "BeaconKit", "Fleet", .product(name: "Yams", package: "Yams")],
            swiftSettings: strict),
        .executableTarget(
            name: "beaconctl",
            dependencies: [
                "BeaconctlKit", "BeaconLocation", "DBus", "BeacondAPI", "BeaconKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict),
        // The examples docs/clients.md shows, built and run by the tests (Tests/BeaconLocationTests).
        .executableTarget(
            name: "example-monitor-region", dependencies: ["BeaconLocation"], path: "examples/swift/monitor-region",
            swiftSettings: strict),
        .executableTarget(
            name: "example-monitor-events", dependencies: ["BeaconLocation"], path: "examples/swift/monitor-events",
            swiftSettings: strict),
        .executableTarget(
            name: "beacond-bench",
            dependencies: [
                "BeaconKit", "Captures", "TestKit", "Fleet", "MQTT", "MainLoopKit", "PresenceSimulation",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict),
        .testTarget(name: "BeaconKitTests", dependencies: ["BeaconKit", "TestKit"], swiftSettings: strict),
        .testTarget(
            name: "CapturesTests", dependencies: ["Captures", "BeaconKit", "TestKit"],
            resources: [], swiftSettings: strict),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "MainLoopKit", "TestKit"], swiftSettings: strict),
        .testTarget(name: "FleetTests", dependencies: ["Fleet", "BeaconKit", "TestKit"], swiftSettings: strict),
        .testTarget(name: "PresenceSimulationTests", dependencies: ["PresenceSimulation"], swiftSettings: strict),
        .testTarget(name: "MQTTTests", dependencies: ["MQTT", "MainLoopKit", "TestKit"], swiftSettings: strict),
        .testTarget(name: "BlueZTests", dependencies: ["BlueZ", "DBus", "MainLoopKit", "BeaconKit", "TestKit"], swiftSettings: strict),
        .testTarget(
            name: "BeacondServiceTests",
            dependencies: [
                "BeacondService", "BeacondCore", "BeaconKit", "BeacondAPI", "DBus", "MainLoopKit",
                "Fleet", "MQTT", "TestKit", "BeaconctlKit", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "BeaconctlTests", dependencies: ["BeaconctlKit", "DBus", "MainLoopKit", "BeacondAPI", "BeaconKit", "TestKit", "beaconctl"],
            swiftSettings: strict),
        // Against the real beacond on private buses: run in a `swift test` of their own (Makefile `test`).
        .testTarget(
            name: "BeaconLocationTests", dependencies: ["BeaconLocation", "BeaconKit", "BeacondAPI", "DBus", "TestKit"], swiftSettings: strict),
        .testTarget(
            name: "BeacondTests", dependencies: ["BeacondAPI", "BeaconKit", "TestKit", "beacond"],
            exclude: ["Golden"], swiftSettings: strict),
    ]
)
