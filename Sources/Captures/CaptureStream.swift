import BeaconKit
import Foundation

/// A capture read as it arrives, in constant memory: a file, a FIFO or standard input (`-`) read in blocks of
/// `blockSize` and framed by `CaptureFramer`, each block's records handed out with the bytes they index before
/// the next block is read. A 10 GB file costs what a 1 MB one does, and `btmon -w >(beacond replay -)` sees each
/// record as soon as btmon writes it (a read returns what the pipe has).
public final class CaptureStream {
    public static let blockSize = 1 << 20

    /// The input as the caller named it (`-` for standard input).
    public let path: String
    /// Whether the input arrives as it is written (a pipe, FIFO, socket or terminal), so output should follow
    /// each block instead of waiting to fill a buffer.
    public let isLive: Bool
    private let descriptor: Int32
    private var framer: CaptureFramer
    private var buffer: [UInt8]
    /// The unframed bytes are `buffer[start..<end]`.
    private var start = 0
    private var end = 0
    private var atEnd = false
    public private(set) var recordCount = 0

    public var format: CaptureFormat? { framer.format }
    public var malformedRecords: Int { framer.malformedRecords }
    public var malformedDetails: [String] { framer.malformedDetails }
    /// How to name the input in messages.
    public var displayName: String { path == "-" ? "standard input" : path }

    /// What an input is, checked without opening it (opening a FIFO waits for its writer): standard input, FIFOs,
    /// sockets and devices are live.
    public enum Kind: Sendable { case regularFile, live }

    /// Whether `path` (`-`: standard input) can be read, without opening it: a missing or unreadable path or a
    /// directory throws `unreadable` with the system's reason.
    @discardableResult
    public static func check(path: String) throws(CaptureError) -> Kind {
        guard path != "-" else { return .live }
        var status = stat()
        guard stat(path, &status) == 0 else { throw CaptureError(path: path, reason: .unreadable(String(cString: strerror(errno)))) }
        guard status.st_mode & S_IFMT != S_IFDIR else { throw CaptureError(path: path, reason: .unreadable(String(cString: strerror(EISDIR)))) }
        guard access(path, R_OK) == 0 else { throw CaptureError(path: path, reason: .unreadable(String(cString: strerror(errno)))) }
        return status.st_mode & S_IFMT == S_IFREG ? .regularFile : .live
    }

    /// Opens `path` (`-`: standard input). Throws `unreadable` with the system's reason. The buffer is made at the
    /// first read, so an input opened and not read yet costs a descriptor only.
    public init(path: String) throws(CaptureError) {
        self.path = path
        let descriptor = path == "-" ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw CaptureError(path: path, reason: .unreadable(String(cString: strerror(errno))))
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let reason = String(cString: strerror(errno))
            if descriptor != STDIN_FILENO { close(descriptor) }
            throw CaptureError(path: path, reason: .unreadable(reason))
        }
        let kind = status.st_mode & S_IFMT
        guard kind != S_IFDIR else {
            if descriptor != STDIN_FILENO { close(descriptor) }
            throw CaptureError(path: path, reason: .unreadable(String(cString: strerror(EISDIR))))
        }
        self.descriptor = descriptor
        isLive = kind == S_IFIFO || kind == S_IFSOCK || kind == S_IFCHR
        framer = CaptureFramer(totalSize: kind == S_IFREG ? Int(status.st_size) : nil)
        buffer = []
    }

    deinit {
        if descriptor != STDIN_FILENO { close(descriptor) }
    }

    /// Reads to the end of the input. `body` gets each block's records, in order, with the bytes their payloads
    /// index (valid only during the call). Throws when the input is no capture, or cannot be read.
    public func forEachBatch(_ body: (Span<UInt8>, [CaptureRecord]) -> Void) throws(CaptureError) {
        while !finished {
            let used = try frameBlock()
            if !framer.records.isEmpty {
                if framer.recordsIndexDecoded {
                    body(framer.decoded.span, framer.records)
                } else {
                    body(buffer.span.extracting(start..<end), framer.records)
                }
            }
            start += used
        }
    }

    /// The next block's records with a copy of the bytes they index (for a reader that takes records one at a time
    /// on a timer, the daemon's `replay:` scanner), or nil at the end.
    public func nextBatch() throws(CaptureError) -> (bytes: [UInt8], records: [CaptureRecord])? {
        while !finished {
            let used = try frameBlock()
            defer { start += used }
            guard !framer.records.isEmpty else { continue }
            let bytes = framer.recordsIndexDecoded ? framer.decoded : Array(buffer[start..<end])
            return (bytes, framer.records)
        }
        return nil
    }

    /// Whether the input has been read and framed to its end.
    private var finished = false

    /// Reads a block (unless the input has ended) and frames what is unframed: the records are in `framer`,
    /// indexing `buffer[start..<end]` or `framer.decoded`. Returns how many bytes were framed.
    private func frameBlock() throws(CaptureError) -> Int {
        // Framing stopped at a record it cannot frame: nothing after it can be, so the rest is not read (a live
        // pipe ends here and its damage is reported now, not at its end). The last call runs the end's checks.
        if framer.isStopped { atEnd = true }
        if !atEnd { try readBlock() }
        let used: Int
        do throws(CaptureError.Reason) {
            used = try framer.frame(buffer.span.extracting(start..<end), atEnd: atEnd)
        } catch {
            throw CaptureError(path: displayName, reason: error)
        }
        recordCount += framer.records.count
        if atEnd { finished = true }
        return used
    }

    /// Appends what one read returns (up to a block), making room first: the unframed bytes move to the front,
    /// and the buffer grows only while one record is longer than what it holds (at most
    /// `CaptureFramer.largestRecord`, whose framer stops there).
    private func readBlock() throws(CaptureError) {
        if buffer.isEmpty { buffer = [UInt8](repeating: 0, count: 2 * Self.blockSize) }
        if buffer.count - end < Self.blockSize {
            if start > 0 {
                let pending = end - start
                for index in 0..<pending { buffer[index] = buffer[start + index] }
                start = 0
                end = pending
            }
            if buffer.count - end < Self.blockSize {
                buffer.append(contentsOf: repeatElement(0, count: buffer.count))
            }
        }
        while true {
            let count = buffer.count - end
            let read = buffer.withUnsafeMutableBytes { bytes in
                // Sound: `end + count == bytes.count`, so the kernel writes only inside the buffer.
                Foundation.read(descriptor, bytes.baseAddress! + end, count)
            }
            if read > 0 {
                end += read
                return
            }
            if read == 0 {
                atEnd = true
                return
            }
            if errno == EINTR { continue }
            throw CaptureError(path: displayName, reason: .unreadable(String(cString: strerror(errno))))
        }
    }
}
