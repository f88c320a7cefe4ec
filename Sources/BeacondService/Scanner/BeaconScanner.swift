public import BeaconKit
public import Captures
public import MainLoopKit

/// What a scanner hands the engine: raw bytes as the controller produced them (decoded by BeaconKit), or a
/// sighting bluetoothd already decoded (the BlueZ D-Bus scanner has no bytes).
public enum ScannerInput: Sendable {
    /// Bytes in a capture's terms: an HCI event (no H4 type byte), or an advertising-channel PDU captured over the
    /// air with its RSSI if known (`BeaconPipeline.ingest(_:payload:at:into:)` decodes either).
    case packet(CapturePacket, [UInt8])
    /// An advertisement bluetoothd decoded, heard now: its beacon frame, telemetry and TX power if any, and who sent
    /// it (a private device is recognised by its address).
    case advertisement(AdvertisementContent, rssi: Int8?, address: BluetoothAddress, addressType: UInt8)
}

/// Why a scanner could not start, with the fix.
public struct ScannerError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Whether a started scanner sees anything now.
public enum ScannerStatus: Hashable, Sendable {
    /// Advertisements arrive; the detail says from where (`hci0 (00:AA:01:00:00:00) through an HCI socket`).
    case scanning(String)
    /// Cannot see now and recovers by itself (bluetoothd restarting, adapter off or removed): the reason.
    case waiting(String)
    /// Stopped for good (the source vanished); the daemon tries to start it again later.
    case failed(String)
}

/// An adapter a scanner uses or could use, for `GetStatus` `Adapters`.
public struct ScannerAdapter: Hashable, Sendable {
    public var name: String
    public var address: String
    public var powered: Bool
}

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
