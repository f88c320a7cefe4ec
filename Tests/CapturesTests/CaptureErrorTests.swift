import Captures
import Foundation
import Testing

/// Files that are not captures produce one CaptureError naming the file and the reason.
struct CaptureErrorTests {
    /// Writes `bytes` to a fresh file in the temporary directory, loads it, and removes it.
    func load(_ bytes: [UInt8], named name: String) throws -> (path: String, error: CaptureError?) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("captures-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent(name).path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: CaptureError.self) { try Capture.load(path: path) }
        return (path, error)
    }

    @Test func textFile() throws {
        let text = Array("Shopping list\n- beacons\n- batteries\n".utf8)
        let (path, error) = try load(text, named: "notes.txt")
        #expect(error?.reason == .notACapture(firstBytes: Array(text.prefix(16))))
        #expect(error?.description.hasPrefix("\(path): not a capture file: starts with 53 68 6F 70") == true)
        #expect(error?.description.contains("\"Shopping list.- \"") == true)
    }

    @Test func emptyFile() throws {
        let (path, error) = try load([], named: "empty.log")
        #expect(error?.reason == .empty)
        #expect(error?.description == "\(path): empty file (0 bytes), not a capture")
    }

    @Test func pngHeader() throws {
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D, 0x49, 0x48, 0x44, 0x52, 0, 0]
        let (path, error) = try load(png, named: "picture.png")
        #expect(error?.reason == .notACapture(firstBytes: Array(png.prefix(16))))
        #expect(error?.description.hasPrefix("\(path): not a capture file: starts with 89 50 4E 47 0D 0A 1A 0A") == true)
    }

    @Test func missingFile() {
        let error = #expect(throws: CaptureError.self) { try Capture.load(path: "/nonexistent/capture.log") }
        #expect(error?.description == "/nonexistent/capture.log: cannot read file: No such file or directory")
    }

    @Test func unsupportedDatalinksAndVersions() {
        let btsnoop = #expect(throws: CaptureError.self) {
            try Capture.parse(CaptureWriter.btsnoop(datalink: 1003, []), path: "bcsp.log")
        }
        #expect(
            btsnoop?.description == "bcsp.log: unsupported btsnoop datalink 1003; supported: "
                + "1001 (HCI unencapsulated), 1002 (HCI UART, H4), 2001 (Linux monitor, btmon -w)")
        let pcap = #expect(throws: CaptureError.self) {
            try Capture.parse(CaptureWriter.pcap(linkType: 1, nanoseconds: false, bigEndian: false, []), path: "ethernet.pcap")
        }
        #expect(
            pcap?.description == "ethernet.pcap: unsupported pcap link type 1; supported: "
                + "201 (BLUETOOTH_HCI_H4_WITH_PHDR), 256 (BLUETOOTH_LE_LL_WITH_PHDR)")
        let pcapng = #expect(throws: CaptureError.self) {
            try Capture.parse(CaptureWriter.pcapngSection(linkType: 105, bigEndian: false, resolution: nil, []), path: "wifi.pcapng")
        }
        #expect(
            pcapng?.reason
                == .unsupportedLinkType(
                    kind: "pcapng link type", found: [105],
                    supported:
                        "201 (BLUETOOTH_HCI_H4_WITH_PHDR), 256 (BLUETOOTH_LE_LL_WITH_PHDR)"))
        var version2 = CaptureWriter.btsnoop(datalink: 1002, [])
        version2[11] = 2
        let version = #expect(throws: CaptureError.self) { try Capture.parse(version2, path: "v2.log") }
        #expect(version?.description == "v2.log: unsupported btsnoop version 2")
        let truncated = #expect(throws: CaptureError.self) { try Capture.parse(Array("btsnoop\0\0\0".utf8), path: "cut.log") }
        #expect(truncated?.description == "cut.log: btsnoop file header truncated: needs 16 bytes, has 10")
    }
}
