import Foundation
import Synchronization

/// A shareable lock-protected value for tests whose effects happen on another thread (`Mutex` itself cannot
/// be captured: it is not copyable).
public final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    public init(_ value: Value) { mutex = Mutex(value) }
    public func withLock<Result>(_ body: (inout Value) -> Result) -> Result { mutex.withLock { body(&$0) } }
}

/// Waits (up to `timeout`) until `condition` holds; for effects that happen on a main loop's thread. A bound,
/// not a timing assertion: it returns as soon as the condition holds (generous, for loaded CI machines).
public func eventually(timeout: Duration = .seconds(15), _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        usleep(2000)
    }
    return condition()
}
