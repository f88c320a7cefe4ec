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
            let stream = try CaptureStream(path: path)
            // The first block now: a file that is not a capture is refused at start, as before.
            batch = try stream.nextBatch() ?? ([], [])
            self.stream = stream
        } catch {
            throw ScannerError("cannot replay \(error). Fix: point --scanner replay:PATH at a btsnoop, pcap, pcapng or hex-lines capture")
        }
        self.loop = loop
        self.status = status
        nextRecord = 0
        played = 0
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

    /// The next record to play, reading the next block when this one is done; nil at the end of the capture.
    private func nextRecordToPlay() -> CaptureRecord? {
        while nextRecord >= batch.records.count {
            guard let stream else { return nil }
            do {
                guard let next = try stream.nextBatch() else { return nil }
                batch = next
                nextRecord = 0
            } catch {
                // Damaged further on: what was played stays played; the replay ends here, and says why.
                status?(.scanning("stopped playing \(path): \(error)"))
                return nil
            }
        }
        return batch.records[nextRecord]
    }

    private func scheduleNext(deliver: @escaping (ScannerInput) -> Void) {
        timer = nil
        guard let loop, stream != nil else { return }
        guard let record = nextRecordToPlay() else {
            stream = nil
            batch = ([], [])
            finished?(played)
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
            if record.packet != .other { deliver(.packet(record.packet, Array(self.batch.bytes[record.payload]))) }
            self.scheduleNext(deliver: deliver)
        }
    }
}
