import BeaconKit
import Captures
import Foundation
public import MainLoopKit
public import BeacondCore
#if canImport(Glibc)
    import Glibc
#endif

/// `replay:PATH`: a capture (btsnoop, pcap, pcapng, hex lines) played in real time through the daemon, as
/// if its advertisements arrived now. Records are paced by the capture's own timestamps (files without
/// them: one record per 100 ms); the replay runs once per scan session and then the scanner stays idle. The
/// capture is read a block at a time as it plays (`CaptureStream`), so its size costs no memory.
public final class ReplayScanner: BeaconScanner {
    public let path: String
    private var timer: MainLoop.SourceID?
    private weak var loop: MainLoop?
    /// The capture being played (nil once it failed or was stopped).
    private var cursor: ReplayCursor?
    private var pacer = CapturePacer(longestWait: ReplayScanner.longestWait)
    private var status: ((ScannerStatus) -> Void)?
    /// Why playing stopped, when the capture is damaged: `start`'s result if it happens before `start` returns.
    private var failure: String?
    public var finished: ((Int) -> Void)?
    static let untimedSpacing: Duration = .milliseconds(100)
    /// One silent stretch in a capture never stalls the replay longer than this.
    static let longestWait: Duration = .seconds(10)

    public init(path: String) {
        self.path = path
    }

    public var label: String { "replay:\(path)" }

    /// Throws why `path` is no capture this scanner can play (the path, what it is, the fix): what `start` checks,
    /// without starting. The daemon runs it on its `replay:` source at start and at every reload, so a capture that
    /// cannot play is refused there rather than found out once someone needs scanning.
    public static func check(path: String) throws(ScannerError) {
        _ = try open(path: path)
    }

    /// Opens the capture and reads it up to its first record to deliver. Only a regular file is opened: what it is
    /// comes from `stat`, since opening a FIFO nobody writes waits for ever and a FIFO or a device would stall the
    /// daemon's loop in every read. A capture without a record to deliver (a pcapng none of whose interfaces is
    /// Bluetooth, hex text without an H4 event) is refused, like one that cannot be read.
    private static func open(path: String) throws(ScannerError) -> ReplayCursor {
        let fix = "Fix: point replay:PATH at a btsnoop, pcap, pcapng or hex-lines capture file"
        var info = stat()
        guard stat(path, &info) == 0, access(path, R_OK) == 0 else {
            throw ScannerError("cannot replay \(path): \(String(cString: strerror(errno))). \(fix)")
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            break
        case S_IFDIR:
            throw ScannerError("cannot replay \(path): it is a directory, not a regular file. \(fix)")
        case let kind:
            throw ScannerError(
                "cannot replay \(path): it is \(ConfigurationFiles.kind(kind)), not a regular file (the daemon "
                    + "reads its capture on its main loop, which a FIFO or device would stall). \(fix); for live input, use fifo:PATH")
        }
        let cursor: ReplayCursor
        let first: CaptureRecord?
        do throws(CaptureError) {
            var opened = ReplayCursor(stream: try CaptureStream(path: path))
            first = try opened.next()
            cursor = opened
        } catch {
            throw ScannerError("cannot replay \(error). \(fix)")
        }
        guard first != nil else {
            throw ScannerError(
                "cannot replay \(path): it holds no HCI event or advertising packet to play. \(fix) of a "
                    + "Bluetooth controller")
        }
        return cursor
    }

    @discardableResult
    public func start(
        loop: MainLoop, deliver: @escaping (ScannerInput) -> Void,
        status: @escaping (ScannerStatus) -> Void
    ) throws(ScannerError) -> ScannerStatus {
        let playing = ScannerStatus.scanning("playing \(path) in real time")
        guard timer == nil else { return playing }
        cursor = try Self.open(path: path)
        self.loop = loop
        self.status = nil
        failure = nil
        pacer = CapturePacer(longestWait: Self.longestWait)
        scheduleNext(deliver: deliver)
        self.status = status
        return failure.map(ScannerStatus.failed) ?? playing
    }

    public func stop() {
        if let timer { loop?.cancelTimer(timer) }
        timer = nil
        cursor = nil
    }

    /// The next record to deliver; nil at the end of the capture, or when it is damaged further on: what was played
    /// stays played, and the scanner fails with why (the daemon starts it again later, from the beginning).
    private func nextRecordToPlay() -> CaptureRecord? {
        do {
            return try cursor?.next()
        } catch {
            failure = "stopped playing \(path): \(error)"
            status?(.failed("stopped playing \(path): \(error)"))
            cursor = nil
            return nil
        }
    }

    private func scheduleNext(deliver: @escaping (ScannerInput) -> Void) {
        timer = nil
        guard let loop, cursor != nil else { return }
        guard let record = nextRecordToPlay() else {
            if let played = cursor?.played { finished?(played) }
            cursor = nil
            return
        }
        let due: ContinuousClock.Instant
        if let stamp = record.timestamp {
            due = pacer.due(for: stamp, now: ContinuousClock.now)
        } else {
            due = ContinuousClock.now + Self.untimedSpacing
        }
        timer = loop.schedule(at: due) { [weak self] in
            guard let self, let payload = self.cursor?.bytes[record.payload] else { return }
            self.cursor?.advance()
            deliver(.packet(record.packet, Array(payload)))
            self.scheduleNext(deliver: deliver)
        }
    }
}

/// A capture read a block at a time, record by record, passing over records with nothing to deliver (commands,
/// other traffic) without waiting for their time.
private struct ReplayCursor {
    let stream: CaptureStream
    /// The block being played: its bytes, its records, and the next of them.
    private(set) var bytes: [UInt8] = []
    private var records: [CaptureRecord] = []
    private var index = 0
    /// Records delivered or passed over.
    private(set) var played = 0

    init(stream: CaptureStream) {
        self.stream = stream
    }

    /// The next record to deliver, reading the next block when this one is done; nil at the end of the capture.
    mutating func next() throws(CaptureError) -> CaptureRecord? {
        while true {
            while index < records.count, records[index].packet == .other {
                index += 1
                played += 1
            }
            if index < records.count { return records[index] }
            guard let block = try stream.nextBatch() else { return nil }
            (bytes, records) = block
            index = 0
        }
    }

    /// The record `next` returned is delivered.
    mutating func advance() {
        index += 1
        played += 1
    }
}
