// swift-tools-version: 6.2
import Foundation
import PackageDescription

// libFuzzer targets for beacond's decoders and capture readers. A package of its own, outside the
// root one, because each target only links with libFuzzer (`-sanitize=fuzzer`): in the root
// package it would break `swift build` and `swift test`. Built and run by scripts/fuzz.sh, which
// passes `-sanitize=fuzzer,address` to every module so the decoders themselves are instrumented;
// docs/reliability.md says what the targets check and what they found.
let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .treatAllWarnings(as: .error),
]
// No top-level code: the entry point is `<module>_main`, which runs libFuzzer's driver (see
// FuzzSupport's `runLibFuzzer`).
let fuzzTarget = strict + [.unsafeFlags(["-parse-as-library"])]

// SwiftPM names a path dependency after its directory (the checkout's name, which varies).
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
let rootPackage = root.lastPathComponent.lowercased()

let targets = ["hci", "ad", "linklayer", "capture", "btsnoop", "pcap", "pcapng", "hexlines", "espresense", "kinds", "irk"]

let package = Package(
    name: "beacond-fuzz",
    platforms: [.macOS(.v15)],
    products: targets.map { .executable(name: "fuzz-\($0)", targets: ["fuzz-\($0)"]) },
    dependencies: [.package(path: "..")],
    targets: [
        // Declares libFuzzer's driver entry point for Swift.
        .target(name: "CLibFuzzer"),
        // The invariants each target checks, and the writers its round trips need.
        .target(
            name: "FuzzSupport",
            dependencies: [
                "CLibFuzzer",
                .product(name: "BeaconKit", package: rootPackage),
                .product(name: "Captures", package: rootPackage),
                .product(name: "Fleet", package: rootPackage),
            ],
            swiftSettings: strict),
    ]
        + targets.map {
            .executableTarget(
                name: "fuzz-\($0)", dependencies: ["FuzzSupport"], path: "Sources/fuzz-\($0)",
                swiftSettings: fuzzTarget)
        }
)
