import BeaconKit
import BeaconctlKit
import BeacondAPI
import DBus
import Foundation

/// Dictionaries shaped as beacond sends them (keys from Names.swift), for rendering tests and the fake daemon.
enum Samples {
    static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"
    static let app = "com.example.door"
    /// 2024-05-01T12:00:00Z.
    static let now = Timestamp(microsecondsSinceEpoch: 1_714_564_800_000_000)

    static func dictionaries(_ items: [[String: DBusValue]]) -> DBusValue {
        .array(elementSignature: "a{sv}", items.map { .vardict($0) })
    }

    static func region(_ identifier: String, major: UInt16? = 1) -> [String: DBusValue] {
        var region: [String: DBusValue] = [
            BeacondKey.identifier: .string(identifier), BeacondKey.uuid: .string(uuid),
            BeacondKey.notifyOnEntry: .boolean(true), BeacondKey.notifyOnExit: .boolean(true),
        ]
        if let major { region[BeacondKey.major] = .uint16(major) }
        return region
    }

    static func beacon(minor: UInt16, rssi: Int16, accuracy: Double, proximity: String) -> [String: DBusValue] {
        [
            BeacondKey.uuid: .string(uuid), BeacondKey.major: .uint16(1), BeacondKey.minor: .uint16(minor),
            BeacondKey.rssi: .int16(rssi), BeacondKey.accuracy: .double(accuracy), BeacondKey.proximity: .string(proximity),
            BeacondKey.txPower: .int16(-59), BeacondKey.timestamp: .uint64(UInt64(now.microsecondsSinceEpoch)),
        ]
    }

    static func client(
        path: String, app: String = app, status: String = BeacondStatus.authorizedAlways,
        connected: Bool = true, inUse: Bool = true, regions: UInt32 = 1,
        ranging: UInt32 = 0
    ) -> [String: DBusValue] {
        [
            BeacondClientKey.path: .objectPath(path), BeacondClientKey.appID: .string(app),
            BeacondClientKey.sender: .string(connected ? ":1.7" : ""), BeacondClientKey.unixUserID: .uint32(1000),
            BeacondClientKey.processID: .uint32(4242), BeacondClientKey.authorizationStatus: .string(status),
            BeacondClientKey.inUse: .boolean(inUse), BeacondClientKey.connected: .boolean(connected),
            BeacondClientKey.monitoredRegions: .uint32(regions), BeacondClientKey.rangedConstraints: .uint32(ranging),
        ]
    }

    static func appEntry(
        _ app: String = app, status: String = BeacondStatus.authorizedAlways,
        pending: String = "", regions: Int = 0
    ) -> [String: DBusValue] {
        [
            BeacondAppKey.appID: .string(app), BeacondAppKey.authorizationStatus: .string(status),
            BeacondAppKey.pendingRequest: .string(pending), BeacondAppKey.monitoredRegions: .uint32(UInt32(regions)),
            BeacondAppKey.declarationFile: .string("/etc/beacond/apps.d/\(app).toml"),
            BeacondAppKey.users: .array(elementSignature: "s", [.string("door")]),
        ]
    }

    /// A healthy daemon: services on, fifo scanner idle, one Always client monitoring "lobby" seen 5 min ago.
    static func statusValues(
        now: Timestamp = now, appStatus: String = BeacondStatus.authorizedAlways,
        pending: String = "", clients: [[String: DBusValue]]? = nil,
        regions: [[String: DBusValue]]? = nil
    ) -> [String: DBusValue] {
        let lastSeen = UInt64(now.microsecondsSinceEpoch - 300_000_000)
        var lobby = region("lobby")
        lobby[BeacondRegionStatusKey.appID] = .string(app)
        lobby[BeacondRegionStatusKey.client] = .objectPath("/org/beacond/client/1")
        lobby[BeacondRegionStatusKey.state] = .string("inside")
        lobby[BeacondRegionStatusKey.lastSeen] = .uint64(lastSeen)
        var never = region("garage", major: nil)
        never[BeacondRegionStatusKey.appID] = .string(app)
        never[BeacondRegionStatusKey.client] = .objectPath("/org/beacond/client/1")
        never[BeacondRegionStatusKey.state] = .string("unknown")
        never[BeacondRegionStatusKey.lastSeen] = .uint64(0)
        var pendingRequests: [[String: DBusValue]] = []
        if !pending.isEmpty {
            pendingRequests.append([
                BeacondPendingRequestKey.appID: .string(app), BeacondPendingRequestKey.request: .string(pending),
                BeacondPendingRequestKey.currentStatus: .string(BeacondStatus.notDetermined),
                BeacondPendingRequestKey.usageDescription: .string("Opens the door when you arrive."),
            ])
        }
        return [
            BeacondStatusKey.version: .string("0.2.0"),
            BeacondStatusKey.locationServicesEnabled: .boolean(true),
            BeacondStatusKey.scanning: .boolean(true),
            BeacondStatusKey.scanner: .string("fifo:/run/beacond/fifo"),
            BeacondStatusKey.scannerState: .string(BeacondScannerState.scanning),
            BeacondStatusKey.adapters: dictionaries([]),
            BeacondStatusKey.prompt: .string("admin"),
            StatusListKey.clients: dictionaries(clients ?? [client(path: "/org/beacond/client/1", status: appStatus)]),
            StatusListKey.regions: dictionaries(regions ?? [lobby, never]),
            StatusListKey.pendingRequests: dictionaries(pendingRequests),
            StatusListKey.apps: dictionaries([
                appEntry(
                    status: appStatus, pending: pending,
                    regions: (regions ?? [lobby, never]).count)
            ]),
            BeacondStatusKey.configDirectory: .string("/etc/beacond"),
            BeacondStatusKey.stateDirectory: .string("/var/lib/beacond"),
            BeacondStatusKey.warnings: .array(elementSignature: "s", [.string("apps.d/old.toml:3: unknown key 'colour'")]),
            BeacondStatusKey.startedAt: .uint64(UInt64(now.microsecondsSinceEpoch - 7_500_000_000)),
        ]
    }

    /// As the client reads it: through `vardictEntries` of the wire value (variants unwrapped).
    static func status(
        now: Timestamp = now, appStatus: String = BeacondStatus.authorizedAlways, pending: String = "",
        clients: [[String: DBusValue]]? = nil, regions: [[String: DBusValue]]? = nil
    ) -> VarDict {
        DBusValue.vardict(statusValues(now: now, appStatus: appStatus, pending: pending, clients: clients, regions: regions))
            .vardictEntries ?? [:]
    }

    static func with(_ status: VarDict, _ key: String, _ value: DBusValue) -> VarDict {
        var copy = status
        copy[key] = value
        return copy
    }
}

extension Samples {
    /// The real clock, for the fake daemon (its "5 min ago" must be relative to when beaconctl renders).
    static func nowFromClock() -> Timestamp {
        Timestamp(secondsSinceEpoch: Date().timeIntervalSince1970)
    }
}
