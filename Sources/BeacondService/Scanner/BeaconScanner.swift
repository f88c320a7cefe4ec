public import MainLoopKit
public import BeacondCore

/// A source of advertisements running on the daemon's main loop. It runs only while someone monitors or
/// ranges (scan only when needed: docs/scanning.md), so `start` and `stop` may be called many times.
public protocol BeaconScanner: AnyObject {
    /// What it reads, for status and logs (`fifo:/run/beacond/test.fifo`, `hci:hci0`).
    var label: String { get }
    /// The Bluetooth adapters it knows (empty for fifo and replay).
    var adapters: [ScannerAdapter] { get }
    /// Starts delivering input on the loop thread through `deliver`; returns the status it starts in and reports
    /// every later change through `status`. Neither closure is called before `start` returns: they run from the
    /// loop, so the daemon never hears of its scanner while it is still carrying out the core's effects.
    func start(
        loop: MainLoop, deliver: @escaping (ScannerInput) -> Void,
        status: @escaping (ScannerStatus) -> Void
    ) throws(ScannerError) -> ScannerStatus
    func stop()
}

extension BeaconScanner {
    public var adapters: [ScannerAdapter] { [] }
}
