import BeaconKit
import Captures
public import MainLoopKit

/// `replay:PATH`: a capture (btsnoop, pcap, pcapng, hex lines) played in real time through the daemon, as
/// if its advertisements arrived now. Records are paced by the capture's own timestamps (files without
/// them: one record per 100 ms); the replay runs once per scan session and then the scanner stays idle.
public final class ReplayScanner: BeaconScanner {
    public let path: String
    private var timer: MainLoop.SourceID?
    private weak var loop: MainLoop?
    private var capture: Capture?
    private var nextRecord = 0
    private var pacer = CapturePacer(longestWait: ReplayScanner.longestWait)
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
            capture = try Capture.load(path: path)
        } catch {
            throw ScannerError("cannot replay \(error). Fix: point --scanner replay:PATH at a btsnoop, pcap, pcapng or hex-lines capture")
        }
        self.loop = loop
        nextRecord = 0
        pacer = CapturePacer(longestWait: Self.longestWait)
        scheduleNext(deliver: deliver)
        status(.scanning("playing \(path) in real time"))
    }

    public func stop() {
        if let timer { loop?.cancelTimer(timer) }
        timer = nil
        capture = nil
    }

    private func scheduleNext(deliver: @escaping (ScannerInput) -> Void) {
        timer = nil
        guard let capture, let loop else { return }
        guard nextRecord < capture.records.count else {
            finished?(capture.records.count)
            return
        }
        let record = capture.records[nextRecord]
        let due: ContinuousClock.Instant
        if let stamp = record.timestamp {
            due = pacer.due(for: stamp, now: ContinuousClock.now)
        } else {
            due = ContinuousClock.now + Self.untimedSpacing
        }
        timer = loop.schedule(at: due) { [weak self] in
            guard let self, let capture = self.capture else { return }
            let record = capture.records[self.nextRecord]
            self.nextRecord += 1
            if record.packet != .other { deliver(.packet(record.packet, Array(capture.bytes[record.payload]))) }
            self.scheduleNext(deliver: deliver)
        }
    }
}
