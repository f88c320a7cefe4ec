/// One advertising report from a controller (legacy or extended), or one advertising PDU
/// captured over the air: who sent it, how strong, and what beacon frame (if any) it carried.
///
/// The advertising data itself stays in the caller's buffer; `dataRange` locates it there, so
/// decoding allocates nothing.
public struct AdvertisingReport: Hashable, Sendable {
    public enum Source: Sendable, Hashable {
        /// HCI LE Advertising Report (LE Meta subevent 0x02).
        case legacy
        /// HCI LE Extended Advertising Report (LE Meta subevent 0x0D).
        case extended
        /// An advertising-channel PDU captured over the air (no controller involved).
        case linkLayer
    }

    public var source: Source
    /// Legacy: ADV_IND 0, ADV_DIRECT_IND 1, ADV_SCAN_IND 2, ADV_NONCONN_IND 3, SCAN_RSP 4.
    /// Extended: the event-type bit field with reserved bits (7–15) cleared.
    public var eventType: UInt16
    public var addressType: UInt8
    public var address: BluetoothAddress
    /// dBm; `nil` for 127, which HCI uses for "not available".
    public var rssi: Int8?
    /// Where the advertising data sits in the buffer that was decoded.
    public var dataRange: Range<Int>
    /// False for extended reports whose data status is "incomplete" or "truncated": their data
    /// is not parsed because a partial AD structure could read as a wrong frame.
    public var dataComplete: Bool
    /// The beacon frame of any kind its data carried (`BeaconFrameParser.beacon`). What else beacond may read from
    /// the data (Eddystone telemetry, a phone's TX power) is parsed only for reports without one
    /// (`BeaconFrameParser.parse`, in the pipeline): it costs every report otherwise (docs/performance.md).
    public var beacon: BeaconFrame?

    public init(
        source: Source, eventType: UInt16, addressType: UInt8, address: BluetoothAddress,
        rssi: Int8?, dataRange: Range<Int>, dataComplete: Bool, beacon: BeaconFrame?
    ) {
        self.source = source
        self.eventType = eventType
        self.addressType = addressType
        self.address = address
        self.rssi = rssi
        self.dataRange = dataRange
        self.dataComplete = dataComplete
        self.beacon = beacon
    }

    /// True when the report answers a scan request (legacy SCAN_RSP, extended bit 3, LL SCAN_RSP).
    public var isScanResponse: Bool {
        switch source {
        case .legacy, .linkLayer: return eventType == 4
        case .extended: return eventType & 0x0008 != 0
        }
    }

    /// HCI's encoding of "RSSI not available".
    public static let rssiNotAvailable: Int8 = 127

    @inlinable
    static func rssi(fromHCI byte: UInt8) -> Int8? {
        let value = Int8(bitPattern: byte)
        return value == rssiNotAvailable ? nil : value
    }
}

/// What decoding one packet produced, so callers can count without keeping the reports.
public enum DecodeOutcome: Hashable, Sendable {
    /// An advertising event: `reports` decoded; `malformed` counts reports that overran the event
    /// (decoding stops at the first such one, since later offsets are then meaningless).
    case advertising(reports: Int, malformedReports: Int)
    /// A well-formed packet that is not an advertising report (command complete, ACL, …).
    case notAdvertising
    /// The packet itself is malformed (too short, length fields that disagree with the bytes).
    case malformed(DecodeFailure)
}

/// Why a packet could not be decoded. Kept as an enum (not strings) so counting is free.
public enum DecodeFailure: String, Hashable, Sendable, CaseIterable {
    case emptyPacket = "empty packet"
    case unknownPacketType = "unknown H4 packet type"
    case truncatedHeader = "event shorter than its header"
    case parameterLengthOverrun = "event parameter length larger than the packet"
    case noReports = "advertising event without reports"
    case reportOverrun = "advertising report longer than its event"
    case truncatedPDU = "link-layer PDU shorter than its header or length"
}

/// Running totals for statistics (`beacond replay --stats`, the daemon's status).
public struct DecodeCounters: Hashable, Sendable {
    public var events = 0
    public var advertisingEvents = 0
    public var reports = 0
    /// iBeacon frames.
    public var iBeacons = 0
    /// Beacon frames of every kind (iBeacon, AltBeacon, Eddystone-UID) and sightings of private devices.
    public var beacons = 0
    public var malformed = 0
    /// Malformed packets by reason, for diagnostics.
    public var malformedByReason: [DecodeFailure: Int] = [:]

    public init() {}

    public mutating func add(_ outcome: DecodeOutcome) {
        events += 1
        switch outcome {
        case .advertising(let count, let bad):
            advertisingEvents += 1
            reports += count
            if bad > 0 { malformed += bad; malformedByReason[.reportOverrun, default: 0] += bad }
        case .notAdvertising:
            break
        case .malformed(let reason):
            malformed += 1
            malformedByReason[reason, default: 0] += 1
        }
    }
}
