/// A binary min-heap of region deadlines, earliest first; ties go to the region started first.
///
/// `RegionMonitorCore` keeps restored regions' deadlines here: they come from saved times, so unlike the deadlines it
/// sets itself they arrive in no particular order. It knows nothing of validity: an entry whose region was since
/// refreshed, replaced or stopped stays until it surfaces and is dropped (lazy invalidation).
struct DeadlineQueue: Sendable {
    struct Entry: Sendable {
        /// Microseconds since the Unix epoch.
        var deadline: Int64
        /// The region's start order: a deterministic tie-break that does not depend on when entries were pushed.
        var ordinal: UInt64
        /// The region's slot in `RegionMonitorCore`.
        var region: Int

        func precedes(_ other: Entry) -> Bool {
            deadline != other.deadline ? deadline < other.deadline : ordinal < other.ordinal
        }
    }

    private var entries: [Entry] = []

    init() {}

    var first: Entry? { entries.first }
    var count: Int { entries.count }

    mutating func push(_ entry: Entry) {
        entries.append(entry)
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].precedes(entries[parent]) else { return }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    @discardableResult
    mutating func popFirst() -> Entry? {
        guard !entries.isEmpty else { return nil }
        entries.swapAt(0, entries.count - 1)
        let first = entries.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            guard left < entries.count else { break }
            let right = left + 1
            let child = right < entries.count && entries[right].precedes(entries[left]) ? right : left
            guard entries[child].precedes(entries[parent]) else { break }
            entries.swapAt(child, parent)
            parent = child
        }
        return first
    }

    mutating func removeAll() { entries.removeAll() }
}
