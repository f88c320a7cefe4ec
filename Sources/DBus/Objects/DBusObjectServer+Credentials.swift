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
        if let known = knownCredentials[sender] { return .success(known) }
        return credentialsFailure[sender].map { .failure($0) }
    }

    /// Whether `message` waits for its sender's credentials (then it is dispatched when they arrive).
    func holdsForCredentials(_ message: DBusMessage) -> Bool {
        guard let sender = message.sender else { return false }
        if heldForCredentials[sender] != nil {
            guard heldForCredentials[sender, default: []].count < Self.maximumHeldCalls else {
                if message.expectsReply,
                    let reply = try? message.makeError(
                        name: "org.freedesktop.DBus.Error.LimitsExceeded",
                        message: "\(Self.maximumHeldCalls) calls are already waiting while the bus says who \(sender) is; wait for their replies")
                {
                    try? send(reply)
                }
                return true
            }
            heldForCredentials[sender, default: []].append(message)
            return true
        }
        guard knownCredentials[sender] == nil, let path = message.path, objects[path]?.needsCallerCredentials == true else {
            return false
        }
        heldForCredentials[sender] = [message]
        askCredentials(of: sender) { [weak self] result in
            // Gone from the table: the sender left the bus meanwhile, and its calls with it.
            guard let self, let held = self.heldForCredentials.removeValue(forKey: sender) else { return }
            switch result {
            case .success(let credentials): self.knownCredentials[sender] = credentials
            case .failure(let error): self.credentialsFailure[sender] = error
            }
            for message in held { self.handleMethodCall(message) }
            // A failure is not kept: the sender's next call asks again.
            self.credentialsFailure[sender] = nil
        }
        return true
    }

    func forgetCredentials(of sender: String) {
        knownCredentials[sender] = nil
        heldForCredentials[sender] = nil
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
