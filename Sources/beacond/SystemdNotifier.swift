import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// sd_notify(3) without libsystemd: a datagram to `$NOTIFY_SOCKET` (READY=1, RELOADING=1, STOPPING=1,
/// WATCHDOG=1). Outside systemd the variable is unset and every call does nothing.
enum SystemdNotifier {
    static func notify(_ state: String) {
        guard let path = ProcessInfo.processInfo.environment["NOTIFY_SOCKET"], !path.isEmpty else { return }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        // A leading '@' names a socket in the abstract namespace: the first byte becomes NUL.
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        _ = state.withCString { text in
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                    sendto(fd, text, strlen(text), Int32(MSG_NOSIGNAL), socketAddress, length)
                }
            }
        }
    }

    /// Half of `$WATCHDOG_USEC` (systemd's advice), when the unit sets WatchdogSec= and this is the watched process.
    static var watchdogInterval: Duration? {
        let environment = ProcessInfo.processInfo.environment
        guard let text = environment["WATCHDOG_USEC"], let microseconds = Int64(text), microseconds > 0 else { return nil }
        if let pid = environment["WATCHDOG_PID"], pid != String(getpid()) { return nil }
        return .microseconds(microseconds / 2)
    }
}
