package import BeaconKit
package import Logging

/// What the input being handled asks of the daemon, in order, and the timers armed. Every concern of the core writes
/// here and only here (a log line, a signal, a timer); `DaemonCore.handle` hands the effects out once the input is
/// done. It decides nothing.
package struct CoreOutbox {
    /// The time of the input being handled.
    package var now: Timestamp
    /// The effects of the input being handled, in the order they must be carried out.
    package private(set) var effects: [DaemonEffect] = []
    /// The timers armed, by name, and when each fires. The runtime's `TimerSet` holds only the loop's handles.
    package private(set) var armedTimers: [DaemonTimer: Timestamp] = [:]

    package init(now: Timestamp) {
        self.now = now
    }

    /// The effects so far, handed out (the buffer goes with them: most inputs, an advertisement, have none).
    package mutating func take() -> [DaemonEffect] {
        defer { effects = [] }
        return effects
    }

    package mutating func emit(_ effect: DaemonEffect) {
        effects.append(effect)
    }

    package mutating func notify(_ session: ClientSession, _ event: ClientEvent, _ audience: Audience = .clientAndAdministrators) {
        emit(.notify(ClientAddress(session), event, audience))
    }

    package mutating func notify(_ event: AdminEvent) {
        emit(.adminEvent(event))
    }

    package mutating func log(_ level: Logger.Level, _ message: String, _ metadata: Logger.Metadata = [:]) {
        emit(.log(level, message, metadata))
    }

    /// Arms the named timer (replacing it if armed).
    package mutating func arm(_ timer: DaemonTimer, at deadline: Timestamp) {
        armedTimers[timer] = deadline
        emit(.arm(timer, at: deadline))
    }

    /// Arms a timer for a pure component's next deadline (at most an hour ahead), or cancels it when there is none.
    /// A timer that fires no later stays: firing early only advances the component to its time and arms again.
    /// Remote readings move deadlines later, and re-arming after each (100,000 a second on a busy fleet) cost a
    /// cancel and a schedule apiece.
    package mutating func arm(_ timer: DaemonTimer, forDeadline deadline: Timestamp?) {
        guard let deadline else {
            cancel(timer)
            return
        }
        let delay = deadline - now
        let fires = now + (delay > .zero ? min(delay, .seconds(3600)) : .zero)
        if let armed = armedTimers[timer], armed <= fires { return }
        arm(timer, at: fires)
    }

    package mutating func cancel(_ timer: DaemonTimer) {
        guard armedTimers.removeValue(forKey: timer) != nil else { return }
        emit(.cancel(timer))
    }

    /// The timer fired: it is no longer armed.
    package mutating func fired(_ timer: DaemonTimer) {
        armedTimers[timer] = nil
    }

    package func isArmed(_ timer: DaemonTimer) -> Bool { armedTimers[timer] != nil }
}

extension ClientSession {
    /// The client's fields for a log line.
    package var logMetadata: Logger.Metadata {
        ["client.app": "\(appID)", "client.path": "\(path)"]
    }
}
