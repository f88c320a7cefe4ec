import BeacondAPI
@testable import BeacondService
@testable import BeacondCore
import Testing

/// Scan control without a bus, a scanner or a timer: what each event leads to.
@Suite("scan control")
struct ScanControlTests {
    typealias A = ScanControl.Action

    @Test("scans only while needed: start, report, stop, idle again")
    func startsAndStopsWithNeed() {
        var control = ScanControl()
        #expect(control.needChanged(needsScanning: false).isEmpty)
        #expect(control.needChanged(needsScanning: true) == [.startScanner])
        #expect(control.started(label: "fifo:/x") == [.log(.info, "scanner starting: fifo:/x")])
        #expect(control.phase == .starting(label: "fifo:/x"))
        // Already has a scanner: no second start.
        #expect(control.needChanged(needsScanning: true).isEmpty)
        #expect(
            control.reported(.scanning("reading"), label: "fifo:/x", needsScanning: true)
                == [.log(.notice, "scanning: reading"), .resumeDetection, .scanningChanged(true)])
        #expect(control.phase.isScanning)
        #expect(control.phase.stateText == BeacondScannerState.scanning)
        #expect(control.phase.detail == "fifo:/x: reading")
        // A second report while scanning resumes again but announces nothing.
        #expect(control.reported(.scanning("reading"), label: "fifo:/x", needsScanning: true) == [.resumeDetection])
        #expect(
            control.needChanged(needsScanning: false)
                == [.stopScanner, .scanningChanged(false), .log(.info, "scanning stopped: nobody monitors or ranges")])
        #expect(control.phase == .idle)
        #expect(control.phase.detail == "")
        #expect(!control.hasScanner)
    }

    @Test("a scanner asked for is asked for once, until it started or failed; a failed start keeps the detail")
    func aRequestedScannerIsRequestedOnce() {
        var control = ScanControl()
        #expect(control.needChanged(needsScanning: true) == [.startScanner])
        // More engine changes in the same input: the scanner is being made, not asked for again.
        #expect(control.needChanged(needsScanning: true).isEmpty)
        #expect(control.hasScanner && control.phase == .starting(label: ""))
        // Nobody needs it any more before it started: it is stopped (the runtime has made it by then).
        #expect(control.needChanged(needsScanning: false) == [.stopScanner, .log(.info, "scanning stopped: nobody monitors or ranges")])
        #expect(control.phase == .idle)
        // The retry of a failed scanner asks once too, and a start that fails again keeps the failure's detail.
        _ = control.needChanged(needsScanning: true)
        _ = control.started(label: "hci:hci0")
        _ = control.reported(.failed("adapter removed"), label: "hci:hci0", needsScanning: true)
        let detail = control.phase.detail
        #expect(control.retryDue(needsScanning: true) == [.startScanner])
        #expect(control.retryDue(needsScanning: true).isEmpty)
        _ = control.startFailed("no adapter")
        #expect(control.phase.detail == detail)
    }

    @Test("a failed start is blind and retried once per interval, logged once per reason")
    func failedStartRetries() {
        var control = ScanControl()
        _ = control.needChanged(needsScanning: true)
        _ = control.started(label: "hci:hci0")
        #expect(
            control.startFailed("no adapter hci0")
                == [.log(.error, "cannot scan: no adapter hci0"), .suspendDetection, .scheduleRetry])
        #expect(control.phase.stateText == BeacondScannerState.failedPrefix + "no adapter hci0")
        // While the retry is pending, more engine changes do not start it early.
        #expect(control.needChanged(needsScanning: true).isEmpty)
        #expect(control.retryDue(needsScanning: true) == [.startScanner])
        #expect(control.started(label: "hci:hci0") == [.log(.info, "scanner starting: hci:hci0")])
        // The same reason again: not logged again, and a new retry is armed.
        #expect(control.startFailed("no adapter hci0") == [.suspendDetection, .scheduleRetry])
        // Nobody needs scanning when the retry fires: nothing starts, and the pending retry is gone.
        #expect(control.retryDue(needsScanning: false).isEmpty)
        #expect(!control.retryPending)
    }

    @Test("nobody needs scanning any more while a retry is pending: the retry is cancelled")
    func needGoneCancelsRetry() {
        var control = ScanControl()
        _ = control.needChanged(needsScanning: true)
        _ = control.startFailed("denied")
        #expect(
            control.needChanged(needsScanning: false)
                == [.cancelRetry, .stopScanner, .log(.info, "scanning stopped: nobody monitors or ranges")])
        #expect(control.phase == .idle)
    }

    @Test("waiting suspends detection and is no longer scanning; said once per reason")
    func waiting() {
        var control = ScanControl()
        _ = control.needChanged(needsScanning: true)
        _ = control.started(label: "bluez:hci0")
        _ = control.reported(.scanning("discovering"), label: "bluez:hci0", needsScanning: true)
        #expect(
            control.reported(.waiting("adapter off"), label: "bluez:hci0", needsScanning: true)
                == [.log(.warning, "cannot scan now: adapter off"), .scanningChanged(false), .suspendDetection])
        #expect(control.phase.detail == "bluez:hci0")
        #expect(control.reported(.waiting("adapter off"), label: "bluez:hci0", needsScanning: true) == [.suspendDetection])
        #expect(control.hasScanner)
        // It recovers by itself.
        #expect(
            control.reported(.scanning("discovering"), label: "bluez:hci0", needsScanning: true)
                == [.log(.notice, "scanning: discovering"), .resumeDetection, .scanningChanged(true)])
    }

    @Test("a scanner that fails while scanning is stopped, blind and retried, keeping its last detail")
    func failsWhileScanning() {
        var control = ScanControl()
        _ = control.needChanged(needsScanning: true)
        _ = control.started(label: "fifo:/x")
        _ = control.reported(.scanning("reading"), label: "fifo:/x", needsScanning: true)
        #expect(
            control.reported(.failed("gone"), label: "fifo:/x", needsScanning: true)
                == [.log(.error, "scanner failed: gone"), .stopScanner, .scanningChanged(false), .suspendDetection, .scheduleRetry])
        #expect(control.phase == .failed(reason: "gone", detail: "fifo:/x: reading"))
        // A report from a scanner already dropped changes nothing.
        #expect(control.reported(.scanning("late"), label: "fifo:/x", needsScanning: true).isEmpty)
    }

    @Test("a new scanner source replaces a running scanner, and shutdown stops everything")
    func sourceChangeAndShutdown() {
        var control = ScanControl()
        #expect(control.sourceChanged(needsScanning: true).isEmpty)
        _ = control.needChanged(needsScanning: true)
        _ = control.started(label: "fifo:/x")
        _ = control.reported(.scanning("reading"), label: "fifo:/x", needsScanning: true)
        #expect(control.sourceChanged(needsScanning: true) == [.stopScanner, .scanningChanged(false), .startScanner])
        _ = control.started(label: "fifo:/y")
        _ = control.startFailed("no such file")
        #expect(control.shutdown() == [.cancelRetry, .stopScanner])
        #expect(!control.retryPending)
    }

    /// Scanning on `fifo:/x`, reading.
    static func scanning() -> ScanControl {
        var control = ScanControl()
        _ = control.needChanged(needsScanning: true)
        _ = control.started(label: "fifo:/x")
        _ = control.reported(.scanning("reading"), label: "fifo:/x", needsScanning: true)
        return control
    }

    /// Needed, but the scanner could not be made: blind, its retry armed.
    static func blind(_ reason: String) -> ScanControl {
        var control = ScanControl()
        _ = control.needChanged(needsScanning: true)
        _ = control.startFailed(reason)
        return control
    }

    @Test("a scanner that fails while nobody needs scanning is left without a retry; the next need starts one at once")
    func failsWhileNotNeeded() {
        var control = Self.scanning()
        #expect(
            control.reported(.failed("gone"), label: "fifo:/x", needsScanning: false)
                == [.log(.error, "scanner failed: gone"), .stopScanner, .scanningChanged(false)])
        #expect(control.phase == .failed(reason: "gone", detail: "fifo:/x: reading"))
        #expect(!control.hasScanner)
        #expect(!control.retryPending)
        // Nothing runs and nothing is armed: no second stop, no "scanning stopped".
        #expect(control.needChanged(needsScanning: false).isEmpty)
        #expect(control.needChanged(needsScanning: true) == [.startScanner])
    }

    @Test("a retry due when nobody needs scanning leaves neither timer nor scanner; shutdown then cancels nothing")
    func retryDueWhenNotNeeded() {
        var control = Self.blind("denied")
        #expect(control.retryDue(needsScanning: false).isEmpty)
        #expect(control.phase == .failed(reason: "denied", detail: ""))
        #expect(!control.hasScanner)
        #expect(!control.retryPending)
        #expect(control.sourceChanged(needsScanning: true).isEmpty, "no scanner to replace")
        #expect(control.shutdown() == [.stopScanner])
        #expect(control.phase == .idle)
    }

    @Test("a scanner that cannot even be made keeps what the failed one last read, and is retried")
    func failedAgainBeforeStarting() {
        var control = Self.scanning()
        _ = control.reported(.failed("gone"), label: "fifo:/x", needsScanning: true)
        #expect(control.retryDue(needsScanning: true) == [.startScanner])
        // The daemon could not make a scanner: no `started` came before.
        #expect(
            control.startFailed("no such file")
                == [.log(.error, "cannot scan: no such file"), .suspendDetection, .scheduleRetry])
        #expect(control.phase == .failed(reason: "no such file", detail: "fifo:/x: reading"))
        #expect(control.retryPending)
    }

    @Test("a start failure is said once until scanning works, even across a stop; then it is said again")
    func startFailureSaidOnceUntilScanning() {
        var control = ScanControl()
        _ = control.needChanged(needsScanning: true)
        #expect(control.startFailed("denied").first == .log(.error, "cannot scan: denied"))
        _ = control.needChanged(needsScanning: false)
        #expect(control.phase == .idle)
        #expect(control.needChanged(needsScanning: true) == [.startScanner])
        #expect(control.startFailed("denied") == [.suspendDetection, .scheduleRetry])
        _ = control.retryDue(needsScanning: true)
        _ = control.started(label: "fifo:/x")
        _ = control.reported(.scanning("reading"), label: "fifo:/x", needsScanning: true)
        _ = control.needChanged(needsScanning: false)
        _ = control.needChanged(needsScanning: true)
        #expect(control.startFailed("denied").first == .log(.error, "cannot scan: denied"))
    }

    @Test("one state says whether a scanner exists and whether its retry is armed")
    func oneState() {
        var control = Self.blind("denied")
        #expect(control.state == .blind(reason: "denied", detail: ""))
        _ = control.retryDue(needsScanning: true)
        #expect(control.state == .requested(detail: ""), "the retry came: no timer, a scanner asked for")
        _ = control.started(label: "fifo:/x")
        #expect(control.state == .phase(.starting(label: "fifo:/x")))
        _ = control.reported(.waiting("adapter off"), label: "fifo:/x", needsScanning: true)
        #expect(control.state == .phase(.waiting(label: "fifo:/x", reason: "adapter off")))
    }
}
