@testable import BeacondService
import Foundation
import MainLoopKit
import Testing

/// `fifo:PATH` at something that is not a FIFO says what it is and the fix, rather than "remove it" (issue 21: at
/// /dev/zero that advice is wrong).
@Suite("fifo scanner")
struct FIFOScannerTests {
    @Test(arguments: [("/dev/zero", "is a character device"), ("/tmp", "is a directory")])
    func notAFIFOSaysWhatItIs(_ path: String, _ kind: String) throws {
        let loop = try MainLoop()
        do {
            try FIFOScanner(path: path).start(loop: loop, deliver: { _ in }, status: { _ in })
            Issue.record("fifo:\(path) started")
        } catch {
            #expect(error.message.contains("\(path) \(kind), not a FIFO"), "\(error.message)")
            #expect(error.message.contains("mkfifo") && !error.message.contains("remove it"), "\(error.message)")
        }
    }
}
