import Captures
public import MainLoopKit
import Foundation
public import BeacondCore
#if canImport(Glibc)
    import Glibc
#endif

/// `fifo:PATH`: hex HCI event lines (replay's text format: `04 3e 2a 02 …`, one H4 event per line, `#`
/// comments) read live from a named pipe and stamped with the daemon's clock. Tests and demos drive the
/// daemon with it: `echo "04 3e …" > PATH` (docs/daemon.md has a whole line).
///
/// The FIFO is made (mode 0660) when beacond starts and reloads (`prepare`), and again here if it went missing.
/// It is opened read-write: with only a read end, every writer that closes would leave `poll` reporting hang-up
/// forever, a busy loop; holding a write end ourselves keeps the pipe open between writers and the loop asleep.
public final class FIFOScanner: BeaconScanner {
    public let path: String
    private var descriptor: Int32 = -1
    private var source: MainLoop.SourceID?
    private weak var loop: MainLoop?
    private var pending: [UInt8] = []
    private var lineNumber = 0
    /// A line longer than this is garbage (an HCI event is at most 258 bytes, 775 characters as spaced hex).
    static let longestLine = 4096
    public private(set) var malformedLines = 0
    private var dropLog = DroppedLineLog()
    public var onMalformedLine: ((Int, String) -> Void)?

    public init(path: String) {
        self.path = path
    }

    public var label: String { "fifo:\(path)" }

    @discardableResult
    public func start(
        loop: MainLoop, deliver: @escaping (ScannerInput) -> Void,
        status: @escaping (ScannerStatus) -> Void
    ) throws(ScannerError) -> ScannerStatus {
        let reading = ScannerStatus.scanning("reading hex HCI event lines from \(path)")
        guard descriptor < 0 else { return reading }
        do throws(Unprepared) {
            try Self.prepare(path: path)
        } catch {
            switch error {
            case .inTheWay(let refusal), .cannotMake(let refusal): throw refusal
            }
        }
        let fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            throw ScannerError("cannot open the FIFO \(path): \(String(cString: strerror(errno)))")
        }
        descriptor = fd
        self.loop = loop
        pending.removeAll()
        source = loop.addDescriptor(fd, events: .readable) { [weak self] _ in
            self?.readAvailable(deliver: deliver, failed: { status(.failed($0.message)) })
        }
        return reading
    }

    /// Why `prepare` left no FIFO at the path.
    public enum Unprepared: Error {
        /// Something else is there (a regular file an `echo` made before the FIFO existed, a directory, a device):
        /// a configuration error, which no retry mends.
        case inTheWay(ScannerError)
        /// It cannot be made (its directory missing, no permission): scanning fails and is retried, and finds it
        /// once the directory is there.
        case cannotMake(ScannerError)
    }

    /// Makes the FIFO (mode 0660, whatever the umask) where nothing is, or checks that what is there is one. beacond
    /// calls it at start and at each reload, not only when scanning starts, so a writer finds the FIFO before anyone
    /// scans: an `echo` to a path that is not there makes a regular file. Without `create` (a configuration that is
    /// rejected anyway) it only checks what is there: a rejected reload leaves the system as it was.
    public static func prepare(path: String, create: Bool = true) throws(Unprepared) {
        var info = stat()
        if stat(path, &info) != 0 {
            guard errno == ENOENT else {
                throw .cannotMake(ScannerError("cannot use \(path): \(String(cString: strerror(errno)))"))
            }
            guard create else { return }
            if mkfifo(path, 0o660) == 0 {
                chmod(path, 0o660)
                return
            }
            guard errno == EEXIST, stat(path, &info) == 0 else {
                throw .cannotMake(
                    ScannerError(
                        "cannot create the FIFO \(path): \(String(cString: strerror(errno))). "
                            + "Fix: create it with mkfifo \(path), or choose a writable path"))
            }
        }
        guard info.st_mode & S_IFMT != S_IFIFO else { return }
        let leftover =
            info.st_mode & S_IFMT == S_IFREG
            ? "delete it if it is a leftover (an echo to the path before beacond made the FIFO writes a regular file), "
                + "and beacond makes the FIFO at start or reload; or " : ""
        throw .inTheWay(
            ScannerError(
                "\(path) is \(ConfigurationFiles.kind(info.st_mode)), not a FIFO. Fix: \(leftover)point fifo:PATH at a "
                    + "FIFO (mkfifo PATH), or at a free path where beacond creates one"))
    }

    public func stop() {
        if let source { loop?.removeDescriptor(source) }
        source = nil
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
        pending.removeAll()
    }

    deinit { stop() }

    private func readAvailable(deliver: (ScannerInput) -> Void, failed: (ScannerError) -> Void) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while descriptor >= 0 {
            let count = read(descriptor, &buffer, buffer.count)
            if count > 0 {
                consume(buffer[0..<count], deliver: deliver)
                continue
            }
            if count < 0, errno == EINTR { continue }
            if count < 0, errno != EAGAIN, errno != EWOULDBLOCK {
                let error = ScannerError("reading \(path) failed: \(String(cString: strerror(errno)))")
                stop()
                failed(error)
            }
            return
        }
    }

    private func consume(_ bytes: ArraySlice<UInt8>, deliver: (ScannerInput) -> Void) {
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                let line = pending
                pending.removeAll(keepingCapacity: true)
                lineNumber += 1
                handle(line: line, deliver: deliver)
            } else if pending.count <= Self.longestLine {
                pending.append(byte)
            }
        }
    }

    private func handle(line: [UInt8], deliver: (ScannerInput) -> Void) {
        if line.count > Self.longestLine {
            reject("longer than \(Self.longestLine) characters (an HCI event is at most 775 as spaced hex)")
            return
        }
        switch HexEventLine.parse(line) {
        case .skip: return
        case .event(let event): deliver(.packet(.hciEvent, event))
        case .malformed(let reason): reject(reason)
        }
    }

    /// Every dropped line is counted; `dropLog` decides which get a log line (a flood cannot flood the journal).
    private func reject(_ reason: String) {
        malformedLines += 1
        if let text = dropLog.record(reason, at: .now) { onMalformedLine?(lineNumber, text) }
    }
}
