import BeaconKit
import BeaconctlKit
import BeacondAPI
import DBus
import MainLoopKit
import Foundation
import TestKit

/// Just enough of beacond, on a private bus, to drive the real `beaconctl` binary through every command:
/// Manager1.RegisterClient, Admin1, and client objects whose signals follow the contract. Everything it is
/// asked is logged. The real daemon's behaviour is tested elsewhere; this checks beaconctl's side.
final class FakeBeacond: @unchecked Sendable {
    let bus: PrivateBus
    let log = CallLog()
    private let loop: MainLoop
    private var connection: DBusConnection?
    private var server: DBusObjectServer?
    private let denyAdmin: Bool
    private let eventsOnWatch: [(String, [String: DBusValue])]

    // Loop thread only.
    private var statuses: [String: String]
    private var pending: [String: String] = [:]
    private var clients: [String: (app: String, owner: String)] = [:]
    private var watchers: [String] = []
    private var nextClient = 1

    init(
        bus: PrivateBus? = nil, denyAdmin: Bool = false, appStatus: String = BeacondStatus.notDetermined,
        eventsOnWatch: [(String, [String: DBusValue])] = []
    ) throws {
        self.bus = try bus ?? PrivateBus()
        self.denyAdmin = denyAdmin
        self.eventsOnWatch = eventsOnWatch
        statuses = [Samples.app: appStatus]
        loop = try MainLoop()
        let connection = try DBusConnection(.address(self.bus.address))
        _ = try connection.requestName(BeacondBus.name)
        let server = try DBusObjectServer(connection: connection, loop: loop)
        self.connection = connection
        self.server = server
        server.connectionClosed = { [weak self] name in
            guard let self else { return }
            watchers.removeAll { $0 == name }
        }
        server.export(DBusObject(path: BeacondBus.managerPath, interfaces: [managerInterface(), adminInterface()]))
        try loop.startThread()
    }

    /// Leaves the bus, as a stopped or crashed daemon would.
    func stop() {
        loop.stopAndWait()
        server = nil
        connection = nil
    }

    // Handlers capture self weakly: deinit stops the loop, whose thread may be running one of them meanwhile.
    deinit { stop() }

    // MARK: Sending (loop thread)

    private func emit(_ path: String, _ member: String, _ arguments: [DBusValue], to destination: String) {
        try? server?.emit(
            path: path, interface: BeacondInterface.locationManager, member: member,
            arguments: arguments, destination: destination)
    }

    private func event(_ kind: String, _ data: [String: DBusValue], to only: String? = nil) {
        for watcher in watchers where only == nil || only == watcher {
            try? server?.emit(
                path: BeacondBus.managerPath, interface: BeacondInterface.admin, member: BeacondMember.event,
                arguments: [.string(kind), .vardict(data)], destination: watcher)
        }
    }

    /// Runs after the current method's reply has gone out.
    private func later(_ body: @escaping @Sendable () -> Void) {
        loop.execute(body)
    }

    private static func refuse(_ name: BeacondErrorName, _ message: String) -> DBusCallError {
        DBusCallError(name: name.rawValue, message: message)
    }

    // MARK: Manager1

    private func managerInterface() -> DBusInterface {
        DBusInterface(
            BeacondInterface.manager,
            methods: [
                DBusMethod(BeacondMember.registerClient, in: [DBusArgument("app_id", "s")], out: [DBusArgument("client", "o")]) {
                    [weak self] call throws(DBusCallError) in
                    guard let self else { return [] }
                    let app = call.arguments.first?.stringValue ?? ""
                    log.append("RegisterClient \(app)")
                    guard let status = statuses[app] else {
                        throw Self.refuse(.unknownApp, "no app '\(app)' is declared; add /etc/beacond/apps.d/\(app).toml")
                    }
                    let path = BeacondBus.clientPathPrefix + String(nextClient)
                    nextClient += 1
                    clients[path] = (app, call.sender)
                    server?.export(clientObject(path: path, app: app, owner: call.sender))
                    emit(path, BeacondMember.authorizationChanged, [.string(status)], to: call.sender)
                    event(BeacondEventKind.clientRegistered, [BeacondEventKey.appID: .string(app), BeacondEventKey.client: .objectPath(path)])
                    return [.objectPath(path)]
                }
            ])
    }

    // MARK: A client's LocationManager1

    private func clientObject(path: String, app: String, owner: String) -> DBusObject {
        func method(
            _ name: String, _ signature: String = "", out: String = "",
            _ body: @escaping (DBusMethodCall) throws(DBusCallError) -> [DBusValue]
        ) -> DBusMethod {
            DBusMethod(
                name, in: signature.isEmpty ? [] : [DBusArgument("argument", signature)],
                out: out.isEmpty ? [] : [DBusArgument("result", out)], handler: body)
        }
        let request = { [weak self] (kind: String) -> [DBusValue] in
            guard let self else { return [] }
            log.append("Request \(kind)")
            let status = statuses[app] ?? BeacondStatus.notDetermined
            if status == BeacondStatus.notDetermined {
                pending[app] = kind
                event(
                    BeacondEventKind.authorizationRequested,
                    [
                        BeacondEventKey.appID: .string(app),
                        BeacondEventKey.request: .string(kind),
                        BeacondEventKey.disposition: .string("pending"),
                    ])
            }
            return [.string(status)]
        }
        let interface = DBusInterface(
            BeacondInterface.locationManager,
            methods: [
                method(BeacondMember.requestAlwaysAuthorization, out: "s") { _ in request(BeacondRequestKind.always) },
                method(BeacondMember.requestWhenInUseAuthorization, out: "s") { _ in request(BeacondRequestKind.whenInUse) },
                method(BeacondMember.startMonitoring, "a{sv}") { [weak self] call throws(DBusCallError) in
                    guard let self else { return [] }
                    let region = call.arguments[0].vardictEntries ?? [:]
                    log.append("StartMonitoring \(region.string(BeacondKey.identifier) ?? "?") \(region.keys.sorted().joined(separator: ","))")
                    let status = statuses[app] ?? ""
                    guard status == BeacondStatus.authorizedAlways else {
                        throw Self.refuse(
                            .notAuthorized,
                            "monitoring needs authorizedAlways; this app is \(status). Call "
                                + "RequestAlwaysAuthorization or ask an administrator: beaconctl auth grant \(app) always")
                    }
                    let value = call.arguments[0]
                    later { [weak self] in
                        guard let self else { return }
                        emit(path, BeacondMember.didStartMonitoring, [value], to: owner)
                        emit(path, BeacondMember.didDetermineState, [.string("inside"), value], to: owner)
                        emit(path, BeacondMember.didEnterRegion, [value], to: owner)
                    }
                    return []
                },
                method(BeacondMember.startRanging, "a{sv}") { [weak self] call throws(DBusCallError) in
                    guard let self else { return [] }
                    log.append("StartRanging")
                    guard [BeacondStatus.authorizedAlways, BeacondStatus.authorizedWhenInUse].contains(statuses[app] ?? "") else {
                        throw Self.refuse(.notAuthorized, "ranging needs authorization; request it first")
                    }
                    let constraint = call.arguments[0]
                    let beacons = Samples.dictionaries([Samples.beacon(minor: 2, rssi: -58, accuracy: 0.92, proximity: "near")])
                    later { [weak self] in
                        guard let self else { return }
                        for _ in 0..<3 { emit(path, BeacondMember.didRangeBeacons, [beacons, constraint], to: owner) }
                    }
                    return []
                },
                method(BeacondMember.stopMonitoring, "s") { [weak self] call in
                    guard let self else { return [] }
                    log.append("StopMonitoring \(call.arguments[0].stringValue ?? "")")
                    return []
                },
                method(BeacondMember.stopRanging, "a{sv}") { [weak self] _ in
                    guard let self else { return [] }
                    log.append("StopRanging")
                    return []
                },
                method(BeacondMember.requestState, "s") { [weak self] call in
                    guard let self else { return [] }
                    log.append("RequestState \(call.arguments[0].stringValue ?? "")")
                    return []
                },
                method(BeacondMember.close) { [weak self] _ in
                    guard let self else { return [] }
                    log.append("Close \(path)")
                    server?.unexport(path: path)
                    clients[path] = nil
                    return []
                },
            ],
            properties: [
                // A new client of the fake takes nothing over: it holds no region when beaconctl looks.
                DBusProperty(BeacondMember.monitoredRegions, "aa{sv}", changeSignal: .invalidates) { _ in
                    .array(elementSignature: "a{sv}", [])
                }
            ])
        return DBusObject(path: path, interfaces: [interface]) { sender throws(DBusCallError) in
            guard sender == owner else { throw Self.refuse(.accessDenied, "only the client's owner may call \(path)") }
        }
    }

    // MARK: Admin1

    private func statusDictionary() -> [String: DBusValue] {
        let status = statuses[Samples.app] ?? BeacondStatus.notDetermined
        return Samples.statusValues(
            now: Samples.nowFromClock(), appStatus: status, pending: pending[Samples.app] ?? "",
            clients: clientDictionaries())
    }

    private func clientDictionaries() -> [[String: DBusValue]] {
        clients.keys.sorted().compactMap { path in
            clients[path].map { Samples.client(path: path, app: $0.app, status: statuses[$0.app] ?? "", regions: 0, ranging: 0) }
        }
    }

    /// An Admin1 listing in pages, `(u offset, u limit) → (aa{sv}, u total)`, of the status sample's list `key`.
    private func paged(_ name: String, _ key: String) -> DBusMethod {
        DBusMethod(
            name, in: [DBusArgument("offset", "u"), DBusArgument("limit", "u")],
            out: [DBusArgument("entries", "aa{sv}"), DBusArgument("total", "u")]
        ) { [weak self] call throws(DBusCallError) in
            guard let self else { return [] }
            if denyAdmin {
                throw Self.refuse(
                    .accessDenied,
                    "Admin1 is for root and members of beacond-admin; "
                        + "add yourself: sudo usermod -aG beacond-admin $USER")
            }
            log.append(name)
            let all = statusDictionary()[key]?.arrayElements ?? []
            guard case .uint32(let offset) = call.arguments[0], case .uint32(let limit) = call.arguments[1] else { return [] }
            let page = Array(all.dropFirst(Int(offset)).prefix(limit == 0 ? 500 : Int(limit)))
            return [.array(elementSignature: "a{sv}", page), .uint32(UInt32(all.count))]
        }
    }

    private func adminInterface() -> DBusInterface {
        func admin(
            _ name: String, _ signature: String = "", out: String = "",
            _ body: @escaping (DBusMethodCall) throws(DBusCallError) -> [DBusValue]
        ) -> DBusMethod {
            DBusMethod(
                name, in: signature.map { DBusArgument("argument", String($0)) },
                out: out.isEmpty ? [] : [DBusArgument("result", out)]
            ) { [weak self] call throws(DBusCallError) in
                guard let self else { return [] }
                if denyAdmin {
                    throw Self.refuse(
                        .accessDenied,
                        "Admin1 is for root and members of beacond-admin; "
                            + "add yourself: sudo usermod -aG beacond-admin $USER")
                }
                return try body(call)
            }
        }
        return DBusInterface(
            BeacondInterface.admin,
            methods: [
                admin(BeacondMember.getStatus, out: "a{sv}") { [weak self] _ in
                    guard let self else { return [] }
                    log.append("GetStatus")
                    // As the daemon: counts in GetStatus, the lists from the paged methods below.
                    let lists: Set = [
                        StatusListKey.clients, StatusListKey.regions, StatusListKey.apps, StatusListKey.pendingRequests,
                        StatusListKey.receivers,
                    ]
                    return [.vardict(statusDictionary().filter { !lists.contains($0.key) })]
                },
                paged(BeacondMember.listClients, StatusListKey.clients),
                paged(BeacondMember.listRegions, StatusListKey.regions),
                paged(BeacondMember.listApps, StatusListKey.apps),
                paged(BeacondMember.listPendingRequests, StatusListKey.pendingRequests),
                paged(BeacondMember.listReceivers, StatusListKey.receivers),
                admin(BeacondMember.setAuthorization, "ss") { [weak self] call throws(DBusCallError) in
                    guard let self else { return [] }
                    let app = call.arguments[0].stringValue ?? "", status = call.arguments[1].stringValue ?? ""
                    log.append("SetAuthorization \(app) \(status)")
                    guard statuses[app] != nil else { throw Self.refuse(.unknownApp, "no app '\(app)' is declared") }
                    statuses[app] = status
                    pending[app] = nil
                    for (path, client) in clients where client.app == app {
                        emit(path, BeacondMember.authorizationChanged, [.string(status)], to: client.owner)
                    }
                    return []
                },
                admin(BeacondMember.resetAuthorization, "s") { [weak self] call in
                    guard let self else { return [] }
                    log.append("ResetAuthorization \(call.arguments[0].stringValue ?? "")")
                    return []
                },
                admin(BeacondMember.setLocationServicesEnabled, "b") { [weak self] call in
                    guard let self else { return [] }
                    if case .boolean(let enabled) = call.arguments[0] { log.append("SetLocationServicesEnabled \(enabled)") }
                    return []
                },
                admin(BeacondMember.watchEvents) { [weak self] call in
                    guard let self else { return [] }
                    watchers.append(call.sender)
                    let events = eventsOnWatch.map { ($0.0, DBusValue.vardict($0.1)) }
                    let watcher = call.sender
                    later { [weak self] in
                        guard let self else { return }
                        for (kind, data) in events { event(kind, data.vardictEntries ?? [:], to: watcher) }
                    }
                    log.append("WatchEvents")
                    return []
                },
                admin(BeacondMember.unwatchEvents) { [weak self] call in
                    guard let self else { return [] }
                    watchers.removeAll { $0 == call.sender }
                    log.append("UnwatchEvents")
                    return []
                },
            ])
    }
}
