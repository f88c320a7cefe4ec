public import DBus

/// What a scanner hands the engine: raw bytes as the controller produced them, decoded by BeaconKit.
public enum ScannerInput: Sendable {
    /// An HCI event (no H4 type byte).
    case hciEvent([UInt8])
    /// An advertising-channel PDU captured over the air, with its RSSI if known.
    case linkLayerPDU([UInt8], rssi: Int8?)
}

/// Why a scanner could not start, with the fix.
public struct ScannerError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A source of advertisements running on the daemon's main loop. It runs only while someone monitors or
/// ranges (design.md: scan only when needed), so `start` and `stop` may be called many times.
public protocol BeaconScanner: AnyObject {
    /// What it reads, for status and logs (`fifo:/run/beacond/test.fifo`).
    var label: String { get }
    /// Starts delivering input on the loop thread through `deliver`; `failed` reports a later failure
    /// (the source vanished) after which the scanner is stopped.
    func start(loop: MainLoop, deliver: @escaping (ScannerInput) -> Void,
               failed: @escaping (ScannerError) -> Void) throws(ScannerError)
    func stop()
}
