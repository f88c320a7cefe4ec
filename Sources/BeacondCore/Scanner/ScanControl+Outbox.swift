import BeaconKit
import BeacondAPI

/// Scan control's actions that are only effects, and what apps are told of the scanner (Manager1 `ScannerState`).
extension ScanControl {
    /// How long after a failed start the scanner is tried again (while someone still needs it).
    package static let retryInterval: Duration = .seconds(30)

    /// Carries out an action that is only an effect: the scanner started or stopped, its retry timer, the `Scanning`
    /// property, a log line. Resuming and suspending detection change the engine: they are the core's.
    package static func carryOut(_ action: Action, _ outbox: inout CoreOutbox) {
        switch action {
        case .startScanner:
            outbox.emit(.startScanner)
        case .stopScanner:
            outbox.emit(.stopScanner)
        case .scheduleRetry:
            outbox.arm(.scannerRetry, at: outbox.now + retryInterval)
        case .cancelRetry:
            outbox.cancel(.scannerRetry)
        case .scanningChanged(let scanning):
            outbox.emit(.managerPropertyChanged(.scanning(scanning)))
            outbox.notify(.scanningChanged(scanning))
        case .log(let level, let message):
            switch level {
            case .info: outbox.log(.info, message)
            case .notice: outbox.log(.notice, message)
            case .warning: outbox.log(.warning, message)
            case .error: outbox.log(.error, message)
            }
        case .resumeDetection, .suspendDetection:
            preconditionFailure("\(action) changes the engine: the core carries it out")
        }
    }

    /// Tells apps (Manager1 `ScannerState`) what the scanner does now, when that changed since they were last told:
    /// the phase's text, except that a failed or waiting scanner being tried again stays failed until it scans (apps
    /// would otherwise hear "starting" and the failure again at every retry, and take the start for a recovery).
    package mutating func showState(_ outbox: inout CoreOutbox) {
        let state = phase.stateText
        let blind =
            shownState.hasPrefix(BeacondScannerState.failedPrefix) || shownState.hasPrefix(BeacondScannerState.waitingPrefix)
        if blind && state == BeacondScannerState.starting { return } // a retry: still failed until it scans
        guard state != shownState else { return }
        shownState = state
        outbox.emit(.managerPropertyChanged(.scannerState(state)))
    }
}
