import BeaconKit

/// What one pass over the events produced. Every decoded field is folded into `checksum`, so the
/// optimizer has to compute all of them, as the daemon does, and cannot drop any work.
struct DecodeTally: Equatable, Codable {
    var events = 0
    var advertisingEvents = 0
    var reports = 0
    var iBeacons = 0
    var malformed = 0
    var checksum: UInt64 = 0

    static func + (lhs: DecodeTally, rhs: DecodeTally) -> DecodeTally {
        DecodeTally(
            events: lhs.events + rhs.events,
            advertisingEvents: lhs.advertisingEvents + rhs.advertisingEvents,
            reports: lhs.reports + rhs.reports, iBeacons: lhs.iBeacons + rhs.iBeacons,
            malformed: lhs.malformed + rhs.malformed, checksum: lhs.checksum &+ rhs.checksum)
    }

    static func * (lhs: DecodeTally, times: Int) -> DecodeTally {
        DecodeTally(
            events: lhs.events * times, advertisingEvents: lhs.advertisingEvents * times,
            reports: lhs.reports * times, iBeacons: lhs.iBeacons * times,
            malformed: lhs.malformed * times, checksum: lhs.checksum &* UInt64(times))
    }

    mutating func count(_ outcome: DecodeOutcome) {
        events += 1
        switch outcome {
        case .advertising(_, let bad):
            advertisingEvents += 1
            malformed += bad
        case .notAdvertising:
            break
        case .malformed:
            malformed += 1
        }
    }

    mutating func fold(_ report: AdvertisingReport) {
        reports += 1
        checksum &+=
            report.address.rawValue &+ UInt64(truncatingIfNeeded: report.rssi ?? 0)
            &+ UInt64(report.eventType) &+ UInt64(report.addressType) &+ UInt64(report.dataRange.count)
            &+ (report.dataComplete ? 1 : 0)
        if let frame = report.beacon { fold(frame) }
    }

    mutating func fold(_ frame: BeaconFrame) {
        iBeacons += 1
        let uuid = frame.identity.uuid.uuid
        checksum &+=
            UInt64(uuid.0) &+ UInt64(uuid.7) &+ UInt64(uuid.15)
            &+ UInt64(frame.identity.major) << 8 &+ UInt64(frame.identity.minor) << 24
            &+ UInt64(truncatingIfNeeded: frame.measuredPower)
    }
}

/// The timed loops. `@inline(never)` keeps each one a separate function, so what is timed is
/// exactly one pass and nothing is hoisted across rounds.
enum DecodeLoops {
    /// `HCIEventDecoder.decode(event:)` over every event of the buffer, `passes` times.
    @inline(never)
    static func decodeAll(_ buffer: EventBuffer, passes: Int = 1) -> DecodeTally {
        let bytes = buffer.bytes.span
        let offsets = buffer.offsets.span
        var tally = DecodeTally()
        for _ in 0..<passes {
            for index in 0..<(offsets.count - 1) {
                let start = offsets[index]
                let event = bytes.extracting(start..<offsets[index + 1])
                tally.count(HCIEventDecoder.decode(event: event, offset: start) { tally.fold($0) })
            }
        }
        return tally
    }

    /// `BeaconFrameParser.beacon(advertisingData:)` alone (every kind, as the decoder runs it), on AD bytes already
    /// located, `passes` times.
    @inline(never)
    static func parseAll(_ bytes: [UInt8], advertisingData ranges: [Range<Int>], passes: Int = 1) -> DecodeTally {
        let span = bytes.span
        var tally = DecodeTally()
        for _ in 0..<passes {
            for range in ranges {
                tally.reports += 1
                if let frame = BeaconFrameParser.beacon(advertisingData: span.extracting(range)) { tally.fold(frame) }
            }
        }
        return tally
    }

    /// `IBeaconParser.parse(advertisingData:)`, the iBeacon-only parser the decoder ran before other kinds, for the
    /// comparison in `beacond-bench kinds`.
    @inline(never)
    static func parseIBeaconsOnly(_ bytes: [UInt8], advertisingData ranges: [Range<Int>], passes: Int = 1) -> DecodeTally {
        let span = bytes.span
        var tally = DecodeTally()
        for _ in 0..<passes {
            for range in ranges {
                tally.reports += 1
                if let frame = IBeaconParser.parse(advertisingData: span.extracting(range)) { tally.fold(frame) }
            }
        }
        return tally
    }

    /// Where the complete reports' AD bytes sit in `buffer.bytes` (extended reports whose data is
    /// incomplete are not parsed by the decoder either).
    static func advertisingDataRanges(_ buffer: EventBuffer) -> [Range<Int>] {
        let bytes = buffer.bytes.span
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(buffer.count)
        for index in 0..<buffer.count {
            let start = buffer.offsets[index]
            _ = HCIEventDecoder.decode(event: bytes.extracting(start..<buffer.offsets[index + 1]), offset: start) {
                if $0.dataComplete { ranges.append($0.dataRange) }
            }
        }
        return ranges
    }
}
