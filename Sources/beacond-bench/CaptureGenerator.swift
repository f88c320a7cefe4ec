import ArgumentParser
import Foundation

/// `beacond-bench capture`: writes a btsnoop capture (datalink 1002, H4) of LE Advertising Reports, alternately an
/// iBeacon and another manufacturer's frame, from `--beacons` devices, 1 ms apart: the input of the replay
/// benchmark (docs/performance.md, "Replay, the whole process"). Written in 1 MiB blocks to a file or to standard
/// output, so a capture of any size can be piped into `beacond replay -` without touching the disk.
struct CaptureGenerator: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "capture",
        abstract: "Write a btsnoop capture of LE Advertising Reports (half of them iBeacons) for the replay benchmark.")

    @Option(help: "Advertising reports to write (one per record).")
    var reports = 2_000_000

    @Option(help: "Write about this many bytes instead of --reports (e.g. 10000000000 for a 10 GB stream).")
    var bytes: Int64?

    @Option(help: "Distinct advertisers (iBeacon minors and addresses).")
    var beacons = 1_000

    @Option(help: "Where to write it; - for standard output.")
    var out = "-"

    func validate() throws {
        guard reports > 0, beacons > 0, beacons <= 65_536, (bytes ?? 1) > 0 else {
            throw ValidationError("--reports, --bytes and --beacons (at most 65536) must be positive")
        }
    }

    /// btsnoop's epoch (0000-01-01) to 2026-01-01T00:00:00Z, µs.
    static let start: Int64 = 0x00DC_DDB3_0F2F_8000 + 1_767_225_600_000_000

    static func record(index: Int, beacons: Int) -> [UInt8] {
        let device = index / 2 % beacons
        let address: [UInt8] = [UInt8(device & 0xFF), UInt8(device >> 8), 0x38, 0xBF, 0xC1, 0xA4] // little-endian on the wire
        var data: [UInt8] = [0x02, 0x01, 0x06]
        if index % 2 == 0 {
            // iBeacon: Apple 4C 00, type 02, length 15, UUID, major, minor, measured power.
            data += [0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15]
            data += [0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0]
            data += [0x00, 0x01, UInt8(device >> 8), UInt8(device & 0xFF), 0xC5]
        } else {
            // Another company's manufacturer data of the same length (not an iBeacon).
            data += [0x1A, 0xFF, 0x59, 0x00] + [UInt8](repeating: UInt8(device & 0xFF), count: 23)
        }
        let rssi = UInt8(bitPattern: Int8(-40 - Int8(device % 50)))
        let report: [UInt8] = [0x02, 0x01, 0x00, 0x00] + address + [UInt8(data.count)] + data + [rssi]
        let packet: [UInt8] = [0x04, 0x3E, UInt8(report.count)] + report
        let time = start + Int64(index) * 1_000
        var header: [UInt8] = []
        for value in [UInt32(packet.count), UInt32(packet.count), 1, 0] { header += bigEndian(value) }
        header += bigEndian(UInt64(time))
        return header + packet
    }

    static func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian, Array.init)
    }

    func run() throws {
        let fd: Int32 = out == "-" ? 1 : open(out, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw ValidationError("cannot write \(out): \(String(cString: strerror(errno)))") }
        // Records repeat every 2 × beacons: made once, then copied.
        let cycle = (0..<(2 * beacons)).map { Self.record(index: $0, beacons: beacons) }
        var block: [UInt8] = Array("btsnoop\0".utf8) + Self.bigEndian(UInt32(1)) + Self.bigEndian(UInt32(1002))
        block.reserveCapacity(1 << 20 + 256)
        var written: Int64 = 0
        var index = 0
        func more() -> Bool { bytes.map { written + Int64(block.count) < $0 } ?? (index < reports) }
        while more() {
            var record = cycle[index % cycle.count]
            // The timestamp goes on: patch it in place.
            let time = Self.start + Int64(index) * 1_000
            withUnsafeBytes(of: UInt64(time).bigEndian) { stamp in
                for offset in 0..<8 { record[16 + offset] = stamp[offset] }
            }
            block += record
            index += 1
            if block.count >= 1 << 20 {
                try write(fd, &block)
                written += Int64(block.count)
                block.removeAll(keepingCapacity: true)
            }
        }
        try write(fd, &block)
        if fd != 1 { close(fd) }
        FileHandle.standardError.write(
            Data(
                "beacond-bench: wrote \(index) advertising reports (\(index / 2 + index % 2) iBeacons), \(written + Int64(block.count)) bytes\n".utf8)
        )
    }

    private func write(_ fd: Int32, _ block: inout [UInt8]) throws {
        var done = 0
        while done < block.count {
            let result = block.withUnsafeBytes { Foundation.write(fd, $0.baseAddress! + done, $0.count - done) }
            if result < 0, errno == EINTR { continue }
            guard result > 0 else { throw ValidationError("write failed: \(String(cString: strerror(errno)))") }
            done += result
        }
    }
}
