@testable import BeacondService
@testable import BeacondCore
import BeaconKit
import Captures
import Foundation
import MainLoopKit
import Testing

/// `replay:PATH` reads its capture a block at a time as it plays: every record, in order, across blocks.
@Suite("replay scanner")
struct ReplayScannerTests {
    /// A btsnoop (datalink 1002) capture of `count` LE Advertising Report events, 1 µs apart: 69 bytes a record.
    static func capture(records count: Int) -> [UInt8] {
        func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }
        var bytes = Array("btsnoop\0".utf8) + bigEndian(UInt32(1)) + bigEndian(UInt32(1002))
        for index in 0..<count {
            let data: [UInt8] =
                [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15] + [UInt8](repeating: 0xE2, count: 16)
                + [0x00, 0x01, UInt8(index >> 8 & 0xFF), UInt8(index & 0xFF), 0xC5]
            let report: [UInt8] =
                [0x02, 0x01, 0x00, 0x00, UInt8(index & 0xFF), 0x11, 0x22, 0x33, 0x44, 0x55, UInt8(data.count)]
                + data + [0xC0]
            let packet: [UInt8] = [0x04, 0x3E, UInt8(report.count)] + report
            bytes += bigEndian(UInt32(packet.count)) + bigEndian(UInt32(packet.count)) + bigEndian(UInt32(1)) + bigEndian(UInt32(0))
            bytes += bigEndian(UInt64(0x00DC_DDB3_0F2F_8000 + 1_700_000_000_000_000 + index))
            bytes += packet
        }
        return bytes
    }

    /// A capture of three advertisements in `directory`.
    static func playable(in directory: ConfigurationDirectory) throws -> String {
        let path = directory.path + "/capture.btsnoop"
        try Data(capture(records: 3)).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A path in `directory` that cannot be played: `missing`, `empty`, `garbage` (binary, no magic number),
    /// `directory`, `fifo` (nobody writes it), or an absolute path given as is (`/dev/zero`).
    static func unplayable(_ kind: String, in directory: ConfigurationDirectory) throws -> String {
        let path = kind.hasPrefix("/") ? kind : directory.path + "/capture-" + kind
        switch kind {
        case "empty": try Data().write(to: URL(fileURLWithPath: path))
        case "garbage": try Data((0..<1024).map { UInt8($0 & 0xFF) }).write(to: URL(fileURLWithPath: path))
        case "directory": try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        case "fifo": #expect(mkfifo(path, 0o600) == 0)
        default: break
        }
        return path
    }

    @Test("a capture of several blocks plays every record in order, then says how many")
    func playsEveryRecordAcrossBlocks() throws {
        let bytes = Self.capture(records: 40_000) // 2.8 MB: three blocks of CaptureStream
        #expect(bytes.count > 2 * CaptureStream.blockSize)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("beacond-replay-scanner-\(UUID()).btsnoop")
        try Data(bytes).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let loop = try MainLoop()
        let scanner = ReplayScanner(path: url.path)
        var delivered: [[UInt8]] = []
        var played = -1
        scanner.finished = { count in
            played = count
            loop.stop()
        }
        _ = loop.schedule(at: .now + .seconds(60)) { loop.stop() }
        try scanner.start(
            loop: loop,
            deliver: { input in
                if case .packet(_, let payload) = input { delivered.append(payload) }
            }, status: { _ in })
        loop.run()
        let whole = try Capture.load(path: url.path)
        #expect(played == 40_000 && whole.records.count == 40_000)
        #expect(delivered == whole.records.map { Array(whole.bytes[$0.payload]) })
    }

    @Test("a file that is not a capture is refused at start, with the fix")
    func notACaptureIsRefusedAtStart() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("beacond-replay-scanner-\(UUID()).txt")
        try Data("hello\n".utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let loop = try MainLoop()
        #expect(throws: ScannerError.self) {
            try ReplayScanner(path: url.path).start(loop: loop, deliver: { _ in }, status: { _ in })
        }
    }

    @Test("a FIFO is refused (it would stall the daemon's loop), and so is a capture with nothing to deliver")
    func refusesWhatItCannotPlay() throws {
        let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("beacond-replay-fifo-\(UUID())").path
        #expect(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        let loop = try MainLoop()
        do {
            try ReplayScanner(path: fifo).start(loop: loop, deliver: { _ in }, status: { _ in })
            Issue.record("a FIFO was accepted")
        } catch {
            #expect(error.message.contains("not a regular file"))
        }
        // A btsnoop of HCI commands only (flags 2: a command sent): nothing for the decoder.
        func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }
        var commands = Array("btsnoop\0".utf8) + bigEndian(UInt32(1)) + bigEndian(UInt32(1002))
        for _ in 0..<3 {
            let packet: [UInt8] = [0x01, 0x03, 0x0C, 0x00]
            commands +=
                bigEndian(UInt32(4)) + bigEndian(UInt32(4)) + bigEndian(UInt32(2)) + bigEndian(UInt32(0))
                + bigEndian(UInt64(0x00DC_DDB3_0F2F_8000)) + packet
        }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("beacond-replay-commands-\(UUID()).btsnoop")
        try Data(commands).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        do {
            try ReplayScanner(path: url.path).start(loop: loop, deliver: { _ in }, status: { _ in })
            Issue.record("a capture with nothing to deliver was accepted")
        } catch {
            #expect(error.message.contains("holds no HCI event or advertising packet"))
        }
    }

    /// Issue 21: the daemon took any `replay:` path and started "idle", reading the capture only once someone
    /// monitored. The check it now makes at start and at every reload names the path, says what it is and how to
    /// fix it; a FIFO or a device is told from `stat` alone (opening a FIFO nobody writes would wait for ever).
    @Test(
        "check(path:) refuses what cannot be played, naming the path, what it is and the fix",
        .timeLimit(.minutes(1)),
        arguments: [
            ("missing", "No such file or directory"),
            ("empty", "empty file (0 bytes), not a capture"),
            ("garbage", "not a capture file"),
            ("directory", "it is a directory, not a regular file"),
            ("/dev/zero", "it is a character device, not a regular file"),
            ("fifo", "it is a FIFO (named pipe), not a regular file"),
        ])
    func checkRefusesWhatCannotPlay(_ kind: String, _ what: String) throws {
        let directory = try ConfigurationDirectory()
        let path = try Self.unplayable(kind, in: directory)
        do {
            try ReplayScanner.check(path: path)
            Issue.record("replay:\(path) (\(kind)) passed the check")
        } catch {
            #expect(error.message.hasPrefix("cannot replay \(path): "), "\(error)")
            #expect(error.message.contains(what), "\(error)")
            #expect(error.message.contains("Fix: point replay:PATH at"), "\(error)")
        }
    }

    @Test("check(path:) takes a capture with something to play")
    func checkTakesACapture() throws {
        let directory = try ConfigurationDirectory()
        try ReplayScanner.check(path: try Self.playable(in: directory))
    }
}
