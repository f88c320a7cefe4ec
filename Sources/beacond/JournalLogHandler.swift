import Foundation
import BeacondAPI
import Logging

/// swift-log output for a systemd service: under journald (`JOURNAL_STREAM` set) each line starts with the
/// syslog priority as `<N>` (sd-daemon(3)), which journald turns into the entry's PRIORITY, and carries no
/// timestamp (journald adds one). On a terminal, lines get an ISO-8601 time and the level spelled out.
/// Metadata follows as `key=value` pairs, so `journalctl -u beacond | grep client.app=` works.
struct JournalLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]
    let underJournald: Bool

    init(label: String, level: Logger.Level) {
        self.label = label
        logLevel = level
        underJournald = ProcessInfo.processInfo.environment["JOURNAL_STREAM"] != nil
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        let pairs = merged.keys.sorted().map { key in "\(key)=\(Self.quoted(UntrustedText.escaped("\(merged[key]!)")))" }
        let suffix = pairs.isEmpty ? "" : " " + pairs.joined(separator: " ")
        // Messages quote what clients sent (identifiers, app ids): no control character may reach the journal or
        // a terminal, and a newline must not start a line of its own (a forged entry).
        let message = UntrustedText.escaped("\(event.message)")
        let line: String
        if underJournald {
            line = "<\(Self.priority(event.level))>\(message)\(suffix)\n"
        } else {
            line = "\(Date().formatted(.iso8601)) \(event.level) \(label): \(message)\(suffix)\n"
        }
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// syslog priorities (sd-daemon.h: SD_ERR is 3, SD_INFO 6, …).
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: return 7
        case .info: return 6
        case .notice: return 5
        case .warning: return 4
        case .error: return 3
        case .critical: return 2
        }
    }

    static func quoted(_ value: String) -> String {
        value.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" }) ? "\"" + value.replacingOccurrences(of: "\"", with: "\\\"") + "\"" : value
    }
}
