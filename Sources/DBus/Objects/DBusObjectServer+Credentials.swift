/// Who is calling, asked of the bus without blocking the loop. A blocking GetConnectionCredentials at each new
/// caller held every other client for a bus round trip (and up to the call's timeout if the bus was slow):
/// 1,000 connections arriving at once stalled the daemon for up to 0.7 s (docs/performance.md). Instead the
/// first call of a sender to an object that needs credentials waits, with that sender's later calls queued
/// behind it so their order holds, while everyone else is served.
extension DBusObjectServer {
    /// The most calls one sender may have waiting for its credentials; more are refused, not buffered.
    static let maximumHeldCalls = 64
    static let credentialsTimeout = Duration.seconds(10)

    /// The bus's answer for `sender`, for handlers of an object with `needsCallerCredentials`: its credentials, or
    /// why the bus could not say who it is. nil only for a sender that never called such an object.
    public func callerCredentials(of sender: String) -> Result<DBusPeerCredentials, DBusCallError>? {
        credentials.answer(for: sender)
    }

    /// Whether `message` waits for its sender's credentials (then it is dispatched when they arrive).
    func holdsForCredentials(_ message: DBusMessage) -> Bool {
        guard let sender = message.sender else { return false }
        switch credentials.queueBehindWaiting(message, of: sender, limit: Self.maximumHeldCalls) {
        case .queued: return true
        case .full:
            if message.expectsReply,
                let reply = try? message.makeError(
                    name: "org.freedesktop.DBus.Error.LimitsExceeded",
                    message: "\(Self.maximumHeldCalls) calls are already waiting while the bus says who \(sender) is; wait for their replies")
            {
                try? send(reply)
            }
            return true
        case .nothingWaits: break
        }
        guard !credentials.knows(sender), let path = message.path, exports.objects[path]?.needsCallerCredentials == true else {
            return false
        }
        credentials.hold(message, of: sender)
        askCredentials(of: sender) { [weak self] result in
            // Gone from the table: the sender left the bus meanwhile, and its calls with it.
            guard let self, let held = self.credentials.settle(sender, with: result) else { return }
            for message in held { self.handleMethodCall(message) }
            // A failure is not kept: the sender's next call asks again.
            self.credentials.dropFailure(of: sender)
        }
        return true
    }

    /// GetConnectionCredentials; where its reply cannot be read (newer buses add `ProcessFD`, a unix fd), the
    /// same facts one by one, so one unreadable entry never costs the whole answer.
    func askCredentials(of sender: String, completion: @escaping (Result<DBusPeerCredentials, DBusCallError>) -> Void) {
        askBus(.all, about: sender) { [weak self] result in
            switch result {
            case .success(let reply):
                completion(Result { () throws(DBusCallError) in try DBusPeerCredentials(credentialsReply: reply) })
            case .failure(let error) where error.name == DBusCallError.unreadableReplyName:
                self?.askCredentialsOneByOne(of: sender, completion: completion)
            case .failure(let error):
                completion(.failure(error))
            }
        }
    }

    func askCredentialsOneByOne(
        of sender: String,
        completion: @escaping (Result<DBusPeerCredentials, DBusCallError>) -> Void
    ) {
        askBus(.userID, about: sender) { [weak self] user in
            let userID: UInt32
            do throws(DBusCallError) {
                userID = try DBusPeerCredentials.uint32(user.get(), replyTo: .userID)
            } catch {
                return completion(.failure(error))
            }
            // A peer without a process ID (over TCP) is not an error, only less to check.
            self?.askBus(.processID, about: sender) { process in
                let processID = try? DBusPeerCredentials.uint32(process.get(), replyTo: .processID)
                completion(.success(DBusPeerCredentials(unixUserID: userID, processID: processID)))
            }
        }
    }

    private func askBus(
        _ question: DBusPeerCredentials.Question, about sender: String,
        completion: @escaping (Result<[DBusValue], DBusCallError>) -> Void
    ) {
        callAsync(
            destination: DBusConnection.busName, path: DBusConnection.busPath, interface: DBusConnection.busName,
            member: question.member, arguments: [.string(sender)], timeout: Self.credentialsTimeout, completion: completion)
    }
}

/// What the bus said of each sender that called an object with `needsCallerCredentials`, and the calls waiting
/// for that answer. Its methods only change the tables: the server sends, asks and dispatches, so no handler runs
/// while they are being changed.
struct DBusCredentialsCache {
    /// Where a call goes while its sender's earlier calls wait.
    enum Queueing { case queued, full, nothingWaits }

    /// The answer for each sender, kept while the sender is on the bus (a unique name is never reused, so the answer
    /// cannot change).
    private var known: [String: DBusPeerCredentials] = [:]
    /// Calls held, in arrival order, while their sender's credentials are asked of the bus.
    private var held: [String: [DBusMessage]] = [:]
    /// Why the bus could not say who a sender is, while that sender's held calls are answered.
    private var failures: [String: DBusCallError] = [:]

    /// `sender`'s credentials, or why the bus could not say who it is; nil if neither is known.
    func answer(for sender: String) -> Result<DBusPeerCredentials, DBusCallError>? {
        if let known = known[sender] { return .success(known) }
        return failures[sender].map { .failure($0) }
    }

    func knows(_ sender: String) -> Bool { known[sender] != nil }

    /// Queues `message` behind `sender`'s calls that wait, if any do and fewer than `limit`.
    mutating func queueBehindWaiting(_ message: DBusMessage, of sender: String, limit: Int) -> Queueing {
        guard held[sender] != nil else { return .nothingWaits }
        guard held[sender, default: []].count < limit else { return .full }
        held[sender, default: []].append(message)
        return .queued
    }

    /// Holds `message`, the first of `sender`'s calls, while the bus is asked.
    mutating func hold(_ message: DBusMessage, of sender: String) {
        held[sender] = [message]
    }

    /// Keeps the bus's answer for `sender` and returns its held calls, in arrival order; nil if they are gone (the
    /// sender left the bus meanwhile).
    mutating func settle(_ sender: String, with result: Result<DBusPeerCredentials, DBusCallError>) -> [DBusMessage]? {
        guard let calls = held.removeValue(forKey: sender) else { return nil }
        switch result {
        case .success(let credentials): known[sender] = credentials
        case .failure(let error): failures[sender] = error
        }
        return calls
    }

    mutating func dropFailure(of sender: String) {
        failures[sender] = nil
    }

    /// `sender` left the bus: its answer and its held calls go.
    mutating func forget(_ sender: String) {
        known[sender] = nil
        held[sender] = nil
    }
}
