@testable import BeacondService
@testable import BeacondCore
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

    /// Issue 38: the FIFO was made only when scanning started, so an `echo` before then made a regular file. The
    /// daemon's load (start and reload) makes it, 0660 whatever the umask (the unit's is 0077, which would leave
    /// group beacond unable to write; a test's 0022 would too); what is in the way is an error at the line of `source`; a FIFO that cannot be
    /// made is a warning (scanning retries). The files alone (no `makeFIFO`) leave the system be.
    @Test func theDaemonsLoadMakesTheFIFO() throws {
        let directory = try ConfigurationDirectory()
        let fifo = directory.path + "/beacons"
        try directory.write("[scanner]\nsource = \"fifo:\(fifo)\"\n", to: "beacond.toml")
        _ = try directory.load()
        #expect(access(fifo, F_OK) != 0, "made without makeFIFO")
        let configuration = try ConfigurationLoader.load(directory: directory.path, accounts: .everything, makeFIFO: true)
        var info = stat()
        #expect(stat(fifo, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO && info.st_mode & 0o777 == 0o660)
        #expect(configuration.warnings.isEmpty, "\(configuration.warnings)")
        // Made again at the next load: nothing to do.
        _ = try ConfigurationLoader.load(directory: directory.path, accounts: .everything, makeFIFO: true)

        unlink(fifo)
        try directory.write("an echo before the FIFO was there\n", to: "beacons")
        do {
            _ = try ConfigurationLoader.load(directory: directory.path, accounts: .everything, makeFIFO: true)
            Issue.record("a regular file at fifo:\(fifo) was taken")
        } catch {
            #expect(error.file == directory.settingsFile && error.line == 2, "\(error)")
            #expect(error.message.contains("\(fifo) is a regular file, not a FIFO"), "\(error)")
            #expect(error.message.contains("delete it if it is a leftover"), "\(error)")
        }

        // A configuration rejected for another file makes no FIFO (the old one stays in force), but still says
        // what is in the way of this one.
        unlink(fifo)
        try directory.write("app_id = \"org.example.Broken\"\nusers = 7\n", to: "apps.d/broken.toml")
        #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader.load(directory: directory.path, accounts: .everything, makeFIFO: true)
        }
        #expect(access(fifo, F_OK) != 0, "a rejected configuration made the FIFO")
        unlink(fifo) // if it was made: writing a file there would block on the FIFO
        try directory.write("an echo\n", to: "beacons")
        do {
            _ = try ConfigurationLoader.load(directory: directory.path, accounts: .everything, makeFIFO: true)
            Issue.record("a broken app declaration was accepted")
        } catch {
            #expect(([error] + error.others).contains { $0.message.contains("is a regular file, not a FIFO") }, "\(error)")
        }
        unlink(fifo)
        unlink(directory.path + "/apps.d/broken.toml")

        let nowhere = directory.path + "/missing/beacons"
        try directory.write("[scanner]\nsource = \"fifo:\(nowhere)\"\n", to: "beacond.toml")
        let blind = try ConfigurationLoader.load(directory: directory.path, accounts: .everything, makeFIFO: true)
        #expect(blind.warnings.map(\.description).contains { $0.contains("cannot create the FIFO \(nowhere)") }, "\(blind.warnings)")
    }
}
