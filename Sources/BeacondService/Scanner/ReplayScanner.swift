import BeaconKit
import Captures
public import MainLoopKit

/// `replay:PATH`: a capture (btsnoop, pcap, pcapng, hex lines) played in real time through the daemon, as
/// if its advertisements arrived now. Records are paced by the capture's own timestamps (files without
/// them: one record per 100 ms); the replay runs once per scan session and then the scanner stays idle. The
/// capture is read a block at a time as it plays (`CaptureStream`), so its size costs no memory.
public final class ReplayScanner: BeaconScanner {
    public let path: String
    private var timer: MainLoop.SourceID?
    private weak var loop: MainLoop?
    private var stream: CaptureStream?
    /// The block being played, and the next of its records.
    private var batch: (bytes: [UInt8], records: [CaptureRecord]) = ([], [])
    private var nextRecord = 0
    private var played = 0
    private var pacer = CapturePacer(longestWait: ReplayScanner.longestWait)
    private var status: ((ScannerStatus) -> Void)?
    /// Why the capture could not be read on (then `stream` is nil).
    private var failure: String?
    public var finished: ((Int) -> Void)?
    static let untimedSpacing: Duration = .milliseconds(100)
    /// One silent stretch in a capture never stalls the replay longer than this.
    static let longestWait: Duration = .seconds(10)

    public init(path: String) {
        self.path = path
    }

    public var label: String { "replay:\(path)" }

    public func start(loop: MainLoop, deliver: @escaping (ScannerInput) -> Void,
                      status: @escaping (ScannerStatus) -> Void) throws(ScannerError) {
        guard timer == nil else { return }
        do {
            // A FIFO or a device would block the daemon's loop in open and read: a file only.
            guard try CaptureStream.check(path: path) == .regularFile else {
                throw ScannerError("cannot replay \(path): not a regular file (the daemon reads it on its main loop, so a FIFO "
                    + "or device would stall it). Fix: point --scanner replay:PATH at a capture file, or use fifo:PATH for live input")
            }
            let stream = try CaptureStream(path: path)
            self.stream = stream
            failure = nil
            batch = try stream.nextBatch() ?? ([], [])
            nextRecord = 0
            played = 0
            // Up to the first record there is something to deliver: a capture without one (a pcapng none of whose
            // interfaces is Bluetooth, hex text without an H4 event) is refused here, at start.
            let first = nextRecordToPlay()
            if let failure { throw ScannerError("cannot replay \(failure). Fix: point --scanner replay:PATH at a btsnoop, pcap, pcapng or hex-lines capture") }
            guard first != nil else {
                throw ScannerError("cannot replay \(path): it holds no HCI event or advertising packet to play. Fix: point "
                    + "--scanner replay:PATH at a btsnoop, pcap, pcapng or hex-lines capture of a Bluetooth controller")
            }
        } catch let error as ScannerError {
            stream = nil
            throw error
        } catch {
            stream = nil
            throw ScannerError("cannot replay \(error). Fix: point --scanner replay:PATH at a btsnoop, pcap, pcapng or hex-lines capture")
        }
        self.loop = loop
        self.status = status
        pacer = CapturePacer(longestWait: Self.longestWait)
        scheduleNext(deliver: deliver)
        status(.scanning("playing \(path) in real time"))
    }

    public func stop() {
        if let timer { loop?.cancelTimer(timer) }
        timer = nil
        stream = nil
        batch = ([], [])
    }

    /// The next record to deliver, reading the next block when this one is done; nil at the end of the capture.
    /// Records with nothing to deliver (commands, other traffic) are passed over without waiting for their time.
    private func nextRecordToPlay() -> CaptureRecord? {
        while true {
            while nextRecord < batch.records.count, batch.records[nextRecord].packet == .other {
                nextRecord += 1
                played += 1
            }
            if nextRecord < batch.records.count { return batch.records[nextRecord] }
            guard let stream else { return nil }
            do {
                guard let next = try stream.nextBatch() else { return nil }
                batch = next
                nextRecord = 0
            } catch {
                // Damaged further on: what was played stays played; the scanner fails with why (the daemon
                // starts it again later, from the beginning).
                failure = "\(error)"
                status?(.failed("stopped playing \(path): \(error)"))
                self.stream = nil
                return nil
            }
        }
    }

    private func scheduleNext(deliver: @escaping (ScannerInput) -> Void) {
        timer = nil
        guard let loop, stream != nil else { return }
        guard let record = nextRecordToPlay() else {
            let failed = stream == nil
            stream = nil
            batch = ([], [])
            if !failed { finished?(played) }
            return
        }
        let due: ContinuousClock.Instant
        if let stamp = record.timestamp {
            due = pacer.due(for: stamp, now: ContinuousClock.now)
        } else {
            due = ContinuousClock.now + Self.untimedSpacing
        }
        timer = loop.schedule(at: due) { [weak self] in
            guard let self, self.stream != nil else { return }
            self.nextRecord += 1
            self.played += 1
            deliver(.packet(record.packet, Array(self.batch.bytes[record.payload])))
            self.scheduleNext(deliver: deliver)
        }
    }
}
