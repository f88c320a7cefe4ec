public import MainLoopKit
import BeacondCore
#if canImport(Glibc)
    import Glibc
#endif

/// Tells the daemon at once when its state database is deleted or moved (with or without its directory), so it
/// can write its state to a new file before anything else is lost, without polling: inotify on the directory.
/// (The database file's own IN_DELETE_SELF would never fire: SQLite keeps the unlinked file open.)
public final class StateDirectoryWatch {
    private var descriptor: Int32 = -1
    private var source: MainLoop.SourceID?
    private weak var loop: MainLoop?

    /// Watches `directory`; `changed` runs on the loop after any deletion or move in or of it. A directory that
    /// cannot be watched (no inotify) is not an error: the daemon still checks the file before every write.
    public init(directory: String, loop: MainLoop, changed: @escaping () -> Void) {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { return }
        let mask = UInt32(IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF)
        guard inotify_add_watch(fd, directory, mask) >= 0 else {
            close(fd)
            return
        }
        descriptor = fd
        self.loop = loop
        source = loop.addDescriptor(fd, events: .readable) { [weak self] _ in
            guard let self else { return }
            var buffer = [UInt8](repeating: 0, count: 4096)
            while read(self.descriptor, &buffer, buffer.count) > 0 {}
            changed()
        }
    }

    public func stop() {
        if let source { loop?.removeDescriptor(source) }
        source = nil
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
    }

    deinit { stop() }
}
