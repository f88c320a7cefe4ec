public import BeaconKit

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

    public init(name: String, address: String, powered: Bool) {
        self.name = name
        self.address = address
        self.powered = powered
    }
}
