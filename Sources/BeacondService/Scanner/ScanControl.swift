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

    public private(set) var phase: ScannerPhase = .idle
    /// Whether a scanner object exists (started, or starting).
    public private(set) var hasScanner = false
    public private(set) var retryPending = false
    /// The reason the last start failed, so retries failing alike are not logged again.
    private var lastStartFailure: String?

    public init() {}

    /// After every change to the engine: start a scanner when someone needs one, stop it when nobody does.
    /// A scanner that is starting or waiting is left alone; a failed one is retried by its timer.
    public mutating func needChanged(needsScanning: Bool) -> [Action] {
        if needsScanning {
            guard !hasScanner, !retryPending else { return [] }
            return [.startScanner]
        }
        guard phase.isScanning || hasScanner || retryPending else { return [] }
        var actions: [Action] = []
        if retryPending { actions.append(.cancelRetry) }
        retryPending = false
        actions += stop(then: .idle)
        actions.append(.log(.info, "scanning stopped: nobody monitors or ranges"))
        return actions
    }

    /// The scanner was made and asked to start; it reports through `reported`.
    public mutating func started(label: String) -> [Action] {
        hasScanner = true
        phase = .starting(label: label)
        var actions: [Action] = retryPending ? [.cancelRetry] : []
        retryPending = false
        actions.append(.log(.info, "scanner starting: \(label)"))
        return actions
    }

    /// The scanner could not be made or started: blind, and tried again later.
    public mutating func startFailed(_ reason: String) -> [Action] {
        var actions: [Action] = []
        // Said once per reason, not at every retry (until scanning works again).
        if lastStartFailure != reason { actions.append(.log(.error, "cannot scan: \(reason)")) }
        lastStartFailure = reason
        hasScanner = false
        phase = .failed(reason: reason, detail: phase.detail)
        return actions + blind()
    }

    /// What a started scanner reports: seeing, waiting (it recovers by itself), or failed (retried later).
    public mutating func reported(_ status: ScannerStatus, label: String, needsScanning: Bool) -> [Action] {
        guard hasScanner else { return [] }
        switch status {
        case .scanning(let detail):
            var actions: [Action] = phase.isScanning ? [] : [.log(.notice, "scanning: \(detail)")]
            let was = phase.isScanning
            phase = .scanning(label: label, detail: detail)
            lastStartFailure = nil
            actions.append(.resumeDetection)
            if !was { actions.append(.scanningChanged(true)) }
            return actions
        case .waiting(let reason):
            var actions: [Action] = []
            if phase.stateText != BeacondScannerState.waitingPrefix + reason {
                actions.append(.log(.warning, "cannot scan now: \(reason)"))
            }
            let was = phase.isScanning
            phase = .waiting(label: label, reason: reason)
            if was { actions.append(.scanningChanged(false)) }
            actions.append(.suspendDetection)
            return actions
        case .failed(let reason):
            var actions: [Action] = [.log(.error, "scanner failed: \(reason)")]
            actions += stop(then: .failed(reason: reason, detail: phase.detail))
            if needsScanning { actions += blind() }
            return actions
        }
    }

    /// The retry timer fired.
    public mutating func retryDue(needsScanning: Bool) -> [Action] {
        retryPending = false
        return needsScanning && !hasScanner ? [.startScanner] : []
    }

    /// The scanner source in the configuration changed: a running scanner is replaced.
    public mutating func sourceChanged(needsScanning: Bool) -> [Action] {
        guard hasScanner else { return [] }
        return stop(then: .idle) + needChanged(needsScanning: needsScanning)
    }

    /// beacond stops.
    public mutating func shutdown() -> [Action] {
        var actions: [Action] = retryPending ? [.cancelRetry] : []
        retryPending = false
        actions += stop(then: .idle)
        return actions
    }

    private mutating func stop(then next: ScannerPhase) -> [Action] {
        let was = phase.isScanning
        hasScanner = false
        phase = next
        return [.stopScanner] + (was ? [.scanningChanged(false)] : [])
    }

    private mutating func blind() -> [Action] {
        var actions: [Action] = [.suspendDetection]
        if !retryPending {
            retryPending = true
            actions.append(.scheduleRetry)
        }
        return actions
    }
}
