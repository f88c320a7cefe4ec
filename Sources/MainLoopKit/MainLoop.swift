#if canImport(Glibc)
    import Glibc
#endif
import Synchronization

/// The daemon's one event loop: a thread blocked in `poll(2)` on file descriptors (libdbus watches, the
/// scanner's FIFO or HCI socket) and a wake-up pipe, with timers as the poll timeout. Nothing polls
/// busily: an idle daemon sleeps in `poll` until a descriptor is ready, a timer is due or work is queued.
///
/// It is also a Swift `SerialExecutor`, so an actor can run on it (`unownedExecutor`): code called back by
/// the loop (a D-Bus method, a FIFO line) enters the actor synchronously with `assumeIsolated`, and async
/// code elsewhere (signal handlers, shutdown) reaches it with an ordinary `await`.
///
/// Only `execute`, `enqueue`, `stop` and `isCurrent` may be used from other threads; the rest is for the
/// loop thread (checked, because a wrong thread here would be a data race, not a recoverable error).
public final class MainLoop: SerialExecutor, @unchecked Sendable {
    /// Identifies a registered descriptor or timer so it can be removed.
    public struct SourceID: Hashable, Sendable { let value: Int }

    /// What the loop watches on a descriptor (a subset of `poll`'s events).
    public struct Events: OptionSet, Hashable, Sendable {
        public let rawValue: Int16
        public init(rawValue: Int16) { self.rawValue = rawValue }
        public static let readable = Events(rawValue: Int16(POLLIN))
        public static let writable = Events(rawValue: Int16(POLLOUT))
        /// Reported only: hang-up or error on the descriptor.
        public static let hangUp = Events(rawValue: Int16(POLLHUP))
        public static let error = Events(rawValue: Int16(POLLERR))
        /// Reported only: the descriptor is not open (POLLNVAL); the loop disables the source.
        public static let invalid = Events(rawValue: Int16(POLLNVAL))
    }

    private struct DescriptorSource {
        var fd: Int32
        var events: Events
        var enabled: Bool
        var handler: (Events) -> Void
    }

    private struct Timer {
        var deadline: ContinuousClock.Instant
        var handler: () -> Void
    }

    // Shared between threads (under the mutex or atomic).
    private let pending = Mutex<(jobs: [UnownedJob], closures: [@Sendable () -> Void])>(([], []))
    private let loopThread = Atomic<UInt>(0)
    private let stopRequested = Atomic<Bool>(false)
    /// A self-pipe: other threads write a byte, the loop's `poll` wakes. (`eventfd` would do too, but Glibc's
    /// Swift module does not export it, and a pipe needs no C shim.)
    private let wakeDescriptor: Int32
    private let wakeWriteDescriptor: Int32

    // Loop thread only.
    private var descriptors: [SourceID: DescriptorSource] = [:]
    private var timers: [SourceID: Timer] = [:]
    private var beforePollHooks: [() -> Void] = []
    private var nextID = 0
    /// The thread `startThread` made, joined by `stopAndWait`.
    private let startedThread = Mutex<pthread_t?>(nil)

    public init() throws(MainLoopError) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw MainLoopError(operation: "pipe", errno: errno) }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        wakeDescriptor = ends[0]
        wakeWriteDescriptor = ends[1]
    }

    deinit {
        close(wakeDescriptor)
        close(wakeWriteDescriptor)
    }

    // MARK: Any thread

    /// Whether the caller runs on the loop thread.
    public var isCurrent: Bool {
        let owner = loopThread.load(ordering: .acquiring)
        return owner != 0 && pthread_equal(pthread_t(owner), pthread_self()) != 0
    }

    /// Runs `body` on the loop thread soon (in order with other queued work).
    public func execute(_ body: @escaping @Sendable () -> Void) {
        pending.withLock { $0.closures.append(body) }
        wake()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        pending.withLock { $0.jobs.append(job) }
        wake()
    }

    /// Lets `assumeIsolated` on an actor that runs here succeed only on the loop thread.
    public func checkIsolated() {
        precondition(isCurrent, "not on beacond's main loop thread")
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Makes `run` return after the current iteration.
    public func stop() {
        stopRequested.store(true, ordering: .releasing)
        wake()
    }

    private func wake() {
        var byte: UInt8 = 1
        // A full pipe (EAGAIN) already means "wake up"; nothing else can fail for a pipe we own.
        _ = write(wakeWriteDescriptor, &byte, 1)
    }

    /// Starts the loop on a new thread. Register descriptors, timers and exported objects before this, or
    /// from the loop thread afterwards. `detached`: nobody will `stopAndWait` (the thread's resources go when it
    /// ends by `stop()`, not when someone joins it: a client library's loop, ended from a deinit).
    public func startThread(detached: Bool = false) throws(MainLoopError) {
        let box = Unmanaged.passRetained(self)
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { argument in
                guard let argument else { return nil }
                let loop = Unmanaged<MainLoop>.fromOpaque(argument).takeRetainedValue()
                loop.run()
                return nil
            }, box.toOpaque())
        guard result == 0 else {
            box.release()
            throw MainLoopError(operation: "pthread_create", errno: result)
        }
        if detached {
            pthread_detach(thread)
            return
        }
        startedThread.withLock { $0 = thread }
    }

    /// Stops a loop started with `startThread` and waits for its thread to finish; afterwards the loop's
    /// objects may be released on the calling thread.
    public func stopAndWait() {
        stop()
        guard
            let thread = startedThread.withLock({ state -> pthread_t? in
                defer { state = nil }
                return state
            })
        else { return }
        pthread_join(thread, nil)
    }

    // MARK: Loop thread

    /// Runs the loop on the calling thread until `stop()`.
    public func run() {
        loopThread.store(UInt(pthread_self()), ordering: .releasing)
        while !stopRequested.load(ordering: .acquiring) {
            runQueuedWork()
            for hook in beforePollHooks { hook() }
            // With work queued (by a hook, or another thread) the poll only looks, it does not sleep; descriptors
            // and timers still get their turn, so no source can starve the others.
            pollOnce(timeout: hasQueuedWork ? 0 : pollTimeout())
            fireDueTimers()
        }
        runQueuedWork()
        loopThread.store(0, ordering: .releasing)
    }

    private var hasQueuedWork: Bool {
        pending.withLock { !$0.jobs.isEmpty || !$0.closures.isEmpty }
    }

    private func runQueuedWork() {
        let (jobs, closures) = pending.withLock { state in
            defer { state = ([], []) }
            return state
        }
        for closure in closures { closure() }
        for job in jobs { job.runSynchronously(on: asUnownedSerialExecutor()) }
    }

    private func pollOnce(timeout: Int32) {
        let sources = descriptors.filter { $0.value.enabled && !$0.value.events.isEmpty }.map { ($0.key, $0.value) }
        var fds = [pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0)]
        fds += sources.map { pollfd(fd: $0.1.fd, events: $0.1.events.rawValue, revents: 0) }
        let ready = poll(&fds, nfds_t(fds.count), timeout)
        guard ready > 0 else { return } // timeout, or EINTR: timers and queued work are checked next
        if fds[0].revents != 0 {
            var drain = [UInt8](repeating: 0, count: 256)
            while read(wakeDescriptor, &drain, drain.count) > 0 {}
        }
        for (index, (id, _)) in sources.enumerated() where fds[index + 1].revents != 0 {
            // A handler may have removed or disabled another source in this same round.
            guard let source = descriptors[id], source.enabled else { continue }
            let revents = fds[index + 1].revents
            source.handler(Events(rawValue: revents))
            // A descriptor closed while still registered would report POLLNVAL on every poll: a busy loop.
            // Disable it; its owner's handler has been told (`.invalid`) and should remove it.
            if revents & Int16(POLLNVAL) != 0 { descriptors[id]?.enabled = false }
        }
    }

    /// Milliseconds until the earliest timer (rounded up so a timer never fires early), or -1 for none.
    private func pollTimeout() -> Int32 {
        guard let earliest = timers.values.map(\.deadline).min() else { return -1 }
        let remaining = ContinuousClock.now.duration(to: earliest)
        guard remaining > .zero else { return 0 }
        let (seconds, attoseconds) = remaining.components
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: milliseconds)
    }

    private func fireDueTimers() {
        let now = ContinuousClock.now
        let due = timers.filter { $0.value.deadline <= now }.sorted { $0.value.deadline < $1.value.deadline }
        for (id, _) in due {
            // One-shot: removed before it runs, so its handler may schedule again.
            guard let timer = timers.removeValue(forKey: id) else { continue }
            timer.handler()
        }
    }

    private func makeID() -> SourceID {
        nextID += 1
        return SourceID(value: nextID)
    }

    /// Calls `handler` on the loop thread whenever `fd` has one of `events` (level-triggered, like poll).
    @discardableResult
    public func addDescriptor(
        _ fd: Int32, events: Events, enabled: Bool = true,
        handler: @escaping (Events) -> Void
    ) -> SourceID {
        precondition(isCurrentOrNotStarted)
        let id = makeID()
        descriptors[id] = DescriptorSource(fd: fd, events: events, enabled: enabled, handler: handler)
        return id
    }

    public func updateDescriptor(_ id: SourceID, events: Events? = nil, enabled: Bool? = nil) {
        precondition(isCurrentOrNotStarted)
        if let events { descriptors[id]?.events = events }
        if let enabled { descriptors[id]?.enabled = enabled }
    }

    public func removeDescriptor(_ id: SourceID) {
        precondition(isCurrentOrNotStarted)
        descriptors[id] = nil
    }

    /// Calls `handler` once at `deadline` (or at the next iteration if that has passed).
    @discardableResult
    public func schedule(at deadline: ContinuousClock.Instant, handler: @escaping () -> Void) -> SourceID {
        precondition(isCurrentOrNotStarted)
        let id = makeID()
        timers[id] = Timer(deadline: deadline, handler: handler)
        return id
    }

    public func cancelTimer(_ id: SourceID) {
        precondition(isCurrentOrNotStarted)
        timers[id] = nil
    }

    /// Runs `hook` on every iteration before the loop sleeps (libdbus's "dispatch what was read").
    public func addBeforePollHook(_ hook: @escaping () -> Void) {
        precondition(isCurrentOrNotStarted)
        beforePollHooks.append(hook)
    }

    /// Set-up before the loop runs happens on whatever thread creates things; after that, only the loop thread.
    private var isCurrentOrNotStarted: Bool {
        loopThread.load(ordering: .acquiring) == 0 || isCurrent
    }
}

/// A system call the loop needs failed (at start-up only: creating the wake-up descriptor or the thread).
public struct MainLoopError: Error, Hashable, Sendable, CustomStringConvertible {
    public var operation: String
    public var errno: Int32

    public var description: String {
        "\(operation) failed: \(String(cString: strerror(errno)))"
    }
}
