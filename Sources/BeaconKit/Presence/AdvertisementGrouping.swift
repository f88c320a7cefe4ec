/// Which readings of one beacon are one advertisement heard by several receivers, and which are the next advertisement.
///
/// Readings carry no sequence number: an iBeacon repeats the same frame, and a remote receiver's reading reaches the
/// daemon 5–60 ms after the advertisement (ESPresense nodes over Wi-Fi; measured in the presence suite), in any order,
/// stamped with the daemon's clock. So one advertisement's readings arrive spread over up to ~55 ms, and a fixed
/// 20 ms window (BLE's shortest interval) split them into several "advertisements" 40 ms apart: a beacon then seemed
/// to advertise every 40 ms and to miss most of it, and its learned exit came 2.5× late.
///
/// Two rules, from what a reading does carry (its receiver) and the receivers' timing:
/// - A receiver hears one advertisement at most once: a second reading from a receiver already counted is the next
///   advertisement, however soon (a 20 ms beacon heard by this node's own adapter, which has no delivery latency).
/// - A reading from another receiver within `window` of the advertisement's first reading is the same advertisement.
///   The window covers the measured latency spread with room to spare; a beacon faster than it, heard by different
///   receivers on consecutive advertisements, is counted as advertising a little slower, which only lengthens its
///   learned exit (never a false one).
///
/// Pure and O(1) per reading for receivers numbered below 256 (a bit each; a fleet's directory numbers them from 1),
/// O(receivers of one advertisement) above; allocation-free once grown. A beacon heard by 100 receivers is asked
/// "did this receiver report it already?" on every reading, so a list scan here cost the fleet intake a tenth.
public struct AdvertisementGrouping: Hashable, Sendable {
    /// How far apart (µs) the readings of one advertisement may arrive from different receivers.
    public static let window: Int64 = 100_000

    /// When the current advertisement's first reading arrived, µs; nil before any.
    public private(set) var start: Int64?
    /// Advertisements counted so far (the current one included).
    public private(set) var count: UInt64 = 0
    /// The receivers below 256 that reported the current advertisement, a bit each.
    private var reported = ReceiverBits()
    /// Those from 256 up.
    private var others: [ReceiverID] = []

    public init() {}

    /// Counts a reading by `receiver` arriving at `time`, µs. Returns the gap from the previous advertisement's first
    /// reading when this reading is a new advertisement (nil for the first one), or `nil` with `isNew` false when it
    /// is another receiver's reading of the current one.
    public mutating func record(_ receiver: ReceiverID, at time: Int64) -> (isNew: Bool, gap: Int64?) {
        if let start, time - start < Self.window, !heardCurrent(receiver) {
            insert(receiver)
            return (false, nil)
        }
        let gap = start.map { time - $0 }
        // Time never runs backwards here (the caller's clock is monotonic); a stale stamp starts no negative gap.
        start = max(start ?? time, time)
        count += 1
        reported = ReceiverBits()
        if !others.isEmpty { others.removeAll(keepingCapacity: true) }
        insert(receiver)
        return (true, gap.map { max(0, $0) })
    }

    /// Whether `receiver` already reported the current advertisement.
    public func heardCurrent(_ receiver: ReceiverID) -> Bool {
        receiver.rawValue < ReceiverBits.count ? reported.contains(receiver.rawValue) : others.contains(receiver)
    }

    private mutating func insert(_ receiver: ReceiverID) {
        if receiver.rawValue < ReceiverBits.count { reported.insert(receiver.rawValue) } else { others.append(receiver) }
    }
}

/// A set of receiver numbers below 256, inline: four words, nothing allocated.
struct ReceiverBits: Hashable, Sendable {
    static let count: UInt32 = 256
    private var w0: UInt64 = 0, w1: UInt64 = 0, w2: UInt64 = 0, w3: UInt64 = 0

    func contains(_ number: UInt32) -> Bool {
        let bit = UInt64(1) << UInt64(number & 63)
        switch number >> 6 {
        case 0: return w0 & bit != 0
        case 1: return w1 & bit != 0
        case 2: return w2 & bit != 0
        default: return w3 & bit != 0
        }
    }

    mutating func insert(_ number: UInt32) {
        let bit = UInt64(1) << UInt64(number & 63)
        switch number >> 6 {
        case 0: w0 |= bit
        case 1: w1 |= bit
        case 2: w2 |= bit
        default: w3 |= bit
        }
    }
}
