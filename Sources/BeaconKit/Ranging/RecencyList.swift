/// Elements ordered from least to most recently touched, with O(1) touch, removal and
/// least-recent lookup: a doubly linked list whose links live in a dictionary (no references, so
/// it stays a value type and `Sendable`). The ranger uses it to find the stalest beacon when full.
struct RecencyList<Element: Hashable & Sendable>: Sendable {
    private struct Links: Sendable {
        var older: Element?
        var newer: Element?
    }

    private var links: [Element: Links] = [:]
    /// The least recently touched element.
    private(set) var oldest: Element?
    private var newest: Element?

    var count: Int { links.count }

    /// Makes `element` the most recent, adding it if absent.
    mutating func touch(_ element: Element) {
        if newest == element { return }
        if links[element] != nil { unlink(element) }
        links[element] = Links(older: newest, newer: nil)
        if let newest { links[newest]?.newer = element } else { oldest = element }
        newest = element
    }

    mutating func remove(_ element: Element) {
        guard links[element] != nil else { return }
        unlink(element)
    }

    mutating func removeAll() {
        links.removeAll()
        oldest = nil
        newest = nil
    }

    /// Elements from least to most recent (for tests and diagnostics; O(n)).
    var elements: [Element] {
        var result: [Element] = []
        result.reserveCapacity(links.count)
        var cursor = oldest
        while let element = cursor {
            result.append(element)
            cursor = links[element]?.newer
        }
        return result
    }

    private mutating func unlink(_ element: Element) {
        guard let removed = links.removeValue(forKey: element) else { return }
        if let older = removed.older { links[older]?.newer = removed.newer } else { oldest = removed.newer }
        if let newer = removed.newer { links[newer]?.older = removed.older } else { newest = removed.older }
    }
}
