import CBlueZ
import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// Why the HCI socket could not be used, with the errno and the fix.
public struct HCISocketError: Error, Hashable, Sendable, CustomStringConvertible {
    public var operation: String
    public var errno: Int32
    public var device: String

    public var description: String {
        let reason = String(cString: strerror(errno))
        switch errno {
        case EPERM, EACCES:
            return "\(operation) on \(device): \(reason). Reading advertising reports from an HCI socket needs "
                + "CAP_NET_RAW (beacond.service grants it); without it use --scanner bluez"
        case ENODEV:
            return "\(operation) on \(device): \(reason) (no such adapter, or it was removed)"
        case EAFNOSUPPORT:
            return "\(operation) on \(device): \(reason): this kernel has no Bluetooth support"
        default:
            return "\(operation) on \(device): \(reason)"
        }
    }
}

/// A raw HCI socket on one controller that receives LE meta events (advertising reports) only. It listens
/// beside bluetoothd: a raw socket sees the controller's events without taking the controller, so bluetoothd
/// and its other clients keep working (docs/scanning.md).
public final class HCISocket {
    public let descriptor: Int32
    public let device: String

    /// `hciN` → N, via libbluetooth (nil when the name is not an adapter's).
    public static func deviceIndex(named name: String) -> Int32? {
        let index = hci_devid(name)
        return index >= 0 ? index : nil
    }

    public init(deviceIndex: Int32) throws(HCISocketError) {
        device = "hci\(deviceIndex)"
        let fd = hci_open_dev(deviceIndex)
        guard fd >= 0 else { throw HCISocketError(operation: "opening an HCI socket", errno: errno, device: device) }
        var filter = hci_filter()
        hci_filter_clear(&filter)
        hci_filter_set_ptype(Int32(HCI_EVENT_PKT), &filter)
        hci_filter_set_event(Int32(EVT_LE_META_EVENT), &filter)
        let set = setsockopt(fd, Int32(SOL_HCI), Int32(HCI_FILTER), &filter, socklen_t(MemoryLayout<hci_filter>.size))
        guard set == 0 else {
            let error = HCISocketError(operation: "setting the HCI event filter", errno: errno, device: device)
            close(fd)
            throw error
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        descriptor = fd
    }

    deinit {
        close(descriptor)
    }

    /// Reads every packet waiting and hands each HCI event (without the H4 type byte) to `body`. Returns
    /// normally when nothing more is waiting; throws when the socket failed (the adapter went away).
    public func readEvents(_ body: ([UInt8]) -> Void) throws(HCISocketError) {
        var buffer = [UInt8](repeating: 0, count: Int(HCI_MAX_EVENT_SIZE) + 1)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            if count > 1, buffer[0] == UInt8(HCI_EVENT_PKT) {
                body(Array(buffer[1..<count]))
                continue
            }
            if count > 0 { continue } // not an event: the filter should not let it through; ignore it
            if count == 0 { throw HCISocketError(operation: "reading", errno: ENODEV, device: device) }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { return }
            throw HCISocketError(operation: "reading", errno: errno, device: device)
        }
    }

    /// Whether this process may read advertising reports from an HCI socket: CAP_NET_RAW in its effective set.
    public static var hasRawCapability: Bool {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return getuid() == 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("CapEff:") {
            let hex = line.dropFirst("CapEff:".count).trimmingCharacters(in: .whitespaces)
            guard let mask = UInt64(hex, radix: 16) else { return false }
            return mask & (1 << 13) != 0 // CAP_NET_RAW
        }
        return false
    }
}
