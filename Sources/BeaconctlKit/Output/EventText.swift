public import DBus
public import BeaconKit
import BeacondAPI

/// One event (an `Admin1.Event`, or a client's own LocationManager1 signal named the same way) as one
/// line for people, or one JSON object per line for scripts.
public enum EventText {
    /// `12:00:01.250  DidEnterRegion  com.example.door  region=lobby (E2C5…:1)`
    public static func line(kind: String, data: VarDict, time: Timestamp, utcOffset: Int64) -> String {
        let app = data.string(BeacondEventKey.appID) ?? "-"
        let details = summary(kind: kind, data: data)
        return "\(TimeText.clock(time, utcOffset: utcOffset))  \(kind)  \(app)" + (details.isEmpty ? "" : "  " + details)
    }

    /// The event's time: its `Timestamp` if it has one, else when we received it.
    public static func time(of data: VarDict, received: Timestamp) -> Timestamp {
        guard let micros = data.integer(BeacondEventKey.timestamp), micros > 0 else { return received }
        return Timestamp(microsecondsSinceEpoch: micros)
    }

    /// `{"Kind":…,"Time":…,"TimeISO8601":…,"Data":{…}}`; Data holds the event's dictionary as sent
    /// (with ISO-8601 siblings for timestamps).
    public static func json(kind: String, data: VarDict, time: Timestamp) -> JSON {
        .object([
            "Kind": .string(kind),
            "Time": .int(time.microsecondsSinceEpoch),
            "Time" + JSON.isoSuffix: .string(time.iso8601),
            "Data": JSON(data),
        ])
    }

    /// The data that matters for `kind`, as `key=value` pairs.
    public static func summary(kind: String, data: VarDict) -> String {
        typealias K = BeacondEventKey
        typealias E = BeacondEventKind
        func region(_ key: String) -> String? { data.dictionary(key).map(RegionText.region) }
        func pairs(_ items: [(String, String?)]) -> String {
            items.compactMap { key, value in value.map { "\(key)=\($0)" } }.joined(separator: " ")
        }
        // A queued event delivered to the app's next client: it happened at its timestamp, and maybe after losses.
        let late: [(String, String?)] =
            data.bool(BeacondEventInfoKey.late) == true
            ? [("late", "yes"), ("dropped_before", data.integer(BeacondEventInfoKey.droppedBefore).map(String.init))] : []
        switch kind {
        case E.clientRegistered, E.clientClosed:
            return pairs([("client", data.string(K.client))])
        case E.authorizationRequested:
            // Events carry the disposition; the sample client's own line carries the resulting status.
            return pairs([
                ("request", data.string(K.request)), ("disposition", data.string(K.disposition)),
                ("status", data.string(K.status)),
            ])
        case E.authorizationChanged:
            return pairs([("status", data.string(K.status))])
        case E.didStartMonitoring, E.didEnterRegion, E.didExitRegion:
            return pairs([("region", region(K.region))] + late)
        case E.didDetermineState:
            return pairs([("state", data.string(K.state)), ("region", region(K.region))] + late)
        case E.didRangeBeacons:
            let beacons = data.dictionaries(K.beacons)
            var text = pairs([
                ("constraint", data.dictionary(K.constraint).map(RegionText.constraint)),
                ("beacons", String(beacons.count)),
            ])
            if let nearest = beacons.first { text += " nearest=" + beaconSummary(nearest) }
            return text
        case E.monitoringDidFail:
            return pairs([("region", region(K.region)), ("error", data.string(K.error)), ("message", data.string(K.message))])
        case E.rangingDidFail:
            return pairs([
                ("constraint", data.dictionary(K.constraint).map(RegionText.constraint)),
                ("error", data.string(K.error)), ("message", data.string(K.message)),
            ])
        case E.locationServicesChanged:
            return pairs([("enabled", data.bool(K.enabled).map { $0 ? "on" : "off" })])
        case E.scanningChanged:
            return pairs([("scanning", data.bool(K.scanning).map { $0 ? "on" : "off" })])
        case E.configurationReloaded:
            let warnings = data.strings(K.warnings)
            return pairs([("warnings", String(warnings.count))]) + warnings.map { " warning=\($0)" }.joined()
        case E.configurationRejected:
            return pairs([("error", data.string(K.error))])
        default:
            // A kind newer than this beaconctl: show everything but the common keys.
            let skip: Set<String> = [K.appID, K.timestamp]
            return data.keys.sorted().filter { !skip.contains($0) }
                .compactMap { key in data[key].map { "\(key)=\(RegionText.compact($0))" } }
                .joined(separator: " ")
        }
    }

    /// `1:2 -59 dBm 0.92 m near`.
    public static func beaconSummary(_ beacon: VarDict) -> String {
        let rssi = beacon.integer(BeacondKey.rssi).map { "\($0) dBm" } ?? "? dBm"
        let accuracy = RegionText.accuracy(beacon.double(BeacondKey.accuracy))
        let proximity = beacon.string(BeacondKey.proximity) ?? "unknown"
        var telemetry = ""
        if let millivolts = beacon.integer(BeacondKey.batteryMillivolts) { telemetry += " battery \(millivolts) mV" }
        if let celsius = beacon.double(BeacondKey.temperature) { telemetry += " \(celsius) °C" }
        if let position = beacon.dictionary(BeacondKey.position), let x = position.double(BeacondPositionKey.x),
            let y = position.double(BeacondPositionKey.y)
        {
            let floor = position.string(BeacondPositionKey.floor) ?? "?"
            let accuracy = position.double(BeacondPositionKey.accuracy).map { String(format: " ±%.2f m", $0) } ?? ""
            telemetry += String(format: " at (%.2f, %.2f)", x, y) + " on \(floor)\(accuracy)"
        }
        if let room = beacon.string(BeacondKey.room), !room.isEmpty { telemetry += " in \(room)" }
        // Kinds other than iBeacon and AltBeacon have no numbers (their name says all).
        guard let major = beacon.integer(BeacondKey.major) else {
            return "\(rssi) \(accuracy == "unknown" ? accuracy : accuracy + " m") \(proximity)\(telemetry)"
        }
        let minor = beacon.integer(BeacondKey.minor).map(String.init) ?? "?"
        return "\(major):\(minor) \(rssi) \(accuracy == "unknown" ? accuracy : accuracy + " m") \(proximity)\(telemetry)"
    }
}
