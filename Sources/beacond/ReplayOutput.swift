import BeaconKit
import Foundation

/// Replay's standard output: lines formatted straight into one reusable byte buffer and written to the file
/// descriptor in large writes. Observations (nearly every line of a replay) are formatted byte by byte with no
/// allocation; their text is exactly what the String formatting gave before (tests compare byte for byte).
struct ReplayOutput {
    /// Written out once this full, so a write carries hundreds of lines.
    static let flushThreshold = 256 * 1024

    private(set) var buffer: [UInt8] = []
    private var flushedBytes = 0
    /// Everything written so far, flushed or not.
    var bytesWritten: Int { flushedBytes + buffer.count }
    private let descriptor: Int32
    /// "YYYY-MM-DDT" of the last day formatted: captures stay within a day for millions of lines.
    private var cachedDay: Int64 = .min
    private var cachedDayPrefix: [UInt8] = []
    /// The last proximity UUID formatted (captures repeat few), as its 36 characters.
    private var cachedUUID: UUID?
    private var cachedUUIDText: [UInt8] = []

    init(descriptor: Int32 = STDOUT_FILENO) {
        self.descriptor = descriptor
        buffer.reserveCapacity(Self.flushThreshold + 4096)
    }

    // MARK: Lines

    mutating func line(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        buffer.append(0x0A)
    }

    /// `{"time": …, "address": …, "uuid": …, "major": …, "minor": …, "txPower": …, "rssi": …}` for an iBeacon; other
    /// kinds add `"kind"` and name the beacon by their own keys (`ReplayIdentity`).
    mutating func observationJSON(_ observation: BeaconObservation, hasTime: Bool, deviceNames: [UUID: String] = [:]) {
        let identity = observation.identity
        guard identity.kind == .iBeacon else {
            let time = hasTime ? "\"\(observation.timestamp.iso8601)\"" : "null"
            line(
                "{\"time\": \(time), \"address\": \"\(observation.address)\", "
                    + ReplayIdentity.jsonFields(identity, deviceNames: deviceNames)
                    + ", \"txPower\": \(observation.frame.measuredPower), \"rssi\": \(observation.rssi.map(String.init) ?? "null")}")
            return
        }
        append(#"{"time": "#)
        if hasTime {
            buffer.append(0x22)
            appendTime(observation.timestamp)
            buffer.append(0x22)
        } else {
            append("null")
        }
        append(#", "address": ""#)
        appendAddress(observation.address)
        append(#"", "uuid": ""#)
        appendUUID(identity.uuid)
        append(#"", "major": "#)
        appendDecimal(Int(identity.major))
        append(#", "minor": "#)
        appendDecimal(Int(identity.minor))
        append(#", "txPower": "#)
        appendDecimal(Int(observation.frame.measuredPower))
        append(#", "rssi": "#)
        if let rssi = observation.rssi { appendDecimal(Int(rssi)) } else { append("null") }
        append("}\n")
    }

    /// The table row: time (28 wide), the kind ("iBeacon"), address (18 wide), UUID, then major, minor, tx and RSSI
    /// right-aligned. Other kinds print their text form (`ReplayIdentity`) in the UUID and number columns.
    mutating func observationTable(_ observation: BeaconObservation, hasTime: Bool, deviceNames: [UUID: String] = [:]) {
        let identity = observation.identity
        let start = buffer.count
        if hasTime { appendTime(observation.timestamp) } else { buffer.append(0x2D) }
        padTo(start + 28)
        guard identity.kind == .iBeacon else {
            let label = " \(identity.kind.name)"
            let text = ReplayIdentity.text(identity, deviceNames: deviceNames)
            let rssi = observation.rssi.map { String($0) } ?? "n/a"
            line(
                label + String(repeating: " ", count: max(1, 10 - label.count)) + "\(observation.address)  "
                    + text + String(repeating: " ", count: max(1, 50 - text.count))
                    + "\(observation.frame.measuredPower)  \(rssi)")
            return
        }
        append(" iBeacon  ")
        appendAddress(observation.address)
        append("  ") // the address is 17 wide, padded to 18, then the separator
        appendUUID(identity.uuid)
        buffer.append(0x20)
        appendRightAligned(Int(identity.major), width: 5)
        buffer.append(0x20)
        appendRightAligned(Int(identity.minor), width: 6)
        buffer.append(0x20)
        appendRightAligned(Int(observation.frame.measuredPower), width: 4)
        buffer.append(0x20)
        if let rssi = observation.rssi {
            appendRightAligned(Int(rssi), width: 5)
        } else {
            append("  n/a")
        }
        buffer.append(0x0A)
    }

    // MARK: Writing

    var isLarge: Bool { buffer.count >= Self.flushThreshold }

    mutating func flushIfLarge() {
        if isLarge { flush() }
    }

    /// Writes everything buffered (retrying short writes and EINTR). A reader that went away (`| head`) ends the
    /// process by SIGPIPE, as for any producer.
    mutating func flush() {
        var done = 0
        let count = buffer.count
        while done < count {
            let written = buffer.withUnsafeBytes { bytes in
                // Sound: `bytes` covers `count` initialised bytes and `done < count`.
                Foundation.write(descriptor, bytes.baseAddress! + done, count - done)
            }
            if written < 0 {
                if errno == EINTR { continue }
                FileHandle.standardError.write(Data("beacond replay: cannot write the output: \(String(cString: strerror(errno)))\n".utf8))
                exit(74)
            }
            done += written
        }
        flushedBytes += count
        buffer.removeAll(keepingCapacity: true)
    }

    // MARK: Pieces

    private mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { buffer.append(contentsOf: $0) }
    }

    private mutating func padTo(_ end: Int) {
        while buffer.count < end { buffer.append(0x20) }
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    private mutating func appendAddress(_ address: BluetoothAddress) {
        let raw = address.rawValue
        for shift in stride(from: 40, through: 0, by: -8) {
            let byte = Int((raw >> UInt64(shift)) & 0xFF)
            if shift != 40 { buffer.append(0x3A) }
            buffer.append(Self.hexDigits[byte >> 4])
            buffer.append(Self.hexDigits[byte & 0xF])
        }
    }

    private mutating func appendUUID(_ uuid: UUID) {
        if cachedUUID != uuid {
            cachedUUID = uuid
            cachedUUIDText = Array(uuid.uuidString.utf8)
        }
        buffer.append(contentsOf: cachedUUIDText)
    }

    private mutating func appendDecimal(_ value: Int) {
        if value < 0 {
            buffer.append(0x2D)
            appendDecimal(UInt(value.magnitude))
        } else {
            appendDecimal(UInt(value))
        }
    }

    private mutating func appendDecimal(_ value: UInt) {
        if value >= 10 { appendDecimal(value / 10) }
        buffer.append(0x30 + UInt8(value % 10))
    }

    private static func decimalWidth(_ value: Int) -> Int {
        var width = value < 0 ? 2 : 1
        var rest = value.magnitude
        while rest >= 10 {
            rest /= 10
            width += 1
        }
        return width
    }

    private mutating func appendRightAligned(_ value: Int, width: Int) {
        for _ in 0..<max(0, width - Self.decimalWidth(value)) { buffer.append(0x20) }
        appendDecimal(value)
    }

    private mutating func appendDigits(_ value: Int64, count: Int) {
        var divisor: Int64 = 1
        for _ in 1..<count { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            buffer.append(0x30 + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }

    /// `Timestamp.iso8601`'s text, with the date part cached per day.
    private mutating func appendTime(_ time: Timestamp) {
        let micros = time.microsecondsSinceEpoch
        var seconds = micros / 1_000_000
        var fraction = micros % 1_000_000
        if fraction < 0 {
            fraction += 1_000_000
            seconds -= 1
        }
        var day = seconds / 86_400
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 {
            secondOfDay += 86_400
            day -= 1
        }
        if day != cachedDay {
            let text = time.iso8601
            // Years outside 0…9999 do not have the fixed width the fast path assumes: the slow path, uncached.
            guard text.utf8.count == 27 else {
                buffer.append(contentsOf: text.utf8)
                return
            }
            cachedDay = day
            cachedDayPrefix = Array(text.utf8.prefix(11))
        }
        buffer.append(contentsOf: cachedDayPrefix)
        appendDigits(secondOfDay / 3600, count: 2)
        buffer.append(0x3A)
        appendDigits(secondOfDay / 60 % 60, count: 2)
        buffer.append(0x3A)
        appendDigits(secondOfDay % 60, count: 2)
        buffer.append(0x2E)
        appendDigits(fraction, count: 6)
        buffer.append(0x5A)
    }
}
