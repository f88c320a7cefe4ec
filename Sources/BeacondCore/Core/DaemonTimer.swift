/// The daemon's timers by what they are for.
package enum DaemonTimer: Hashable, CaseIterable {
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
