import TestKit

/// `count` events in one contiguous buffer, as a capture or a socket read loop would hold them:
/// the corpus repeated, each copy in its own deterministic shuffled order so the branch predictor
/// cannot learn a fixed sequence. Event `i` is `bytes[offsets[i]..<offsets[i + 1]]`.
struct EventBuffer {
    var bytes: [UInt8] = []
    var offsets: [Int] = [0]
    /// How many times each corpus event occurs, to compute the expected totals independently.
    var occurrences: [Int]

    var count: Int { offsets.count - 1 }

    init(repeating events: [[UInt8]], count: Int, seed: UInt64 = 0x5EED_BEAC_0D) {
        occurrences = Array(repeating: 0, count: events.count)
        let averageLength = events.reduce(0) { $0 + $1.count } / max(events.count, 1)
        bytes.reserveCapacity(count * averageLength + 4096)
        offsets.reserveCapacity(count + 1)
        var generator = SplitMix64(state: seed)
        while self.count < count {
            for index in events.indices.shuffled(using: &generator) where self.count < count {
                bytes.append(contentsOf: events[index])
                offsets.append(bytes.count)
                occurrences[index] += 1
            }
        }
    }
}
