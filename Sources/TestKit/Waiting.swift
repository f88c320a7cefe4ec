import Foundation
public import MainLoopKit
import Synchronization

/// A shareable lock-protected value for tests whose effects happen on another thread (`Mutex` itself cannot
/// be captured: it is not copyable).
public final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    public init(_ value: Value) { mutex = Mutex(value) }
    public func withLock<Result>(_ body: (inout Value) -> Result) -> Result { mutex.withLock { body(&$0) } }
}

/// Waits (up to `timeout`) until `condition` holds, suspending between looks: for async tests, whose effects happen on
/// another thread (a main loop's, a daemon's). The task sleeps; no thread of the cooperative pool is blocked, so the
/// work being waited for is never starved of one. `timeout` is a bound for giving up, never what makes a test pass:
/// it returns as soon as the condition holds (generous, for loaded CI machines). Something that must *not* happen is
/// shown by a later marker event arriving first, not by waiting here for a while.
public nonisolated(nonsending) func eventually(
    timeout: Duration = .seconds(15), _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        // Cancelled (the test is being torn down): one last look, then give up.
        do { try await Task.sleep(for: .milliseconds(2)) } catch { break }
    }
    return try await condition()
}

/// The same for synchronous callers (a synchronous test, `MainLoop.onThread`): blocks the calling thread between
/// looks. Disfavoured, so that in an async context the suspending one above is chosen (and `await` is required).
@_disfavoredOverload
public func eventually(timeout: Duration = .seconds(15), _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        usleep(2000)
    }
    return condition()
}

extension MainLoop {
    /// Runs `body` on the loop's thread and waits (up to `timeout`) for what it returns or throws: for a test whose
    /// objects live on a running loop and may be touched only there.
    public func onThread<T: Sendable>(timeout: Duration = .seconds(15), _ body: @escaping @Sendable () throws -> T) throws -> T {
        let result = Locked<Result<T, any Error>?>(nil)
        execute {
            let outcome = Result { try body() }
            result.withLock { $0 = outcome }
        }
        guard eventually(timeout: timeout, { result.withLock { $0 } != nil }) else { throw LoopDidNotRun(timeout: timeout) }
        return try result.withLock { $0 }!.get()
    }
}

/// The loop did not run a body in time (stopped, or stuck in something else).
public struct LoopDidNotRun: Error, CustomStringConvertible {
    public let timeout: Duration
    public var description: String { "the main loop did not run the body within \(timeout)" }
}
