import BeacondAPI

/// What the scanner is doing: one state instead of a `scanning` flag beside state and detail strings.
public enum ScannerPhase: Hashable, Sendable {
    /// No scanner: nobody monitors or ranges.
    case idle
    /// Started, not yet reporting (`label`: what it reads, `fifo:/run/x`).
    case starting(label: String)
    /// Advertisements arrive; `detail` says from where.
    case scanning(label: String, detail: String)
    /// Cannot see now and recovers by itself (bluetoothd restarting, the adapter off).
    case waiting(label: String, reason: String)
    /// Could not start or stopped for good; retried while someone needs scanning. `detail`: what it last
    /// read, kept for status.
    case failed(reason: String, detail: String)

    /// `GetStatus` `ScannerState` (`BeacondScannerState`).
    public var stateText: String {
        switch self {
        case .idle: return BeacondScannerState.idle
        case .starting: return BeacondScannerState.starting
        case .scanning: return BeacondScannerState.scanning
        case .waiting(_, let reason): return BeacondScannerState.waitingPrefix + reason
        case .failed(let reason, _): return BeacondScannerState.failedPrefix + reason
        }
    }

    /// `GetStatus` `ScannerDetail`: the scanner in use and what it reads now ("" when none).
    public var detail: String {
        switch self {
        case .idle, .starting: return ""
        case .scanning(let label, let detail): return "\(label): \(detail)"
        case .waiting(let label, _): return label
        case .failed(_, let detail): return detail
        }
    }

    /// Manager1 `Scanning`: advertisements arrive now.
    public var isScanning: Bool {
        if case .scanning = self { return true }
        return false
    }
}

/// Scan control: when the scanner runs, what a start, a report or a failure leads to, and when it is tried
/// again. Pure: it holds no scanner and no timer; it says what to do (`Action`), and the daemon does it (the
/// scanner object and the retry timer are the daemon's, driven only by these actions).
///
/// Scanning runs only while someone monitors or ranges. While nothing can be seen (a failed start, a scanner
/// that waits or failed), detection is suspended: regions become unknown rather than exiting one by one (a
/// stationary beacon must never produce a false exit); a failed scanner is tried again every retry interval.
public struct ScanControl: Sendable {
    public enum Action: Hashable, Sendable {
        /// Make the scanner (unless one exists) and start it; answer with `started` or `startFailed`.
        case startScanner
        /// Stop the scanner and drop it.
        case stopScanner
        /// Arm the retry timer; when it fires, call `retryDue`.
        case scheduleRetry
        case cancelRetry
        /// Regions get a full exit timeout from now.
        case resumeDetection
        /// Regions become unknown, not exited.
        case suspendDetection
        /// Manager1 `Scanning` changed: tell the bus and the watchers.
        case scanningChanged(Bool)
        case log(Level, String)
    }

    public enum Level: Hashable, Sendable { case info, notice, warning, error }

    /// Scan control's one state: what the scanner does, whether a scanner exists and whether a retry is armed
    /// all follow from it, so they cannot disagree (scanning without a scanner, a retry armed beside one).
    public enum State: Hashable, Sendable {
        /// No retry armed. A scanner exists while `starting`, `scanning` or `waiting`; a `failed` one failed, or
        /// its retry came, while nobody needed scanning, and the next need starts one at once.
        case phase(ScannerPhase)
        /// A scanner was asked for (`startScanner`) and is being made: no second one is asked for meanwhile. The
        /// detail is the phase's before, kept for status if the start fails.
        case requested(detail: String)
        /// No scanner (it could not start, or failed) while someone needs scanning: blind, the retry timer armed.
        case blind(reason: String, detail: String)
    }

    public private(set) var state: State = .phase(.idle)
    /// The reason the last start failed, so starts failing alike are not logged again until scanning works.
    /// Not part of `state`: it is a memory of what was said, and outlives every state but scanning (a stop, the
    /// next start, a wait); scanning clears it.
    private var lastStartFailure: String?

    /// Manager1 `ScannerState` as apps were last told (`showState`).
    public internal(set) var shownState = BeacondScannerState.idle

    public init() {}

    /// What the scanner is doing, for status and Manager1 `Scanning`.
    public var phase: ScannerPhase {
        switch state {
        case .phase(let phase): return phase
        case .requested: return .starting(label: "")
        case .blind(let reason, let detail): return .failed(reason: reason, detail: detail)
        }
    }

    /// Whether a scanner object exists (started, or starting).
    public var hasScanner: Bool {
        switch state {
        case .phase(.starting), .phase(.scanning), .phase(.waiting), .requested: return true
        case .phase(.idle), .phase(.failed), .blind: return false
        }
    }

    /// Whether the retry timer is armed.
    public var retryPending: Bool {
        if case .blind = state { return true }
        return false
    }

    /// After every change to the engine: start a scanner when someone needs one, stop it when nobody does.
    /// A scanner that is starting or waiting is left alone; a failed one is retried by its timer.
    public mutating func needChanged(needsScanning: Bool) -> [Action] {
        let scannerOrRetry = hasScanner || retryPending
        if needsScanning { return scannerOrRetry ? [] : request() }
        guard scannerOrRetry else { return [] }
        let cancel: [Action] = retryPending ? [.cancelRetry] : []
        return cancel + stop(then: .idle) + [.log(.info, "scanning stopped: nobody monitors or ranges")]
    }

    /// The scanner was made and asked to start; it reports through `reported`.
    public mutating func started(label: String) -> [Action] {
        let cancel: [Action] = retryPending ? [.cancelRetry] : []
        state = .phase(.starting(label: label))
        return cancel + [.log(.info, "scanner starting: \(label)")]
    }

    /// The scanner could not be made or started: blind, and tried again later.
    public mutating func startFailed(_ reason: String) -> [Action] {
        // Said once per reason, not at every retry (until scanning works again).
        let said: [Action] = lastStartFailure == reason ? [] : [.log(.error, "cannot scan: \(reason)")]
        lastStartFailure = reason
        let detail = if case .requested(let detail) = state { detail } else { phase.detail }
        return said + blind(reason: reason, detail: detail)
    }

    /// What a started scanner reports: seeing, waiting (it recovers by itself), or failed (retried later).
    public mutating func reported(_ status: ScannerStatus, label: String, needsScanning: Bool) -> [Action] {
        guard hasScanner else { return [] }
        let wasScanning = phase.isScanning
        switch status {
        case .scanning(let detail):
            state = .phase(.scanning(label: label, detail: detail))
            lastStartFailure = nil
            if wasScanning { return [.resumeDetection] }
            return [.log(.notice, "scanning: \(detail)"), .resumeDetection, .scanningChanged(true)]
        case .waiting(let reason):
            var actions: [Action] = []
            if phase.stateText != BeacondScannerState.waitingPrefix + reason {
                actions.append(.log(.warning, "cannot scan now: \(reason)"))
            }
            state = .phase(.waiting(label: label, reason: reason))
            if wasScanning { actions.append(.scanningChanged(false)) }
            return actions + [.suspendDetection]
        case .failed(let reason):
            let detail = phase.detail
            let actions: [Action] = [.log(.error, "scanner failed: \(reason)")] + stop(then: .failed(reason: reason, detail: detail))
            return needsScanning ? actions + blind(reason: reason, detail: detail) : actions
        }
    }

    /// The retry timer fired.
    public mutating func retryDue(needsScanning: Bool) -> [Action] {
        if case .blind(let reason, let detail) = state { state = .phase(.failed(reason: reason, detail: detail)) }
        return needsScanning && !hasScanner ? request() : []
    }

    /// A scanner is asked for, once.
    private mutating func request() -> [Action] {
        state = .requested(detail: phase.detail)
        return [.startScanner]
    }

    /// The scanner source in the configuration changed: a running scanner is replaced.
    public mutating func sourceChanged(needsScanning: Bool) -> [Action] {
        guard hasScanner else { return [] }
        return stop(then: .idle) + needChanged(needsScanning: needsScanning)
    }

    /// beacond stops.
    public mutating func shutdown() -> [Action] {
        let cancel: [Action] = retryPending ? [.cancelRetry] : []
        return cancel + stop(then: .idle)
    }

    private mutating func stop(then next: ScannerPhase) -> [Action] {
        let wasScanning = phase.isScanning
        state = .phase(next)
        return [.stopScanner] + (wasScanning ? [.scanningChanged(false)] : [])
    }

    /// Nothing can be seen until a scanner works again: detection is suspended and the retry timer armed (once).
    private mutating func blind(reason: String, detail: String) -> [Action] {
        let armed = retryPending
        state = .blind(reason: reason, detail: detail)
        return [.suspendDetection] + (armed ? [] : [.scheduleRetry])
    }
}
