public import DBus
public import BeaconKit
import BeacondAPI

/// `beaconctl status`, `regions`, `clients` and `auth list` for people.
public enum StatusText {
    /// Regions `beaconctl status` prints; `beaconctl regions` prints every one.
    public static let regionsShown = 50
    /// Other receivers on the broker shown (up to 1,000 are known); `status --json` has every one.
    public static let receiversShown = 50

    public static func status(_ status: VarDict, now: Timestamp) -> [String] {
        typealias K = BeacondStatusKey
        var lines: [String] = []
        var head = "beacond \(status.string(K.version) ?? "?")"
        if let started = status.integer(K.startedAt), started > 0 {
            head +=
                ", up \(TimeText.duration(seconds: (now.microsecondsSinceEpoch - started) / 1_000_000))"
                + " (since \(Timestamp(microsecondsSinceEpoch: started).iso8601))"
        }
        lines.append(head)
        let adapters = status.dictionaries(K.adapters).map { adapter in
            [
                adapter.string(BeacondAdapterKey.name), adapter.string(BeacondAdapterKey.address),
                adapter.bool(BeacondAdapterKey.powered).map { $0 ? "powered" : "powered off" },
            ]
            .compactMap { $0 }.joined(separator: " ")
        }
        // Each fact is its value line and continuation lines under it, kept as separate lines: the printer escapes
        // line breaks inside a line, so one the daemon sent in a value can never forge a line of this report.
        var scanner = status.string(K.scanner) ?? "?"
        if let state = status.string(K.scannerState) { scanner += " (\(state))" }
        let scannerDetail = status.string(K.scannerDetail).flatMap { $0.isEmpty ? nil : $0 }
        let configurationError = status.string(K.configurationError).flatMap { $0.isEmpty ? nil : $0 }
        let stateError = status.string(K.stateError).flatMap { $0.isEmpty ? nil : $0 }
        let facts: [(String, String, [String])] = [
            ("location services", status.bool(K.locationServicesEnabled).map { $0 ? "on" : "off" } ?? "?", []),
            ("prompt policy", status.string(K.prompt) ?? "?", []),
            ("scanner", scanner, scannerDetail.map { [$0] } ?? []),
            ("scanning now", RegionText.yesNo(status.bool(K.scanning)), []),
            ("adapters", adapters.isEmpty ? "none" : adapters.joined(separator: ", "), []),
            (
                "config", status.string(K.configDirectory) ?? "?",
                configurationError.map {
                    ["REJECTED at the last reload (the previous configuration stays in force): \($0)"]
                } ?? []
            ),
            ("state", status.string(K.stateDirectory) ?? "?", stateError.map { ["NOT SAVING: \($0)"] } ?? []),
            ("queued events", queued(status.dictionaries(StatusListKey.apps)), []),
            ("limits", limits(status.dictionary(K.limits)), []),
            mqtt(status),
        ]
        let width = facts.map(\.0.count).max() ?? 0
        let continuation = String(repeating: " ", count: width + 2)
        for (name, value, more) in facts {
            lines.append(name + String(repeating: " ", count: width - name.count + 2) + value)
            lines += more.map { continuation + $0 }
        }

        lines += section("clients", clients(status.dictionaries(StatusListKey.clients)))
        let shown = status.dictionaries(StatusListKey.regions)
        let total = Int(status.integer(StatusListKey.regionTotal) ?? Int64(shown.count))
        lines += section("regions", regions(shown, now: now), total: total)
        if total > shown.count {
            lines.append("  … and \(total - shown.count) more: beaconctl regions lists every one")
        }
        lines += section("pending requests", pendingRequests(status.dictionaries(StatusListKey.pendingRequests)))
        if let broker = status.string(K.mqttBroker), !broker.isEmpty {
            let shown = status.dictionaries(StatusListKey.receivers)
            let total = Int(status.integer(K.mqttReceiverCount) ?? Int64(shown.count))
            lines += section("other receivers", receivers(shown, now: now), total: max(total, shown.count))
            if total > shown.count {
                lines.append("  … and \(total - shown.count) more: beaconctl status --json lists every one")
            }
        }
        let warnings = status.strings(K.warnings)
        lines.append("")
        lines.append(warnings.isEmpty ? "configuration warnings: none" : "configuration warnings: \(warnings.count)")
        lines += warnings.map { "  " + $0 }
        return lines
    }

    /// The broker connection (`[mqtt]`), and what went wrong with it, each on a line of its own.
    static func mqtt(_ status: VarDict) -> (String, String, [String]) {
        typealias K = BeacondStatusKey
        guard let broker = status.string(K.mqttBroker), !broker.isEmpty else { return ("mqtt", "off", []) }
        let detail = status.string(K.mqttDetail).flatMap { $0.isEmpty ? nil : $0 }
        var more: [String] = []
        let value: String
        switch status.string(K.mqttState) ?? "?" {
        case "connected":
            value =
                "connected to \(broker) as room \(status.string(K.mqttRoom) ?? "?"), "
                + "\(status.integer(K.mqttReadingsPublished) ?? 0) readings published"
        case "failed":
            value = "FAILED to start (\(broker))"
            more += detail.map { [$0] } ?? []
        case "waiting":
            value = "NOT CONNECTED to \(broker), retrying"
            more += detail.map { [$0] } ?? []
        case let state:
            value = "\(state) to \(broker)"
        }
        if let notSent = status.integer(K.mqttReadingsNotSent), notSent > 0 {
            more.append("\(notSent) readings not sent while disconnected")
        }
        if let refused = status.string(K.mqttRefused), !refused.isEmpty { more.append("REFUSED by the broker: \(refused)") }
        if let evicted = status.integer(K.mqttReceiversEvicted), evicted > 0 {
            more.append("\(evicted) receivers forgotten to make room for new ones (the table holds 1,000)")
        }
        if let dropped = status.integer(K.mqttReadingsDropped), dropped > 0 {
            more.append("\(dropped) messages of other receivers dropped, the last: \(status.string(K.mqttLastDropped) ?? "?")")
        }
        return ("mqtt", value, more)
    }

    /// Region events waiting for absent apps, per app (`none` when no app has any).
    static func queued(_ apps: [VarDict]) -> String {
        let waiting = apps.compactMap { app -> String? in
            guard let count = app.integer(BeacondAppKey.queuedEvents), count > 0 else { return nil }
            return "\(app.string(BeacondAppKey.appID) ?? "?") \(count)"
        }
        return waiting.isEmpty ? "none" : waiting.joined(separator: ", ")
    }

    /// A blank line, "title: N" (`total` when the table holds only the first ones), and the table indented (or
    /// nothing more when empty).
    static func section(_ title: String, _ table: TextTable, total: Int? = nil) -> [String] {
        let count = total ?? table.rows.count
        return ["", "\(title): \(count == 0 ? "none" : String(count))"] + (table.rows.isEmpty ? [] : table.lines(indent: "  "))
    }

    /// The bounds in force (GetStatus `Limits`), on one line.
    static func limits(_ limits: VarDict?) -> String {
        typealias K = BeacondLimitKey
        guard let limits else { return "?" }
        func value(_ key: String) -> String { limits.integer(key).map(String.init) ?? "?" }
        return "\(value(K.maxRegionsPerClient)) regions per client, \(value(K.maxRegionsPerApp)) per app; "
            + "\(value(K.maxClientsPerApp)) connected clients per app, \(value(K.maxClientsPerUser)) per user"
    }

    /// The other receivers on the broker: room, online or not, last reading, readings taken.
    public static func receivers(_ receivers: [VarDict], now: Timestamp) -> TextTable {
        typealias K = BeacondReceiverKey
        return TextTable(
            columns: [.init("ROOM"), .init("STATE"), .init("LAST READING"), .init("READINGS", alignRight: true)],
            rows: receivers.map { receiver in
                [
                    receiver.string(K.room) ?? "?", receiver.bool(K.online).map { $0 ? "online" : "OFFLINE" } ?? "?",
                    receiver.integer(K.lastReading).map { $0 > 0 ? TimeText.relative($0, now: now) : "never" } ?? "?",
                    receiver.integer(K.readings).map(String.init) ?? "?",
                ]
            })
    }

    public static func clients(_ clients: [VarDict]) -> TextTable {
        typealias K = BeacondClientKey
        return TextTable(
            columns: [
                .init("CLIENT"), .init("APP"), .init("UID", alignRight: true), .init("PID", alignRight: true),
                .init("STATUS"), .init("IN USE"), .init("CONNECTED"), .init("REGIONS", alignRight: true),
                .init("RANGING", alignRight: true),
            ],
            rows: clients.map { client in
                [
                    client.string(K.path) ?? "?", client.string(K.appID) ?? "?",
                    client.integer(K.unixUserID).map(String.init) ?? "?", client.integer(K.processID).map(String.init) ?? "?",
                    client.string(K.authorizationStatus) ?? "?", RegionText.yesNo(client.bool(K.inUse)),
                    RegionText.yesNo(client.bool(K.connected)),
                    client.integer(K.monitoredRegions).map(String.init) ?? "?",
                    client.integer(K.rangedConstraints).map(String.init) ?? "?",
                ]
            })
    }

    public static func regions(_ regions: [VarDict], now: Timestamp) -> TextTable {
        typealias K = BeacondRegionStatusKey
        return TextTable(
            columns: [
                .init("APP"), .init("IDENTIFIER"), .init("CONSTRAINT"), .init("STATE"), .init("LAST SEEN"), .init("CLIENT"),
            ],
            rows: regions.map { region in
                [
                    region.string(K.appID) ?? "?", region.string(BeacondKey.identifier) ?? "?", RegionText.constraint(region),
                    region.string(K.state) ?? "?", region.integer(K.lastSeen).map { TimeText.relative($0, now: now) } ?? "?",
                    region.string(K.client) ?? "?",
                ]
            })
    }

    public static func pendingRequests(_ requests: [VarDict]) -> TextTable {
        typealias K = BeacondPendingRequestKey
        return TextTable(
            columns: [.init("APP"), .init("REQUEST"), .init("STATUS"), .init("USAGE DESCRIPTION")],
            rows: requests.map { request in
                [
                    request.string(K.appID) ?? "?", request.string(K.request) ?? "?", request.string(K.currentStatus) ?? "?",
                    request.string(K.usageDescription) ?? "",
                ]
            })
    }

    public static func apps(_ apps: [VarDict]) -> TextTable {
        typealias K = BeacondAppKey
        return TextTable(
            columns: [.init("APP"), .init("STATUS"), .init("PENDING"), .init("USERS"), .init("DECLARED IN")],
            rows: apps.map { app in
                let pending = app.string(K.pendingRequest) ?? ""
                return [
                    app.string(K.appID) ?? "?", app.string(K.authorizationStatus) ?? "?", pending.isEmpty ? "-" : pending,
                    app.strings(K.users).joined(separator: ","), app.string(K.declarationFile) ?? "?",
                ]
            })
    }

    /// `beaconctl auth list`: every declared app, then the requests waiting for a decision with the fix.
    public static func authorizations(apps: [VarDict], pending: [VarDict]) -> [String] {
        var lines = ["apps: \(apps.isEmpty ? "none declared (add /etc/beacond/apps.d/APP.toml)" : String(apps.count))"]
        if !apps.isEmpty { lines += StatusText.apps(apps).lines(indent: "  ") }
        lines += section("pending requests", pendingRequests(pending))
        if let first = pending.first, let app = first.string(BeacondPendingRequestKey.appID) {
            let level = AuthorizationLevel(request: first.string(BeacondPendingRequestKey.request) ?? "").rawValue
            lines.append("decide with: beaconctl auth grant \(app) \(level)   or   beaconctl auth deny \(app)")
        }
        return lines
    }
}
