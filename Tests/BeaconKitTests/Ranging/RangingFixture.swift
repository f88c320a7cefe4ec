import BeaconKit
import Foundation

/// Builders shared by the ranging tests (a namespace, so its names cannot clash with other suites).
enum RangingFixture {
    static let uuidA = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0") ?? UUID()
    static let uuidB = UUID(uuidString: "74278BDA-B644-4520-8F0C-720EAF059935") ?? UUID()

    /// `seconds` after an arbitrary epoch-like origin, so tests read in seconds.
    static func time(_ seconds: Double) -> Timestamp {
        Timestamp(secondsSinceEpoch: 1_700_000_000 + seconds)
    }

    static func identity(_ uuid: UUID = uuidA, major: UInt16 = 1, minor: UInt16) -> BeaconIdentity {
        BeaconIdentity(uuid: uuid, major: major, minor: minor)
    }

    static func observation(
        _ identity: BeaconIdentity, rssi: Int8?, at seconds: Double,
        measuredPower: Int8 = -59, address: UInt64 = 0xA4C1_38BF_6FAB
    ) -> BeaconObservation {
        BeaconObservation(
            frame: BeaconFrame(identity: identity, measuredPower: measuredPower), rssi: rssi,
            address: BluetoothAddress(rawValue: address), addressType: 1, timestamp: time(seconds))
    }

    /// The package root, found from this file's path.
    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent() // Ranging
            .deletingLastPathComponent() // BeaconKitTests
            .deletingLastPathComponent() // Tests
            .deletingLastPathComponent()
    }
}
