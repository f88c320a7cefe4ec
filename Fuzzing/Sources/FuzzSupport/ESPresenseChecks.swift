import BeaconKit
import Fleet
import Foundation

/// Checks on what arrives from other receivers: never a trap, and answers that agree with the JSON grammar and
/// with ESPresense's own id form.
public enum ESPresenseChecks {
    public static func check(message span: Span<UInt8>) {
        let bytes = span.array
        let ours = Result { () throws(ESPresenseReading.Invalid) in try ESPresenseReading(json: bytes) }
        // The JSON grammar: whatever Foundation refuses, ours refuses; an object Foundation reads, ours reads too
        // (then to the same id and distance, when it takes the reading).
        // A NUL byte is never valid JSON (a control character in a string, and nothing else may hold it), but
        // Foundation on Linux reads its input as a C string and stops at one, so it is no referee there.
        if bytes.contains(0) {
            require(ours == .failure(.notJSON), "a NUL byte in JSON, ours said \(ours)")
            return
        }
        let foundation = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
        switch (foundation, ours) {
        case (nil, .success(let reading)):
            failCheck("Foundation refuses the JSON, ours read \(reading)")
        case (nil, .failure(let error)):
            require(error == .notJSON, "Foundation refuses the JSON, ours said \(error)")
        case (let object?, .success(let reading)):
            let dictionary = object as? [String: Any]
            require(dictionary?["id"] as? String == reading.id, "id \(reading.id) differs from Foundation's")
            // Foundation's number reading is not always correctly rounded past 15 digits (Swift's Double(String),
            // which ours uses there, is): equal to a relative 1e-12.
            let theirs = (dictionary?["distance"] as? NSNumber)?.doubleValue ?? .nan
            let distance = reading.distance ?? .nan
            require(abs(theirs - distance) <= 1e-12 * max(1, abs(distance)), "distance \(distance) differs from Foundation's \(theirs)")
            // What beacond writes reads back as itself, up to its two decimals.
            let again = try? ESPresenseReading(json: Array(reading.json.utf8))
            require(again?.id == reading.id, "the written reading does not read back: \(reading.json)")
        case (let object?, .failure(let error)):
            // Foundation on Linux also takes a trailing comma ("[2,]"), which RFC 8259 does not: ours refuses it.
            guard !hasTrailingComma(bytes) else { return }
            if !(object is [String: Any]) { require(error == .notAnObject, "not an object, but ours said \(error)") }
            require(error != .notJSON, "Foundation reads the JSON, ours said it is not JSON")
        }
        // Device ids: one that parses is exactly ESPresense's form of its beacon (in any case).
        let text = String(decoding: bytes, as: UTF8.self)
        if let identity = ESPresense.identity(fromDeviceID: text) {
            if identity.kind == .iBeacon {
                require(
                    ESPresense.deviceID(identity) == text.lowercased().replacingOccurrences(of: "ibeacon:", with: "iBeacon:"),
                    "\(text) parsed to \(identity), which ESPresense writes \(ESPresense.deviceID(identity))")
            }
            // Every kind: the id ESPresense writes for the beacon names it again (an irk: id with its own key).
            let key = identity.kind == .privateDevice ? try? IdentityResolvingKey(parsing: text) : nil
            let written = ESPresense.deviceID(identity, key: key)
            require(
                ESPresense.identity(fromDeviceID: written) == identity,
                "\(text) parsed to \(identity), written \(written), which does not parse back to it")
        }
        switch ESPresense.topic(text) {
        case .device(let id, let room):
            require(text == "espresense/devices/\(id)/\(room)", "topic \(text) read as device \(id) in \(room)")
        case .roomStatus(let room):
            require(text == "espresense/rooms/\(room)/status", "topic \(text) read as the status of \(room)")
        case .other:
            break
        }
    }

    /// A `,` followed (after whitespace) by `]` or `}`.
    static func hasTrailingComma(_ bytes: [UInt8]) -> Bool {
        var afterComma = false
        for byte in bytes {
            switch byte {
            case UInt8(ascii: ","): afterComma = true
            case 0x20, 0x09, 0x0A, 0x0D: continue
            case UInt8(ascii: "]"), UInt8(ascii: "}"): if afterComma { return true }
            default: afterComma = false
            }
        }
        return false
    }
}
