import Foundation

/// What the fake daemon was asked, in order; tests wait on it instead of sleeping.
final class CallLog: @unchecked Sendable {
    private let condition = NSCondition()
    private var entries: [String] = []

    func append(_ entry: String) {
        condition.lock()
        entries.append(entry)
        condition.broadcast()
        condition.unlock()
    }

    var all: [String] {
        condition.lock()
        defer { condition.unlock() }
        return entries
    }

    /// Waits until an entry equal to `entry` is logged. The bound only keeps a broken CLI from hanging the
    /// suite (the test then fails on the false); no test depends on how long this takes.
    func wait(for entry: String) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(60)
        while !entries.contains(entry) {
            if !condition.wait(until: deadline) { return entries.contains(entry) }
        }
        return true
    }
}
