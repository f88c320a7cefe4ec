import BeacondService
import BeacondCore
import Testing

@Suite("scanner source")
struct ScannerSpecTests {
    @Test(
        "every form parses and prints back as written",
        arguments: [
            ("auto", ScannerSpec.auto),
            ("hci", .hci(adapter: nil)),
            ("hci:hci0", .hci(adapter: "hci0")),
            ("bluez", .bluez(adapter: nil)),
            ("bluez:hci1", .bluez(adapter: "hci1")),
            ("replay:/var/tmp/capture.btsnoop", .replay(path: "/var/tmp/capture.btsnoop")),
            ("replay:relative/file.pcap", .replay(path: "relative/file.pcap")),
            ("fifo:/run/beacond/hci.fifo", .fifo(path: "/run/beacond/hci.fifo")),
            ("fifo:/path:with:colons", .fifo(path: "/path:with:colons")),
        ])
    func forms(_ text: String, _ spec: ScannerSpec) throws {
        #expect(try ScannerSpec(parsing: text) == spec)
        #expect(spec.description == text)
    }

    @Test(
        "anything else is an error naming the option and the forms",
        arguments: [
            "", "Auto", "auto:hci0", "hci:", "hci:hci", "hci:usb0", "bluez:hci0x", "replay", "replay:", "fifo:", "btmon",
        ])
    func invalid(_ text: String) {
        do {
            let spec = try ScannerSpec(parsing: text)
            Issue.record("\"\(text)\" parsed as \(spec)")
        } catch {
            #expect(error.file == "--scanner")
            #expect(error.line == nil)
            #expect(error.description.hasPrefix("--scanner: "))
            #expect(error.description.contains("auto, hci, hci:hciN, bluez, bluez:hciN, replay:PATH or fifo:PATH"))
        }
    }
}
