import BeaconKit
import BeacondAPI
import DBus
import BeacondCore

/// The exported objects: `/org/beacond` (Manager1, Admin1) and each client's `/org/beacond/client/N`
/// (LocationManager1): every method's arguments decoded, its call handed to the daemon, its reply encoded.
/// Handlers run on the loop thread and enter the daemon synchronously.
struct ExportedObjects {
    let daemon: BeaconDaemon

    typealias Handler = @Sendable (isolated BeaconDaemon, DBusMethodCall) throws(DBusCallError) -> [DBusValue]

    /// A method whose handler runs isolated to the daemon. A call that is not the core's (status, listings, event
    /// watching) saves what is pending before its reply, as every call does (`DaemonCore.handle`).
    func method(
        _ name: String, in inArguments: [DBusArgument] = [], out outArguments: [DBusArgument] = [],
        _ body: @escaping Handler
    ) -> DBusMethod {
        DBusMethod(name, in: inArguments, out: outArguments) { call throws(DBusCallError) in
            try daemon.assumeIsolated { daemon in
                Result { () throws(DBusCallError) in
                    do throws(DBusCallError) {
                        let reply = try body(daemon, call)
                        daemon.run(.commit(.powerLoss))
                        return reply
                    } catch {
                        daemon.run(.commit(.processCrash))
                        throw error
                    }
                }
            }.get()
        }
    }

    /// A call for the core: its reply once what it changed is saved, or its refusal.
    static func answer(_ daemon: isolated BeaconDaemon, _ call: DaemonCall) throws(DBusCallError) -> [DBusValue] {
        switch daemon.run(.call(call)) {
        case .success(let reply)?:
            switch reply {
            case .none: return []
            case .clientPath(let path): return [.objectPath(path)]
            case .status(let status): return [.string(status.rawValue)]
            case .configurationError(let error): return [.string(error)]
            }
        case .failure(let error)?:
            throw error.dbusError
        case nil:
            return []
        }
    }

    /// An Admin1 method: the caller must be root or in `admin_group` before anything else happens.
    func adminMethod(
        _ name: String, in inArguments: [DBusArgument] = [], out outArguments: [DBusArgument] = [],
        _ body: @escaping Handler
    ) -> DBusMethod {
        method(name, in: inArguments, out: outArguments) { daemon, call throws(DBusCallError) in
            try Self.checkAdministrator(daemon, call.sender)
            return try body(daemon, call)
        }
    }

    /// An Admin1 listing in pages: `(u offset, u limit) → (aa{sv} entries, u total)`.
    func pagedMethod(
        _ name: String, _ entries: String,
        _ body: @escaping @Sendable (isolated BeaconDaemon, Page) -> [DBusValue]
    ) -> DBusMethod {
        adminMethod(
            name, in: [DBusArgument("offset", "u"), DBusArgument("limit", "u")],
            out: [DBusArgument(entries, "aa{sv}"), DBusArgument("total", "u")]
        ) { daemon, call in
            body(daemon, Page(call))
        }
    }

    func property(
        _ name: String, _ signature: String, changeSignal: DBusProperty.ChangeSignal = .value,
        _ read: @escaping @Sendable (isolated BeaconDaemon, String) -> DBusValue
    ) -> DBusProperty {
        DBusProperty(name, signature, changeSignal: changeSignal) { sender in
            daemon.assumeIsolated { daemon in read(daemon, sender) }
        }
    }

    func managerObject() -> DBusObject {
        let manager = DBusInterface(
            BeacondInterface.manager,
            methods: [
                method(BeacondMember.registerClient, in: [DBusArgument("app_id", "s")], out: [DBusArgument("client", "o")]) {
                    daemon, call throws(DBusCallError) in
                    guard case .string(let appID) = call.arguments[0] else { return [] }
                    let caller = try Self.callerCredentials(daemon, call.sender)
                    return try Self.answer(daemon, .registerClient(appID: appID, sender: call.sender, caller: caller))
                }
            ],
            properties: [
                property(BeacondMember.version, "s") { _, _ in .string(BeacondVersion.current) },
                property(BeacondMember.locationServicesEnabled, "b") { daemon, _ in .boolean(daemon.view.locationServicesEnabled) },
                property(BeacondMember.scanning, "b") { daemon, _ in .boolean(daemon.view.scanner.isScanning) },
                property(BeacondMember.scannerState, "s") { daemon, _ in .string(daemon.view.scannerState) },
            ])
        let admin = DBusInterface(
            BeacondInterface.admin,
            methods: [
                adminMethod(BeacondMember.getStatus, out: [DBusArgument("status", "a{sv}")]) { daemon, _ in [Self.status(daemon)] },
                pagedMethod(BeacondMember.listRegions, "regions") { daemon, page in Self.regionList(daemon, page) },
                pagedMethod(BeacondMember.listClients, "clients") { daemon, page in Self.clientList(daemon, page) },
                pagedMethod(BeacondMember.listApps, "apps") { daemon, page in Self.appList(daemon, page) },
                pagedMethod(BeacondMember.listPendingRequests, "requests") { daemon, page in Self.pendingRequestList(daemon, page) },
                pagedMethod(BeacondMember.listReceiverReadings, "readings") { daemon, page in Self.receiverReadings(daemon, page) },
                pagedMethod(BeacondMember.listReceiverHearings, "hearings") { daemon, page in Self.receiverHearings(daemon, page) },
                pagedMethod(BeacondMember.listReceivers, "receivers") { daemon, page in Self.receiverList(daemon, page) },
                adminMethod(BeacondMember.getFloorPlan, out: [DBusArgument("plan", "a{sv}")]) { daemon, _ in [Self.floorPlan(daemon)] },
                adminMethod(BeacondMember.reload, out: [DBusArgument("error", "s")]) { daemon, _ throws(DBusCallError) in
                    try Self.answer(daemon, daemon.reloadCall())
                },
                adminMethod(BeacondMember.setAuthorization, in: [DBusArgument("app_id", "s"), DBusArgument("status", "s")]) {
                    daemon, call throws(DBusCallError) in
                    guard case .string(let appID) = call.arguments[0] else {
                        throw BeacondError(.invalidArguments, "app_id must be a string").dbusError
                    }
                    guard case .string(let status) = call.arguments[1] else {
                        throw BeacondError(.invalidArguments, "status must be one of \(BeacondStatus.all.joined(separator: ", "))").dbusError
                    }
                    return try Self.answer(daemon, .setAuthorization(appID: appID, status: status, sender: call.sender))
                },
                adminMethod(BeacondMember.resetAuthorization, in: [DBusArgument("app_id", "s")]) {
                    daemon, call throws(DBusCallError) in
                    guard case .string(let appID) = call.arguments[0] else {
                        throw BeacondError(.invalidArguments, "app_id must be a string").dbusError
                    }
                    return try Self.answer(daemon, .resetAuthorization(appID: appID))
                },
                adminMethod(BeacondMember.setLocationServicesEnabled, in: [DBusArgument("enabled", "b")]) {
                    daemon, call throws(DBusCallError) in
                    guard case .boolean(let enabled) = call.arguments[0] else { return [] }
                    return try Self.answer(daemon, .setLocationServicesEnabled(enabled))
                },
                adminMethod(BeacondMember.watchEvents) { daemon, call in
                    daemon.bus?.watchEvents(call.sender)
                    return []
                },
                adminMethod(BeacondMember.unwatchEvents) { daemon, call in
                    daemon.bus?.unwatchEvents(call.sender)
                    return []
                },
            ], signals: [DBusSignalDescription(BeacondMember.event, [DBusArgument("kind", "s"), DBusArgument("data", "a{sv}")])])
        // RegisterClient and every Admin1 call check who the caller is: the server asks the bus before dispatching.
        return DBusObject(path: BeacondBus.managerPath, interfaces: [manager, admin], needsCallerCredentials: true)
    }

    func clientObject(_ number: Int) -> DBusObject {
        let region = DBusArgument("region", "a{sv}")
        let constraint = DBusArgument("constraint", "a{sv}")
        let event = DBusArgument("event", "a{sv}")
        func clientMethod(
            _ name: String, in inArguments: [DBusArgument] = [], out outArguments: [DBusArgument] = [],
            _ body: @escaping @Sendable (isolated BeaconDaemon, Int, DBusMethodCall) throws(DBusCallError) -> [DBusValue]
        ) -> DBusMethod {
            method(name, in: inArguments, out: outArguments) { daemon, call throws(DBusCallError) in
                try body(daemon, number, call)
            }
        }
        let interface = DBusInterface(
            BeacondInterface.locationManager,
            methods: [
                clientMethod(BeacondMember.requestWhenInUseAuthorization, out: [DBusArgument("status", "s")]) {
                    daemon, number, _ throws(DBusCallError) in try Self.answer(daemon, .requestAuthorization(.whenInUse, client: number))
                },
                clientMethod(BeacondMember.requestAlwaysAuthorization, out: [DBusArgument("status", "s")]) {
                    daemon, number, _ throws(DBusCallError) in try Self.answer(daemon, .requestAuthorization(.always, client: number))
                },
                clientMethod(BeacondMember.startMonitoring, in: [region]) { daemon, number, call throws(DBusCallError) in
                    let region = Result { () throws(BeacondError) in try BeaconDictionaries.region(from: call.arguments[0]) }
                    return try Self.answer(daemon, .startMonitoring(client: number, region))
                },
                clientMethod(BeacondMember.stopMonitoring, in: [DBusArgument("identifier", "s")]) { daemon, number, call throws(DBusCallError) in
                    guard case .string(let identifier) = call.arguments[0] else { return [] }
                    return try Self.answer(daemon, .stopMonitoring(client: number, identifier: identifier))
                },
                clientMethod(BeacondMember.requestState, in: [DBusArgument("identifier", "s")]) { daemon, number, call throws(DBusCallError) in
                    guard case .string(let identifier) = call.arguments[0] else { return [] }
                    return try Self.answer(daemon, .requestState(client: number, identifier: identifier))
                },
                clientMethod(BeacondMember.startRanging, in: [constraint]) { daemon, number, call throws(DBusCallError) in
                    let constraint = Result { () throws(BeacondError) in try BeaconDictionaries.constraint(from: call.arguments[0]) }
                    return try Self.answer(daemon, .startRanging(client: number, constraint))
                },
                clientMethod(BeacondMember.stopRanging, in: [constraint]) { daemon, number, call throws(DBusCallError) in
                    let constraint = Result { () throws(BeacondError) in try BeaconDictionaries.constraint(from: call.arguments[0]) }
                    return try Self.answer(daemon, .stopRanging(client: number, constraint))
                },
                clientMethod(BeacondMember.setInUse, in: [DBusArgument("in_use", "b")]) { daemon, number, call throws(DBusCallError) in
                    guard case .boolean(let inUse) = call.arguments[0] else { return [] }
                    return try Self.answer(daemon, .setInUse(client: number, inUse))
                },
                clientMethod(BeacondMember.close) { daemon, number, _ throws(DBusCallError) in
                    try Self.answer(daemon, .close(client: number))
                },
            ],
            properties: [
                BeacondMember.appID, BeacondMember.authorizationStatus, BeacondMember.inUse,
                BeacondMember.monitoredRegions, BeacondMember.rangedConstraints,
            ].map { name in
                property(name, Self.clientPropertySignature(name), changeSignal: Self.clientPropertyChangeSignal(name)) { daemon, _ in
                    let view = daemon.view
                    return view.client(number).map { Self.clientProperty(name, $0, view) } ?? .string("")
                }
            },
            signals: [
                DBusSignalDescription(BeacondMember.authorizationChanged, [DBusArgument("status", "s")]),
                DBusSignalDescription(BeacondMember.didStartMonitoring, [region]),
                DBusSignalDescription(BeacondMember.didDetermineState, [DBusArgument("state", "s"), region, event]),
                DBusSignalDescription(BeacondMember.didEnterRegion, [region, event]),
                DBusSignalDescription(BeacondMember.didExitRegion, [region, event]),
                DBusSignalDescription(BeacondMember.didRangeBeacons, [DBusArgument("beacons", "aa{sv}"), constraint]),
                DBusSignalDescription(BeacondMember.monitoringDidFail, [region, DBusArgument("error", "s"), DBusArgument("message", "s")]),
                DBusSignalDescription(BeacondMember.rangingDidFail, [constraint, DBusArgument("error", "s"), DBusArgument("message", "s")]),
            ])
        return DBusObject(path: BeacondBus.clientPathPrefix + String(number), interfaces: [interface]) {
            sender throws(DBusCallError) in
            try daemon.assumeIsolated { daemon in
                Result { () throws(DBusCallError) in try Self.checkOwner(daemon.view, number, sender) }
            }.get()
        }
    }

    static func clientPropertySignature(_ name: String) -> String {
        switch name {
        case BeacondMember.inUse: return "b"
        case BeacondMember.monitoredRegions, BeacondMember.rangedConstraints: return "aa{sv}"
        default: return "s"
        }
    }

    /// The region and constraint lists grow with use (up to max_regions_per_client): sending the whole list at
    /// every StartMonitoring made a client adding 1,000 regions receive ~75 MB, and one that does not dispatch
    /// signals while it waits for replies (dbus-python's blocking calls) stopped reading at libdbus's limit and
    /// never got its reply. They are announced by name; the value is one Get away.
    static func clientPropertyChangeSignal(_ name: String) -> DBusProperty.ChangeSignal {
        switch name {
        case BeacondMember.monitoredRegions, BeacondMember.rangedConstraints: return .invalidates
        default: return .value
        }
    }

    static func clientProperty(_ name: String, _ session: ClientSession, _ view: CoreView) -> DBusValue {
        switch name {
        case BeacondMember.appID: return .string(session.appID)
        case BeacondMember.authorizationStatus: return .string(view.effectiveStatus(session.appID).rawValue)
        case BeacondMember.inUse: return .boolean(session.inUse)
        case BeacondMember.monitoredRegions:
            return BeaconDictionaries.array(session.orderedRegions.map(BeaconDictionaries.dictionary))
        case BeacondMember.rangedConstraints:
            return BeaconDictionaries.array(session.rangedConstraints.map(BeaconDictionaries.dictionary))
        default: return .string("")
        }
    }

    /// Only the connection that registered a client may use its object.
    static func checkOwner(_ view: CoreView, _ number: Int, _ sender: String) throws(DBusCallError) {
        guard let session = view.client(number) else {
            throw DBusCallError(name: DBusStandardError.unknownObject, message: "client \(number) is closed; call RegisterClient again")
        }
        guard session.sender == sender else {
            throw BeacondError(
                .accessDenied,
                "\(session.path) belongs to another connection; only the connection that "
                    + "registered it may call it. Call \(BeacondInterface.manager).RegisterClient to get your own"
            ).dbusError
        }
    }
}

extension CallError {
    /// The error reply to send.
    var dbusError: DBusCallError {
        switch self {
        case .beacond(let error): error.dbusError
        case .clientClosed(let number):
            DBusCallError(name: DBusStandardError.unknownObject, message: "client \(number) is closed")
        }
    }
}
