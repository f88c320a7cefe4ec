package import BeaconKit
import Fleet

/// A region's hearings between the monitor's `ReceiverRecord` (receivers by number, this process's) and the saved row
/// (receivers by room).
extension StoredHearing {
    /// A region's hearings by room, for its row (nil when only this node's scanner heard it, or nobody). Hearings
    /// more than `exitTimeout` older than the latest can decide nothing (the monitor looks back that far from a
    /// region's last sighting) and are left out, so a row stays small however many receivers ever heard it; the
    /// rooms a blind region waits for are always kept.
    package static func of(_ record: ReceiverRecord?, rooms: [ReceiverID: String], exitTimeout: Duration) -> StoredHearing? {
        guard let record else { return nil }
        let latest = max(record.local ?? .min, record.remote.values.max() ?? .min)
        let window =
            Int64(clamping: exitTimeout.components.seconds) &* 1_000_000
            &+ Int64(clamping: exitTimeout.components.attoseconds / 1_000_000_000_000)
        let since = latest.subtractingReportingOverflow(window).partialValue
        var remote: [String: Int64] = [:]
        for (id, time) in record.remote where time >= since || record.waitingFor?.contains(id) == true {
            if let room = rooms[id] { remote[room] = time }
        }
        let waiting = record.waitingFor.map { $0.compactMap { rooms[$0] }.sorted() }
        guard !remote.isEmpty || waiting?.isEmpty == false else { return nil }
        return StoredHearing(local: record.local, remote: remote, waitingFor: waiting)
    }

    /// A saved hearing for the monitor: each room gets the number it already has, else the next free one. Rooms
    /// not in ESPresense's form (a hand edit) are left out.
    package static func receiverRecord(_ hearing: StoredHearing, numbering: inout [String: ReceiverID]) -> ReceiverRecord {
        func id(_ room: String) -> ReceiverID? {
            guard ReceiverDirectory.isRoom(room) else { return nil }
            if let known = numbering[room] { return known }
            let next = ReceiverID(rawValue: UInt32(numbering.count + 1))
            numbering[room] = next
            return next
        }
        var remote: [ReceiverID: Int64] = [:]
        for (room, time) in hearing.remote.sorted(by: { $0.key < $1.key }) { if let id = id(room) { remote[id] = time } }
        let waiting = hearing.waitingFor.map { Set($0.compactMap(id)) }
        return ReceiverRecord(local: hearing.local, remote: remote, waitingFor: waiting)
    }
}
