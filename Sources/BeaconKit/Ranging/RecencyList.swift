/// Slots (small non-negative integers) ordered from least to most recently touched, with O(1)
/// touch, removal and least-recent lookup: a doubly linked list kept in arrays indexed by slot, so
/// a touch on every sighting costs no hashing. The ranger uses it to find the stalest beacon when
/// its table is full.
struct RecencyList: Sendable {
    private static let none = -1
    private var older: [Int] = []
    private var newer: [Int] = []
    private var linked: [Bool] = []
    private var oldestSlot = RecencyList.none
    private var newestSlot = RecencyList.none
    private(set) var count = 0

    /// The least recently touched slot.
    var oldest: Int? { oldestSlot == Self.none ? nil : oldestSlot }

    /// Makes `slot` the most recent, adding it if absent. `slot` must be ≥ 0.
    mutating func touch(_ slot: Int) {
        guard slot >= 0 else { return }
        if slot >= linked.count {
            let grow = slot + 1 - linked.count
            older.append(contentsOf: repeatElement(Self.none, count: grow))
            newer.append(contentsOf: repeatElement(Self.none, count: grow))
            linked.append(contentsOf: repeatElement(false, count: grow))
        }
        if newestSlot == slot { return }
        if linked[slot] { unlink(slot) }
        linked[slot] = true
        count += 1
        older[slot] = newestSlot
        newer[slot] = Self.none
        if newestSlot != Self.none { newer[newestSlot] = slot } else { oldestSlot = slot }
        newestSlot = slot
    }

    mutating func remove(_ slot: Int) {
        guard slot >= 0, slot < linked.count, linked[slot] else { return }
        unlink(slot)
    }

    mutating func removeAll() {
        older.removeAll()
        newer.removeAll()
        linked.removeAll()
        oldestSlot = Self.none
        newestSlot = Self.none
        count = 0
    }

    /// Slots from least to most recent (for tests and diagnostics; O(n)).
    var elements: [Int] {
        var result: [Int] = []
        result.reserveCapacity(count)
        var cursor = oldestSlot
        while cursor != Self.none {
            result.append(cursor)
            cursor = newer[cursor]
        }
        return result
    }

    private mutating func unlink(_ slot: Int) {
        let (before, after) = (older[slot], newer[slot])
        if before != Self.none { newer[before] = after } else { oldestSlot = after }
        if after != Self.none { older[after] = before } else { newestSlot = before }
        linked[slot] = false
        count -= 1
    }
}
