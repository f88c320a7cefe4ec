import MainLoopKit

/// The daemon's timers on the loop, one per name: arming a name again replaces its timer, and a timer that fired
/// is no longer armed. So no timer is held in an optional beside the state it serves, and nothing can leave one
/// armed by forgetting to cancel it.
struct TimerSet<Name: Hashable> {
    private struct Armed {
        var source: MainLoop.SourceID
        var fires: ContinuousClock.Instant
    }

    private let loop: MainLoop
    private var armed: [Name: Armed] = [:]

    init(loop: MainLoop) {
        self.loop = loop
    }

    /// When the named timer fires, or nil when it is not armed.
    func deadline(_ name: Name) -> ContinuousClock.Instant? { armed[name]?.fires }

    func isArmed(_ name: Name) -> Bool { armed[name] != nil }

    /// Arms the named timer (replacing it if armed); `fire` runs on the loop thread once `fired` was called.
    mutating func arm(_ name: Name, at deadline: ContinuousClock.Instant, _ fire: @escaping () -> Void) {
        cancel(name)
        armed[name] = Armed(source: loop.schedule(at: deadline, handler: fire), fires: deadline)
    }

    mutating func cancel(_ name: Name) {
        guard let timer = armed.removeValue(forKey: name) else { return }
        loop.cancelTimer(timer.source)
    }

    /// The named timer fired: it is no longer armed.
    mutating func fired(_ name: Name) {
        armed[name] = nil
    }

    mutating func cancelAll() {
        for name in Array(armed.keys) { cancel(name) }
    }
}

/// The daemon's timers by what they are for.
enum DaemonTimer: Hashable, CaseIterable {
    /// The engine's next deadline: an exit timeout, a ranging cycle.
    case engine
    /// The next attempt to start a scanner that could not start.
    case scannerRetry
    /// Saves the regions' last-seen times while sightings arrive.
    case lastSeenSave
    /// The next try to write state after a failed write (`StateJournal`'s backoff).
    case stateRetry
    /// When the oldest queued event is older than `queue_ttl`.
    case queueExpiry
    /// Home Assistant's presence regions' next deadline (`HomeAssistantPresence`).
    case homeAssistant
}
