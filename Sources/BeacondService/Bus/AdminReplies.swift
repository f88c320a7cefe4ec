import BeaconKit
import BeacondAPI
import DBus
import Logging
import BeacondCore

/// Admin1's read side: status, and the paged lists of regions, clients, apps and pending requests.
extension ExportedObjects {
    /// The most entries one `List*` reply carries: a region entry is under 1 KiB (a 256-byte identifier is the
    /// largest part), so a page stays under 0.5 MiB, far below the bus's message limit (32 MiB on the system bus).
    static let maximumPageSize = 500

    /// `GetStatus`: the daemon's state in counts and settings, never lists, so its size does not grow with what
    /// clients did (with 75,000 regions the old lists took seconds and ended the daemon's bus connection). The
    /// lists are paged: `ListRegions`, `ListClients`, `ListApps`, `ListPendingRequests`.
    static func status(_ daemon: isolated BeaconDaemon) -> DBusValue {
        daemon.run(.checkStateDatabase)
        let view = daemon.view
        let configuration = view.configuration
        // A queue that cannot be read is said in StateError, not shown as empty queues.
        var stateError = view.stateError ?? ""
        let queued = queuedEventCounts(daemon, stateError: &stateError)
        var status: [String: DBusValue] = [
            BeacondStatusKey.version: .string(BeacondVersion.current),
            BeacondStatusKey.locationServicesEnabled: .boolean(view.locationServicesEnabled),
            BeacondStatusKey.scanning: .boolean(view.scanner.isScanning),
            BeacondStatusKey.scanner: .string("\(configuration.scanner)"),
            BeacondStatusKey.scannerState: .string(view.scanner.stateText),
            BeacondStatusKey.scannerDetail: .string(view.scanner.detail),
            BeacondStatusKey.adapters: BeaconDictionaries.array(
                (daemon.resources.scanner?.adapters ?? []).map { adapter in
                    .vardict([
                        BeacondAdapterKey.name: .string(adapter.name), BeacondAdapterKey.address: .string(adapter.address),
                        BeacondAdapterKey.powered: .boolean(adapter.powered),
                    ])
                }),
            BeacondStatusKey.prompt: .string(configuration.prompt.rawValue),
            BeacondStatusKey.clientCount: .uint32(UInt32(clamping: view.clientCount)),
            BeacondStatusKey.connectedClientCount: .uint32(UInt32(clamping: view.connectedClientCount)),
            BeacondStatusKey.regionCount: .uint32(UInt32(clamping: view.regionCount)),
            BeacondStatusKey.pendingRequestCount: .uint32(UInt32(clamping: view.pendingRequests.count)),
            BeacondStatusKey.appCount: .uint32(UInt32(clamping: configuration.apps.count)),
            BeacondStatusKey.queuedEventCount: .uint32(UInt32(clamping: queued.values.reduce(0, +))),
            BeacondStatusKey.limits: .vardict([
                BeacondLimitKey.maxRegionsPerClient: .uint32(UInt32(clamping: configuration.maxRegionsPerClient)),
                BeacondLimitKey.maxRegionsPerApp: .uint32(UInt32(clamping: configuration.maxRegionsPerApp)),
                BeacondLimitKey.maxClientsPerApp: .uint32(UInt32(clamping: configuration.maxClientsPerApp)),
                BeacondLimitKey.maxClientsPerUser: .uint32(UInt32(clamping: configuration.maxClientsPerUser)),
                BeacondLimitKey.maxClientsPerConnection: .uint32(UInt32(clamping: ClientService.maximumClientsPerConnection)),
                BeacondLimitKey.maxPageSize: .uint32(UInt32(clamping: Self.maximumPageSize)),
            ]),
            BeacondStatusKey.configDirectory: .string(daemon.options.configDirectory),
            BeacondStatusKey.stateDirectory: .string(daemon.options.stateDirectory),
            BeacondStatusKey.stateError: .string(stateError),
            BeacondStatusKey.warnings: .array(elementSignature: "s", configuration.warnings.map { .string("\($0)") }),
            BeacondStatusKey.configurationError: .string(view.rejectedConfiguration ?? ""),
            BeacondStatusKey.locationServicesConfigured: .boolean(configuration.locationServicesEnabled),
            BeacondStatusKey.locationServicesSwitch: .boolean(view.locationServicesSwitch),
            BeacondStatusKey.startedAt: .uint64(UInt64(clamping: daemon.startedAt.microsecondsSinceEpoch)),
        ]
        status.merge(mqttStatus(daemon)) { _, mqtt in mqtt }
        return .vardict(status)
    }

    /// Each app's queued events; a queue that cannot be read is added to `stateError`.
    static func queuedEventCounts(_ daemon: isolated BeaconDaemon, stateError: inout String) -> [String: Int] {
        do {
            return try daemon.view.queuedEventCounts()
        } catch {
            daemon.logger.error("cannot read the queued events for status: \(error)")
            stateError += (stateError.isEmpty ? "" : "; ") + "the queued events cannot be read: \(error)"
            return [:]
        }
    }

    /// One page of a listing: `offset` and `limit` as the caller sent them (a limit of 0, or one above
    /// `maximumPageSize`, means `maximumPageSize`), and the whole listing's size, so a caller walks it in turns.
    struct Page {
        var offset: Int
        var limit: Int

        init(_ call: DBusMethodCall) {
            guard case .uint32(let offset) = call.arguments[0], case .uint32(let limit) = call.arguments[1] else {
                self.offset = 0
                self.limit = ExportedObjects.maximumPageSize
                return
            }
            self.offset = Int(offset)
            self.limit = limit == 0 ? ExportedObjects.maximumPageSize : min(Int(limit), ExportedObjects.maximumPageSize)
        }

        func reply(_ entries: [DBusValue], total: Int) -> [DBusValue] {
            [BeaconDictionaries.array(entries), .uint32(UInt32(clamping: total))]
        }

        /// This page of a listing that is at hand as a whole (bounded: clients, apps, pending requests).
        func slice<Element>(_ all: [Element]) -> ArraySlice<Element> {
            all.dropFirst(offset).prefix(limit)
        }
    }

    /// `ListRegions`: every monitored region with whose it is and its state.
    static func regionList(_ daemon: isolated BeaconDaemon, _ page: Page) -> [DBusValue] {
        let view = daemon.view
        return page.reply(
            view.regions(offset: page.offset, limit: page.limit).map { session, region, saved in
                guard case .dictionary(_, _, var entries) = BeaconDictionaries.dictionary(region) else { return .vardict([:]) }
                let extra: [String: DBusValue] = [
                    BeacondRegionStatusKey.appID: .string(session.appID),
                    BeacondRegionStatusKey.client: .objectPath(session.path),
                    BeacondRegionStatusKey.state: .string((saved?.state ?? .unknown).rawValue),
                    BeacondRegionStatusKey.lastSeen: .uint64(UInt64(clamping: saved?.lastSeen?.microsecondsSinceEpoch ?? 0)),
                ]
                for (key, value) in extra.sorted(by: { $0.key < $1.key }) {
                    entries.append(DBusDictionaryEntry(key: .string(key), value: .variant(value)))
                }
                return .dictionary(keySignature: "s", valueSignature: "v", entries)
            }, total: view.regionCount)
    }

    /// `ListApps`: every declared app, its authorization and what it holds.
    static func appList(_ daemon: isolated BeaconDaemon, _ page: Page) -> [DBusValue] {
        var ignored = ""
        let queued = queuedEventCounts(daemon, stateError: &ignored)
        let view = daemon.view
        let configuration = view.configuration
        let appIDs = configuration.apps.keys.sorted()
        return page.reply(
            page.slice(appIDs).map { appID -> DBusValue in
                let app = configuration.apps[appID]
                let stored = view.record(appID)
                return .vardict([
                    BeacondAppKey.appID: .string(appID),
                    BeacondAppKey.authorizationStatus: .string(stored.status.rawValue),
                    BeacondAppKey.pendingRequest: .string(stored.pendingRequest?.rawValue ?? ""),
                    BeacondAppKey.declarationFile: .string(app?.declaration.declarationFile ?? ""),
                    BeacondAppKey.users: .array(elementSignature: "s", (app?.declaration.users.sorted() ?? []).map { .string($0) }),
                    BeacondAppKey.queuedEvents: .uint32(UInt32(clamping: queued[appID] ?? 0)),
                    BeacondAppKey.monitoredRegions: .uint32(UInt32(clamping: view.regionCount(of: appID))),
                    BeacondAppKey.connectedClients: .uint32(UInt32(clamping: view.connectedClientCount(of: appID))),
                ])
            }, total: appIDs.count)
    }

    /// `ListClients`.
    static func clientList(_ daemon: isolated BeaconDaemon, _ page: Page) -> [DBusValue] {
        let view = daemon.view
        let all = view.clients
        return page.reply(
            page.slice(all).map { session in
                var entries: [String: DBusValue] = [
                    BeacondClientKey.path: .objectPath(session.path),
                    BeacondClientKey.appID: .string(session.appID),
                    BeacondClientKey.sender: .string(session.sender ?? ""),
                    BeacondClientKey.authorizationStatus: .string(view.effectiveStatus(session.appID).rawValue),
                    BeacondClientKey.inUse: .boolean(session.inUse),
                    BeacondClientKey.connected: .boolean(session.isConnected),
                    BeacondClientKey.monitoredRegions: .uint32(UInt32(session.regions.count)),
                    BeacondClientKey.rangedConstraints: .uint32(UInt32(session.rangedConstraints.count)),
                ]
                if let pid = session.processID { entries[BeacondClientKey.processID] = .uint32(pid) }
                if let uid = session.userID { entries[BeacondClientKey.unixUserID] = .uint32(uid) }
                return .vardict(entries)
            }, total: all.count)
    }

    /// `ListPendingRequests`.
    static func pendingRequestList(_ daemon: isolated BeaconDaemon, _ page: Page) -> [DBusValue] {
        let view = daemon.view
        let configuration = view.configuration
        let all = view.pendingRequests
        return page.reply(
            page.slice(all).map { pending in
                .vardict([
                    BeacondPendingRequestKey.appID: .string(pending.appID),
                    BeacondPendingRequestKey.request: .string(pending.request.rawValue),
                    BeacondPendingRequestKey.currentStatus: .string(pending.status.rawValue),
                    BeacondPendingRequestKey.usageDescription:
                        .string(configuration.apps[pending.appID]?.declaration.usageDescription(for: pending.request) ?? ""),
                ])
            }, total: all.count)
    }

}
