public import Foundation

/// A real `dbus-daemon` on a private socket for one test, stopped when the test ends.
/// It runs with `--fork` and is stopped by its process id: waiting on a long-running child
/// through Foundation's `Process` can hang on Linux, and SIGKILL cannot be ignored.
public final class PrivateBus: @unchecked Sendable {
    public let directory: URL
    public let address: String
    public let pid: pid_t

    /// `everyUser`: any unix user may connect (a test that runs a client as another user). `serviceDirectory`: where
    /// the bus finds D-Bus activation files (`[D-BUS Service]`), read when it starts.
    public init(everyUser: Bool = false, serviceDirectory: String? = nil) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("beacond-bus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // The socket's directory must let another user reach the socket.
        if everyUser { chmod(directory.path, 0o755) }
        let config = directory.appendingPathComponent("bus.conf")
        // A session-style bus on our own socket: everyone may own and call anything.
        try """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:path=\(directory.path)/bus</listen>
          <auth>EXTERNAL</auth>
          \(serviceDirectory.map { "<servicedir>\($0)</servicedir>" } ?? "")
          <policy context="default">
            \(everyUser ? "<allow user=\"*\"/>" : "")
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>
        """.write(to: config, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        process.arguments = ["--config-file=\(config.path)", "--fork", "--print-address=1", "--print-pid=1"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        // With --fork the launcher prints the address and the daemon's pid, then exits; the daemon
        // keeps the pipe open, so read exactly two lines rather than to end of file.
        var text = ""
        while text.filter({ $0 == "\n" }).count < 2 {
            let chunk = output.fileHandleForReading.readData(ofLength: 1)
            guard !chunk.isEmpty else { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        // Not `waitUntilExit()`: it can hang here while the forked daemon holds the pipe; the
        // two lines already mean the bus is listening.
        let lines = text.split(separator: "\n").map(String.init)
        guard lines.count >= 2, let pid = pid_t(lines[1]) else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "dbus-daemon printed \(text)"])
        }
        address = lines[0]
        self.pid = pid
    }

    deinit {
        kill(pid, SIGKILL)
        try? FileManager.default.removeItem(at: directory)
    }
}
