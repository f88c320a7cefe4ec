import CDBus
import MainLoopKit

/// One connection's libdbus watches and timeouts as `MainLoop` descriptors and timers: which loop source stands for
/// which watch or timeout, and the timeout being handled now.
///
/// A class, not a value in the server: libdbus calls back into it (through `DBusObjectServer`'s callbacks) while one
/// of its own timers runs `dbus_timeout_handle`, so no access to its state may span that call. Use it only on the
/// loop thread.
final class DBusLoopSources {
    private let loop: MainLoop
    private var watches: [UInt: MainLoop.SourceID] = [:]
    private var timeouts: [UInt: MainLoop.SourceID] = [:]
    /// The timeout whose handler runs now, and whether libdbus removed it meanwhile.
    private var handlingTimeout: (key: UInt, removed: Bool)?

    init(loop: MainLoop) {
        self.loop = loop
    }

    /// Takes every descriptor and timer off the loop (the server is going away).
    func removeAll() {
        for id in watches.values { loop.removeDescriptor(id) }
        for id in timeouts.values { loop.cancelTimer(id) }
    }

    /// A watch's or timeout's address, as the key of its loop source.
    private func key(_ pointer: OpaquePointer) -> UInt { UInt(bitPattern: Int(bitPattern: pointer)) }

    func addWatch(_ watch: OpaquePointer) {
        let fd = dbus_watch_get_unix_fd(watch)
        let id = loop.addDescriptor(fd, events: Self.events(of: watch), enabled: dbus_watch_get_enabled(watch) != 0) { events in
            var flags: UInt32 = 0
            if events.contains(.readable) { flags |= DBUS_WATCH_READABLE.rawValue }
            if events.contains(.writable) { flags |= DBUS_WATCH_WRITABLE.rawValue }
            if events.contains(.hangUp) { flags |= DBUS_WATCH_HANGUP.rawValue }
            if events.contains(.error) || events.contains(.invalid) { flags |= DBUS_WATCH_ERROR.rawValue }
            _ = dbus_watch_handle(watch, flags)
        }
        watches[key(watch)] = id
    }

    func removeWatch(_ watch: OpaquePointer) {
        if let id = watches.removeValue(forKey: key(watch)) { loop.removeDescriptor(id) }
    }

    func toggleWatch(_ watch: OpaquePointer) {
        guard let id = watches[key(watch)] else { return }
        loop.updateDescriptor(id, events: Self.events(of: watch), enabled: dbus_watch_get_enabled(watch) != 0)
    }

    private static func events(of watch: OpaquePointer) -> MainLoop.Events {
        let flags = dbus_watch_get_flags(watch)
        var events: MainLoop.Events = []
        if flags & DBUS_WATCH_READABLE.rawValue != 0 { events.insert(.readable) }
        if flags & DBUS_WATCH_WRITABLE.rawValue != 0 { events.insert(.writable) }
        return events
    }

    func addTimeout(_ timeout: OpaquePointer) {
        guard dbus_timeout_get_enabled(timeout) != 0 else { return }
        let interval = Duration.milliseconds(Int64(dbus_timeout_get_interval(timeout)))
        let keyValue = key(timeout)
        timeouts[keyValue] = loop.schedule(at: .now + interval) { [weak self] in
            guard let self else { return }
            self.timeouts[keyValue] = nil
            self.handlingTimeout = (keyValue, removed: false)
            _ = dbus_timeout_handle(timeout)
            let removed = self.handlingTimeout?.removed ?? true
            self.handlingTimeout = nil
            // libdbus timeouts repeat until removed or disabled. A timeout removed while it was being handled may
            // already be freed: its pointer is not touched again.
            guard !removed, self.timeouts[keyValue] == nil, dbus_timeout_get_enabled(timeout) != 0 else { return }
            self.addTimeout(timeout)
        }
    }

    func removeTimeout(_ timeout: OpaquePointer) {
        if handlingTimeout?.key == key(timeout) { handlingTimeout?.removed = true }
        if let id = timeouts.removeValue(forKey: key(timeout)) { loop.cancelTimer(id) }
    }

    func toggleTimeout(_ timeout: OpaquePointer) {
        removeTimeout(timeout)
        addTimeout(timeout)
    }
}
