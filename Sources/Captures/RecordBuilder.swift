import BeaconKit

/// Collects records and framing problems while a reader walks a file.
struct RecordBuilder {
    /// How many problem descriptions a capture keeps: enough to diagnose a file, bounded so a
    /// corrupt multi-gigabyte capture does not grow a list as long as itself.
    static let detailLimit = 10

    var records: [CaptureRecord] = []
    var malformed = 0
    var details: [String] = []

    /// Adds a record, or counts it malformed when the encoding rejected it. `label` names it in
    /// diagnostics ("record 12", "line 7").
    mutating func append(number: Int, timestamp: Timestamp?, _ classified: PacketEncoding.Classified, label: @autoclosure () -> String) {
        switch classified {
        case .packet(let packet, let payload):
            records.append(CaptureRecord(number: number, timestamp: timestamp, packet: packet, payload: payload))
        case .malformed(let why):
            reject(label(), why)
        }
    }

    mutating func reject(_ label: String, _ why: String) {
        malformed += 1
        if details.count < Self.detailLimit { details.append("\(label): \(why)") }
    }
}
