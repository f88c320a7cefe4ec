public import Foundation

/// A real Mosquitto broker (Debian's `mosquitto`) on loopback for one test, with its own configuration, stopped
/// when the object goes. Like `PrivateBus`, it daemonizes and is stopped by its pid.
public final class PrivateBroker: @unchecked Sendable {
    public struct User: Sendable {
        public var name: String
        public var password: String
        public init(_ name: String, password: String) {
            self.name = name
            self.password = password
        }
    }

    public let directory: URL
    /// The plain MQTT listener on 127.0.0.1.
    public let port: Int
    /// The TLS listener, when `tls` was asked for; its certificate is signed by `caFile` and names 127.0.0.1 and
    /// localhost.
    public let tlsPort: Int?
    public let caFile: String?
    /// The CA and server certificate of the TLS listener, to sign client certificates with.
    public let certificates: TestCertificates?
    public private(set) var pid: pid_t = 0
    private let configFile: URL

    /// `users`: a password file (anonymous clients refused); `acl`: Mosquitto ACL lines (`user NAME`, `topic
    /// write X`, ...). `port`: reuse a port (a restarted broker at the same address).
    /// `requireClientCertificate`: the TLS listener accepts only clients with a certificate signed by `caFile`.
    public init(
        users: [User] = [], acl: String? = nil, tls: Bool = false, requireClientCertificate: Bool = false,
        port: Int? = nil
    ) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("beacond-broker-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.port = try port ?? Self.freePort()
        var lines = [
            "per_listener_settings false",
            "persistence false",
            // Root in tests: stay root, so the files in our directory stay readable.
            "user root",
            "log_dest file \(directory.path)/mosquitto.log",
            "log_type all",
            "listener \(self.port) 127.0.0.1",
        ]
        if users.isEmpty {
            lines.append("allow_anonymous true")
        } else {
            let passwords = directory.appendingPathComponent("passwords").path
            for (index, user) in users.enumerated() {
                try Self.run("/usr/bin/mosquitto_passwd", (index == 0 ? ["-c"] : []) + ["-b", passwords, user.name, user.password])
            }
            lines += ["allow_anonymous false", "password_file \(passwords)"]
        }
        if let acl {
            let file = directory.appendingPathComponent("acl")
            try acl.write(to: file, atomically: true, encoding: .utf8)
            lines.append("acl_file \(file.path)")
        }
        if tls {
            let certificates = try TestCertificates(directory: directory)
            self.certificates = certificates
            let tlsPort = try Self.freePort()
            self.tlsPort = tlsPort
            caFile = certificates.caFile
            lines += [
                "listener \(tlsPort) 127.0.0.1", "cafile \(certificates.caFile)",
                "certfile \(certificates.serverCertificate)", "keyfile \(certificates.serverKey)",
            ]
            if requireClientCertificate { lines += ["require_certificate true"] }
        } else {
            tlsPort = nil
            caFile = nil
            certificates = nil
        }
        configFile = directory.appendingPathComponent("mosquitto.conf")
        try (lines.joined(separator: "\n") + "\n").write(to: configFile, atomically: true, encoding: .utf8)
        try start()
    }

    /// Starts the broker (again, after `kill`) on the same ports and waits until it accepts connections.
    public func start() throws {
        // In the foreground, as our child: waiting on a daemonizing launcher through Foundation's Process hangs.
        pid = try Self.spawn("/usr/sbin/mosquitto", ["-c", configFile.path])
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if Self.accepts(port: port) { return }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                pid = 0
                break
            }
            usleep(20_000)
        }
        throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "mosquitto did not start: \(log)"])
    }

    /// Kills the broker (SIGKILL: no goodbye to its clients) and waits until it is gone.
    public func kill() {
        guard pid > 0 else { return }
        Foundation.kill(pid, SIGKILL)
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
        pid = 0
    }

    /// What the broker logged (connections, refusals, ACL denials).
    public var log: String {
        (try? String(contentsOf: directory.appendingPathComponent("mosquitto.log"), encoding: .utf8)) ?? ""
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs a short command to its end; throws if it fails.
    static func run(_ executable: String, _ arguments: [String]) throws {
        let pid = try spawn(executable, arguments)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        guard status == 0 else {
            throw CocoaError(
                .fileWriteUnknown,
                userInfo: [
                    NSLocalizedDescriptionKey: "\(executable) \(arguments.joined(separator: " ")) exited with status \(status)"
                ])
        }
    }

    /// Starts a child with standard input, output and error on /dev/null.
    static func spawn(_ executable: String, _ arguments: [String]) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for descriptor: Int32 in [0, 1, 2] {
            posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EINVAL) }
        return pid
    }

    /// A port nobody listens on now (the kernel's choice for port 0).
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard bound == 0, named == 0 else { throw POSIXError(.EADDRINUSE) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}

/// A CA and a server certificate for 127.0.0.1 and localhost, made with the `openssl` command for one test.
public struct TestCertificates: Sendable {
    public let caFile: String
    public let caKey: String
    public let serverCertificate: String
    public let serverKey: String

    public init(directory: URL) throws {
        let path = directory.path
        caFile = "\(path)/ca.crt"
        caKey = "\(path)/ca.key"
        serverCertificate = "\(path)/server.crt"
        serverKey = "\(path)/server.key"
        try PrivateBroker.run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                "-subj", "/CN=beacond test CA", "-keyout", caKey, "-out", caFile,
            ])
        try PrivateBroker.run(
            "/usr/bin/openssl",
            [
                "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost",
                "-keyout", serverKey, "-out", "\(path)/server.csr",
            ])
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\n".write(toFile: "\(path)/san.ext", atomically: true, encoding: .utf8)
        try PrivateBroker.run(
            "/usr/bin/openssl",
            [
                "x509", "-req", "-in", "\(path)/server.csr", "-CA", caFile, "-CAkey", caKey,
                "-CAcreateserial", "-days", "2", "-extfile", "\(path)/san.ext",
                "-out", serverCertificate,
            ])
    }

    /// A client certificate and key signed by this CA: (certificate, key).
    public func clientCertificate(directory: URL, name: String) throws -> (String, String) {
        let base = directory.appendingPathComponent(name).path
        try PrivateBroker.run(
            "/usr/bin/openssl",
            [
                "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=\(name)",
                "-keyout", base + ".key", "-out", base + ".csr",
            ])
        try PrivateBroker.run(
            "/usr/bin/openssl",
            [
                "x509", "-req", "-in", base + ".csr", "-CA", caFile, "-CAkey", caKey,
                "-CAcreateserial", "-days", "2", "-out", base + ".crt",
            ])
        return (base + ".crt", base + ".key")
    }

    /// A second, unrelated CA: a client that trusts only it must refuse the broker.
    public static func unrelatedCA(directory: URL) throws -> String {
        let file = directory.appendingPathComponent("other-ca.crt").path
        try PrivateBroker.run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                "-subj", "/CN=some other CA",
                "-keyout", directory.appendingPathComponent("other-ca.key").path,
                "-out", file,
            ])
        return file
    }
}
