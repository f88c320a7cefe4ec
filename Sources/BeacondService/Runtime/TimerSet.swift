import BeacondCore
import MainLoopKit

/// The loop's handles of the daemon's timers, one per name: arming a name again replaces its timer, and a timer
/// that fired is no longer held. Which timers are armed and when they fire is the core's to know
/// (`DaemonCore.armedTimers`); this holds only what the loop needs to cancel them.
struct TimerSet<Name: Hashable> {
    private let loop: MainLoop
    private var sources: [Name: MainLoop.SourceID] = [:]

    init(loop: MainLoop) {
        self.loop = loop
    }

    func isArmed(_ name: Name) -> Bool { sources[name] != nil }

    /// Arms the named timer (replacing it if armed); `fire` runs on the loop thread once `fired` was called.
    mutating func arm(_ name: Name, at deadline: ContinuousClock.Instant, _ fire: @escaping () -> Void) {
        cancel(name)
        sources[name] = loop.schedule(at: deadline, handler: fire)
    }

    mutating func cancel(_ name: Name) {
        guard let source = sources.removeValue(forKey: name) else { return }
        loop.cancelTimer(source)
    }

    /// The named timer fired: it is no longer armed.
    mutating func fired(_ name: Name) {
        sources[name] = nil
    }

    mutating func cancelAll() {
        for name in Array(sources.keys) { cancel(name) }
    }
}
