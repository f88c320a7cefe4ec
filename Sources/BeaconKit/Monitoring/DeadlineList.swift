/// Pending region deadlines in the order they were set, as a doubly linked list over an array of nodes.
///
/// Every deadline `RegionMonitorCore` sets while running is the monitor's clock + `exitTimeout`, and the clock never
/// goes back, so the order deadlines are set in is deadline order: the front is always the earliest, and a
/// refresh (a sighting postponing an exit) is an O(1) move to the back. Equal deadlines sit together at the front.
struct DeadlineList: Sendable {
    struct Node: Sendable {
        /// The region's slot in `RegionMonitorCore`.
        var region: Int
        var ordinal: UInt64
        /// Microseconds since the Unix epoch.
        var deadline: Int64
        fileprivate var previous: Int
        fileprivate var next: Int
    }

    private var nodes: [Node] = []
    private var freeSlots: [Int] = []
    private var head = -1
    private var tail = -1
    private(set) var count = 0

    init() {}

    /// The earliest deadline's slot and node.
    var front: (slot: Int, node: Node)? { head < 0 ? nil : (head, nodes[head]) }
    /// The latest deadline, which a new one must not precede.
    var backDeadline: Int64? { tail < 0 ? nil : nodes[tail].deadline }

    /// Adds a deadline at the back; returns its slot.
    mutating func append(region: Int, ordinal: UInt64, deadline: Int64) -> Int {
        let node = Node(region: region, ordinal: ordinal, deadline: deadline, previous: tail, next: -1)
        let slot: Int
        if let reused = freeSlots.popLast() {
            slot = reused
            nodes[slot] = node
        } else {
            slot = nodes.count
            nodes.append(node)
        }
        link(slot)
        count += 1
        return slot
    }

    /// Gives the deadline in `slot` a new, later time and moves it to the back.
    mutating func moveToBack(_ slot: Int, deadline: Int64) {
        nodes[slot].deadline = deadline
        guard slot != tail else { return }
        unlink(slot)
        nodes[slot].previous = tail
        nodes[slot].next = -1
        link(slot)
    }

    mutating func remove(_ slot: Int) {
        unlink(slot)
        freeSlots.append(slot)
        count -= 1
    }

    mutating func removeAll() {
        nodes.removeAll()
        freeSlots.removeAll()
        head = -1
        tail = -1
        count = 0
    }

    /// Links `slot`, whose `previous` is the current tail, at the back.
    private mutating func link(_ slot: Int) {
        if tail >= 0 { nodes[tail].next = slot } else { head = slot }
        tail = slot
    }

    private mutating func unlink(_ slot: Int) {
        let previous = nodes[slot].previous
        let next = nodes[slot].next
        if previous >= 0 { nodes[previous].next = next } else { head = next }
        if next >= 0 { nodes[next].previous = previous } else { tail = previous }
    }
}
