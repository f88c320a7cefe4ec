import BeaconKit
import BeacondAPI
import DBus
import Logging
import MainLoopKit
import BeacondCore

/// The daemon's face on the bus, and the only part of it that builds D-Bus messages: client events become
/// `LocationManager1` signals and their `Admin1.Event` mirrors (each built here once), property changes become
/// `PropertiesChanged`, and everything goes out through the outbox after the current method's reply, in order,
/// with flow control towards peers that do not read (`SignalOutbox`). It owns the connection, the object server
/// and the set of connections watching `Admin1.Event`. Used on the loop thread, by the daemon only.
final class BusFace {
    let connection: DBusConnection
    let server: DBusObjectServer
    var outbox = SignalOutbox()
    /// Connections that asked for `Admin1.Event` (`WatchEvents`), until `UnwatchEvents` or they leave the bus.
    private var watchers: Set<String> = []
    let logger: Logger
    private let clock: @Sendable () -> Timestamp
    /// Asks the daemon to flush soon (after the current dispatch): it commits the state the queued signals
    /// report, then calls `send()`.
    let flushDue: () -> Void

    init(
        connection: DBusConnection, server: DBusObjectServer, logger: Logger, clock: @escaping @Sendable () -> Timestamp,
        flushDue: @escaping () -> Void
    ) {
        self.connection = connection
        self.server = server
        self.logger = logger
        self.clock = clock
        self.flushDue = flushDue
    }

    // MARK: Watchers

    /// The connections watching `Admin1.Event`, in name order (the order events are admitted in).
    var eventWatchers: [String] { watchers.sorted() }
    var hasEventWatchers: Bool { !watchers.isEmpty }
    func watchEvents(_ sender: String) { watchers.insert(sender) }
    func unwatchEvents(_ sender: String) { watchers.remove(sender) }

    /// A connection left the bus: it watches nothing and its flow control is forgotten.
    func forget(_ peer: String) {
        watchers.remove(peer)
        outbox.forget(peer)
    }

    // MARK: Events out

    /// A client's signal, and (unless `clientOnly`) its mirror to the administrators watching events.
    func notify(_ client: ClientAddress, _ event: ClientEvent, _ audience: Audience = .clientAndAdministrators) {
        if audience != .administratorsOnly, let sender = client.sender {
            let (member, arguments) = Self.signal(event)
            queue(path: client.path, interface: BeacondInterface.locationManager, member: member, arguments, to: sender)
        }
        // The mirror is built only for someone to send it to: most of the time nobody watches.
        guard audience != .clientOnly, hasEventWatchers else { return }
        let (kind, data) = Self.mirror(event)
        adminEvent(kind, Self.clientData(client).merging(data) { $1 })
    }

    /// An administrators' event that is no client's signal.
    func notify(_ event: AdminEvent) {
        switch event {
        case .clientRegistered(let client):
            adminEvent(BeacondEventKind.clientRegistered, Self.clientData(client))
        case .clientClosed(let client):
            adminEvent(BeacondEventKind.clientClosed, Self.clientData(client))
        case .authorizationRequested(let client, let request, let disposition):
            adminEvent(
                BeacondEventKind.authorizationRequested,
                Self.clientData(client).merging([
                    BeacondEventKey.request: .string(request.rawValue), BeacondEventKey.disposition: .string(disposition),
                ]) { $1 })
        case .authorizationChanged(let appID, let status):
            adminEvent(
                BeacondEventKind.authorizationChanged,
                [BeacondEventKey.appID: .string(appID), BeacondEventKey.status: .string(status.rawValue)])
        case .locationServicesChanged(let enabled):
            adminEvent(BeacondEventKind.locationServicesChanged, [BeacondEventKey.enabled: .boolean(enabled)])
        case .scanningChanged(let scanning):
            adminEvent(BeacondEventKind.scanningChanged, [BeacondEventKey.scanning: .boolean(scanning)])
        case .configurationReloaded(let warnings):
            adminEvent(
                BeacondEventKind.configurationReloaded,
                [BeacondEventKey.warnings: .array(elementSignature: "s", warnings.map { .string($0) })])
        case .configurationRejected(let error):
            adminEvent(BeacondEventKind.configurationRejected, [BeacondEventKey.error: .string(error)])
        }
    }

    /// `PropertiesChanged` on the client's object, to its connection only (location is private).
    func propertiesChanged(_ client: ClientAddress, _ properties: [ClientProperty]) {
        guard let sender = client.sender, !properties.isEmpty else { return }
        var changed: [String: DBusValue] = [:]
        var invalidated: [DBusValue] = []
        for property in properties {
            switch property {
            case .authorizationStatus(let status): changed[BeacondMember.authorizationStatus] = .string(status.rawValue)
            case .inUse(let inUse): changed[BeacondMember.inUse] = .boolean(inUse)
            case .monitoredRegions: invalidated.append(.string(BeacondMember.monitoredRegions))
            case .rangedConstraints: invalidated.append(.string(BeacondMember.rangedConstraints))
            }
        }
        queue(
            path: client.path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            [.string(BeacondInterface.locationManager), .vardict(changed), .array(elementSignature: "s", invalidated)],
            to: sender)
    }

    func propertyChanged(_ property: ManagerProperty) {
        let changed: [String: DBusValue] =
            switch property {
            case .locationServicesEnabled(let enabled): [BeacondMember.locationServicesEnabled: .boolean(enabled)]
            case .scanning(let scanning): [BeacondMember.scanning: .boolean(scanning)]
            case .scannerState(let state): [BeacondMember.scannerState: .string(state)]
            }
        queue(
            path: BeacondBus.managerPath, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            [.string(BeacondInterface.manager), .vardict(changed), .array(elementSignature: "s", [])], to: nil)
    }

    /// Who gets a ranging result of `beacons` beacons, the first being `first`: the next cycle replaces it, so a
    /// peer that is not reading misses it rather than stall beacond. Asked before the result is built, so one
    /// nobody gets is never built (10,000 beacons take ~100 ms); every beacon dictionary has the same keys and
    /// nearly the same size, so the first weighs them all.
    func rangingAudience(
        _ client: ClientAddress, constraint: BeaconIdentityConstraint, beacons: Int,
        first: RangedBeaconReport?
    ) -> RangingAudience {
        let perBeacon = first.map { Self.dictionary($0, deviceName: constraint.deviceName).marshalledSizeEstimate } ?? 0
        let bytes = Self.signalBytes([BeaconDictionaries.dictionary(constraint)]) + beacons * perBeacon
        let what = "DidRangeBeacons of \(client.path) (\(client.appID))"
        let toClient = client.sender.map { admitDroppable(to: $0, bytes: bytes, what: what) } ?? false
        let watchers = eventWatchers.filter { admitDroppable(to: $0, bytes: bytes, what: "Admin1.Event(\(what))") }
        return RangingAudience(client: toClient, watchers: watchers)
    }

    struct RangingAudience {
        var client: Bool
        var watchers: [String]
        var isEmpty: Bool { !client && watchers.isEmpty }
    }

    /// `DidRangeBeacons` to the audience `rangingAudience` admitted.
    func range(
        _ client: ClientAddress, constraint: BeaconIdentityConstraint, _ reports: [RangedBeaconReport],
        to audience: RangingAudience
    ) {
        let beacons = BeaconDictionaries.array(reports.map { Self.dictionary($0, deviceName: constraint.deviceName) })
        let constraint = BeaconDictionaries.dictionary(constraint)
        if audience.client, let sender = client.sender {
            queue(
                path: client.path, interface: BeacondInterface.locationManager, member: BeacondMember.didRangeBeacons,
                [beacons, constraint], to: sender, counted: true)
        }
        guard !audience.watchers.isEmpty else { return }
        var data = Self.clientData(client)
        data[BeacondEventKey.beacons] = beacons
        data[BeacondEventKey.constraint] = constraint
        adminEvent(BeacondEventKind.didRangeBeacons, data, admitted: audience.watchers)
    }

    /// A ranged beacon's dictionary, with `Room`, `Receivers` and `Receiver` while there are rooms: the beacon's room
    /// as the room locator places it ("" when it cannot be said), every receiver's calibrated, smoothed distance from
    /// fresh readings by room, and the receiver whose reading gave its RSSI and accuracy ("" when nobody heard it this
    /// cycle). A private device's is named by `deviceName`, the name in the constraint it was ranged for (a private
    /// device's constraint matches that one device).
    static func dictionary(_ report: RangedBeaconReport, deviceName: String? = nil) -> DBusValue {
        let plain = BeaconDictionaries.dictionary(report.beacon, deviceName: deviceName)
        guard let room = report.room, case .dictionary(let key, let value, var entries) = plain else { return plain }
        entries.append(DBusDictionaryEntry(key: .string(BeacondKey.room), value: .variant(.string(room))))
        entries.append(
            DBusDictionaryEntry(
                key: .string(BeacondKey.receivers),
                value: .variant(
                    .dictionary(
                        keySignature: "s", valueSignature: "d",
                        report.receivers.sorted { $0.key < $1.key }.map { DBusDictionaryEntry(key: .string($0.key), value: .double($0.value)) }))))
        entries.append(DBusDictionaryEntry(key: .string(BeacondKey.receiver), value: .variant(.string(report.beacon.receiver ?? ""))))
        if let position = report.position {
            entries.append(DBusDictionaryEntry(key: .string(BeacondKey.position), value: .variant(Self.dictionary(position))))
        }
        return .dictionary(keySignature: key, valueSignature: value, entries)
    }

    /// A position's `a{sv}` (`BeacondPositionKey`), metres rounded to centimetres.
    static func dictionary(_ position: Position) -> DBusValue {
        func metres(_ value: Double) -> DBusValue { .variant(.double((value * 100).rounded() / 100)) }
        return .dictionary(
            keySignature: "s", valueSignature: "v",
            [
                DBusDictionaryEntry(key: .string(BeacondPositionKey.x), value: metres(position.x)),
                DBusDictionaryEntry(key: .string(BeacondPositionKey.y), value: metres(position.y)),
                DBusDictionaryEntry(key: .string(BeacondPositionKey.z), value: metres(position.z)),
                DBusDictionaryEntry(key: .string(BeacondPositionKey.floor), value: .variant(.string(position.floor))),
                DBusDictionaryEntry(key: .string(BeacondPositionKey.accuracy), value: metres(position.accuracy)),
                DBusDictionaryEntry(key: .string(BeacondPositionKey.fixes), value: .variant(.uint32(UInt32(clamping: position.fixes)))),
            ])
    }

    // MARK: Building

    /// A client event's member and arguments.
    static func signal(_ event: ClientEvent) -> (member: String, arguments: [DBusValue]) {
        switch event {
        case .authorizationChanged(let status):
            return (BeacondMember.authorizationChanged, [.string(status.rawValue)])
        case .didStartMonitoring(let region):
            return (BeacondMember.didStartMonitoring, [BeaconDictionaries.dictionary(region)])
        case .didDetermineState(let state, let region, let info):
            return (BeacondMember.didDetermineState, [.string(state.rawValue), BeaconDictionaries.dictionary(region), dictionary(info)])
        case .didEnterRegion(let region, let info):
            return (BeacondMember.didEnterRegion, [BeaconDictionaries.dictionary(region), dictionary(info)])
        case .didExitRegion(let region, let info):
            return (BeacondMember.didExitRegion, [BeaconDictionaries.dictionary(region), dictionary(info)])
        case .monitoringDidFail(let region, let error):
            return (BeacondMember.monitoringDidFail, [BeaconDictionaries.dictionary(region), .string(error.name.rawValue), .string(error.message)])
        case .rangingDidFail(let constraint, let error):
            return (BeacondMember.rangingDidFail, [BeaconDictionaries.dictionary(constraint), .string(error.name.rawValue), .string(error.message)])
        }
    }

    /// A client event's `Admin1.Event` kind and data (beside the app and client).
    static func mirror(_ event: ClientEvent) -> (kind: String, data: [String: DBusValue]) {
        switch event {
        case .authorizationChanged(let status):
            return (BeacondEventKind.authorizationChanged, [BeacondEventKey.status: .string(status.rawValue)])
        case .didStartMonitoring(let region):
            return (BeacondEventKind.didStartMonitoring, [BeacondEventKey.region: BeaconDictionaries.dictionary(region)])
        case .didDetermineState(let state, let region, _):
            return (
                BeacondEventKind.didDetermineState,
                [BeacondEventKey.region: BeaconDictionaries.dictionary(region), BeacondEventKey.state: .string(state.rawValue)]
            )
        case .didEnterRegion(let region, _):
            return (BeacondEventKind.didEnterRegion, [BeacondEventKey.region: BeaconDictionaries.dictionary(region)])
        case .didExitRegion(let region, _):
            return (BeacondEventKind.didExitRegion, [BeacondEventKey.region: BeaconDictionaries.dictionary(region)])
        case .monitoringDidFail(let region, let error):
            return (
                BeacondEventKind.monitoringDidFail,
                [
                    BeacondEventKey.region: BeaconDictionaries.dictionary(region), BeacondEventKey.error: .string(error.name.rawValue),
                    BeacondEventKey.message: .string(error.message),
                ]
            )
        case .rangingDidFail(let constraint, let error):
            return (
                BeacondEventKind.rangingDidFail,
                [
                    BeacondEventKey.constraint: BeaconDictionaries.dictionary(constraint),
                    BeacondEventKey.error: .string(error.name.rawValue), BeacondEventKey.message: .string(error.message),
                ]
            )
        }
    }

    /// The event dictionary every region event signal carries after its region.
    static func dictionary(_ info: EventInfo) -> DBusValue {
        var entries: [String: DBusValue] = [
            BeacondEventInfoKey.timestamp: .uint64(UInt64(clamping: info.timestamp.microsecondsSinceEpoch)),
            BeacondEventInfoKey.late: .boolean(info.late),
        ]
        if info.droppedBefore > 0 { entries[BeacondEventInfoKey.droppedBefore] = .uint32(UInt32(clamping: info.droppedBefore)) }
        return .vardict(entries)
    }

    static func clientData(_ client: ClientAddress) -> [String: DBusValue] {
        [BeacondEventKey.appID: .string(client.appID), BeacondEventKey.client: .objectPath(client.path)]
    }

    static func signalBytes(_ arguments: [DBusValue]) -> Int {
        // The header (path, interface, member, destination, signature) is under 256 bytes.
        arguments.reduce(256) { $0 + $1.marshalledSizeEstimate }
    }

    // MARK: The outbox

    /// `Admin1.Event` to every watcher that reads (flow control: events are for watching, and a stopped
    /// `beaconctl events` must not stall the daemon), or to the watchers `admitted` for a ranging event.
    private func adminEvent(_ kind: String, _ data: [String: DBusValue], admitted: [String]? = nil) {
        guard hasEventWatchers else { return }
        let recipients =
            admitted
            ?? eventWatchers.filter {
                admitDroppable(to: $0, bytes: SignalOutbox.smallSignalBytes, what: "Admin1.Event(\(kind))")
            }
        guard !recipients.isEmpty else { return }
        var data = data
        data[BeacondEventKey.timestamp] = .uint64(UInt64(clamping: clock().microsecondsSinceEpoch))
        for watcher in recipients {
            queue(
                path: BeacondBus.managerPath, interface: BeacondInterface.admin, member: BeacondMember.event,
                [.string(kind), .vardict(data)], to: watcher, counted: true)
        }
    }

    /// Queues a signal: after the current method's reply, in order. `counted`: admitted as droppable, already
    /// counted.
    private func queue(
        path: String, interface: String, member: String, _ arguments: [DBusValue], to destination: String?,
        counted: Bool = false
    ) {
        let signal = SignalOutbox.Signal(
            path: path, interface: interface, member: member, arguments: arguments,
            destination: destination)
        if outbox.queue(signal, counted: counted) { flushDue() }
    }

    /// Whether anything waits to be sent (a flush is due, or was asked for by a dropped signal).
    func scheduleFlushIfNeeded() {
        if outbox.flushNeeded() { flushDue() }
    }

    /// Sends everything queued, in order, then pings the peers with unread bytes so beacond learns what they read.
    func send() {
        for signal in outbox.takeForSending() {
            do {
                try server.emit(
                    path: signal.path, interface: signal.interface, member: signal.member,
                    arguments: signal.arguments, destination: signal.destination)
            } catch {
                logger.error("could not send \(signal.interface).\(signal.member): \(error)")
            }
        }
        pingPeers()
    }

    /// Queued signals are sent and nothing more will be: shutdown.
    func close() {
        send()
        connection.flush()
        for path in server.exportedPaths { server.unexport(path: path) }
    }
}

extension BusFace {
    /// Asks the bus to start an app's declared `dbus_name` (its `.service` file says how) to deliver its queued
    /// region events; the outcome is logged, with the fix when it fails.
    func activate(_ name: String, for appID: String) {
        logger.info("starting \(name) on the bus for \(appID) to deliver its queued region events")
        server.callAsync(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus", member: "StartServiceByName",
            arguments: [.string(name), .uint32(0)]
        ) { [logger] result in
            switch result {
            case .success(let reply):
                // 1: started now; 2: it was already running (its client may be about to register).
                let started = reply.first == .uint32(1)
                logger.info("\(name) \(started ? "started" : "was already running") for \(appID)")
            case .failure(let error):
                let fix =
                    "install a D-Bus service file for \(name) (/usr/share/dbus-1/system-services/\(name).service "
                    + "with Name=, Exec= and User=), or remove dbus_name from the app's declaration"
                logger.warning("could not start \(name) for \(appID): \(error.name): \(error.message). Fix: \(fix)")
            }
        }
    }
}
