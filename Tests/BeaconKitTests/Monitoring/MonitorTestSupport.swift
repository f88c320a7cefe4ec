import BeaconKit
import Foundation

/// Beacons, regions and times for the monitoring tests. Times are seconds after a fixed base, so a failure
/// reads "30.0 didExitRegion a" rather than a 16-digit microsecond count.
enum MonitorTestKit {
    static let base: Int64 = 1_700_000_000_000_000

    static func at(_ seconds: Double) -> Timestamp {
        Timestamp(microsecondsSinceEpoch: base + Int64((seconds * 1_000_000).rounded()))
    }

    static func seconds(_ timestamp: Timestamp) -> Double {
        Double(timestamp.microsecondsSinceEpoch - base) / 1_000_000
    }

    static func uuid(_ tag: UInt8) -> UUID {
        UUID(uuid: (0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, tag))
    }

    static let uuidA = uuid(0xA0)
    static let uuidB = uuid(0xB0)

    static func beacon(_ uuid: UUID, _ major: UInt16, _ minor: UInt16) -> BeaconIdentity {
        BeaconIdentity(uuid: uuid, major: major, minor: minor)
    }

    static func beacon(_ major: UInt16, _ minor: UInt16) -> BeaconIdentity {
        BeaconIdentity(uuid: uuidA, major: major, minor: minor)
    }

    static func region(
        _ identifier: String, _ uuid: UUID = uuidA, major: UInt16? = nil, minor: UInt16? = nil,
        entry: Bool = true, exit: Bool = true
    ) throws -> BeaconRegion {
        BeaconRegion(
            identifier: identifier,
            constraint: try BeaconIdentityConstraint(uuid: uuid, major: major, minor: minor),
            notifyOnEntry: entry, notifyOnExit: exit)
    }

    static func sighting(
        _ identity: BeaconIdentity, at seconds: Double, rssi: Int8? = -60, address: UInt64 = 0xA4C1_38BF_6FAB
    ) -> BeaconObservation {
        BeaconObservation(
            frame: BeaconFrame(identity: identity, measuredPower: -59), rssi: rssi,
            address: BluetoothAddress(rawValue: address), addressType: 0,
            timestamp: at(seconds))
    }

    /// `30.0 didExitRegion a`: one event as a line a failing `#expect` prints readably.
    static func line<Key>(_ event: MonitoringEvent<Key>) -> String {
        "\(seconds(event.timestamp)) \(event.kind) \(event.key)"
    }
}

/// A monitor keyed by region identifier plus the events it has produced and not yet been asked about.
struct MonitorTestHarness {
    var monitor: RegionMonitor<String>
    var pending: [MonitoringEvent<String>] = []

    init(_ configuration: MonitoringConfiguration = .default) {
        monitor = RegionMonitor(configuration: configuration)
    }

    mutating func start(_ region: BeaconRegion, at seconds: Double, key: String? = nil) {
        monitor.startMonitoring(region, for: key ?? region.identifier, at: MonitorTestKit.at(seconds), into: &pending)
    }

    mutating func see(_ identity: BeaconIdentity, at seconds: Double, rssi: Int8? = -60, address: UInt64 = 0xA4C1_38BF_6FAB) {
        monitor.observe(MonitorTestKit.sighting(identity, at: seconds, rssi: rssi, address: address), into: &pending)
    }

    @discardableResult
    mutating func stop(_ key: String, at seconds: Double) -> BeaconRegion? {
        monitor.stopMonitoring(key, at: MonitorTestKit.at(seconds), into: &pending)
    }

    mutating func advance(to seconds: Double) {
        monitor.advance(to: MonitorTestKit.at(seconds), into: &pending)
    }

    mutating func suspend(at seconds: Double) {
        monitor.suspendDetection(at: MonitorTestKit.at(seconds), into: &pending)
    }

    mutating func resume(at seconds: Double) {
        monitor.resumeDetection(at: MonitorTestKit.at(seconds))
    }

    @discardableResult
    mutating func requestState(_ key: String, at seconds: Double) -> RegionState? {
        monitor.requestState(for: key, at: MonitorTestKit.at(seconds), into: &pending)
    }

    /// The pending events as lines, then forgets them.
    mutating func take() -> [String] {
        defer { pending.removeAll() }
        return pending.map(MonitorTestKit.line)
    }

    var nextDeadline: Double? { monitor.nextDeadline.map(MonitorTestKit.seconds) }
}
