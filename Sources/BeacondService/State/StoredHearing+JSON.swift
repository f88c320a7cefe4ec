import BeacondCore
import Foundation

/// The `monitored_region.heard_by` column's text.
extension StoredHearing {
    var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// nil for text that is not what `json` writes (a hand edit): the region resumes without it.
    init?(json: String) {
        guard let decoded = try? JSONDecoder().decode(Self.self, from: Data(json.utf8)) else { return nil }
        self = decoded
    }
}
