package import DBus
import BeacondAPI
import Foundation
import MainLoopKit

/// What a client tells its listeners, in the order it happened on the bus.
package enum ClientNews: Sendable {
    /// Registered (again) with a beacond: the client's object path. Its `AuthorizationChanged` follows.
    case registered(path: String)
    /// beacond left the bus, or is not there (at start); the client registers again when it is back.
    case daemonGone(BeaconLocationError)
    /// beacond refused the registration (an unknown app, a user the app's declaration does not allow).
    case registrationFailed(BeaconLocationError)
    /// A `LocationManager1` signal of this client (`PropertiesChanged` for its properties), arguments as sent.
    case signal(member: String, arguments: [DBusValue])
    /// The program said it is (not) in use.
    case inUseChanged(Bool)
    /// `Manager1` properties that beacond (the one registered with) said changed, with their new values.
    case managerChanged([String: DBusValue])
    /// The client is done: closed by the program (nil), or its bus connection was lost.
    case ended(BeaconLocationError?)
}

/// One registered client of an app on beacond, kept across beacond's restarts: both faces (`LocationManager`,
/// `Monitor`) sit on one.
///
/// It does what every hand-written client must: it listens before it registers; it follows `org.beacond`'s owner
/// (`NameOwnerChanged`, only from the bus) and registers again when beacond comes back, which takes the app's
/// regions over with their state and delivers what beacond queued meanwhile, in order; and it starts again the
/// ranging it had started and says again that it is not in use, since beacond keeps neither across a restart.
///
/// Threads: the one its D-Bus connection needs. The actor runs on that thread's loop (`MainLoop`); listeners are
/// called there, one signal at a time, in the order beacond sent them; a signal sent before the reply to a call
/// reaches them before the caller resumes.
package actor BeaconClient {
    package let appID: String
    package let busDescription: String
    let busAddress: DBusBusAddress
    nonisolated let loop: MainLoop
    package nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    /// The bus connection and what drives it; nil once closed or lost (released on the loop thread), exactly when
    /// the phase is `.closed`.
    private var server: DBusObjectServer?
    /// Where the client is with beacond: one phase at a time, each holding what only it has.
    private var phase = Phase.unregistered(RegistrationFailures())
    /// How long before the next registration attempt after a failure (doubling up to `maximumRetry`).
    private var retryDelay: Duration = .seconds(1)
    static let maximumRetry: Duration = .seconds(30)
    /// Calls waiting for their reply: ended by `end()` (a close does not wait for a hung beacond's timeout).
    private var pendingCalls: [Int: CheckedContinuation<(Result<[DBusValue], DBusCallError>, signalsBefore: Int), Never>] = [:]
    private var pendingMembers: [Int: String] = [:]
    private var nextCall = 0
    /// Who owns org.beacond as the bus last said ("" for nobody; nil before the first answer).
    private var currentOwner: String?
    /// The last failure told (`tellFailure`).
    private var lastFailure: BeaconLocationError?
    /// What is re-established after a restart, in the order it was started.
    package private(set) var ranged: [BeaconIdentityConstraint] = []
    package private(set) var inUse = true
    private var listeners: [(id: Int, body: @Sendable (ClientNews) -> Void)] = []
    private var nextListener = 0
    /// Owner changes, handled one after the other (a registration awaits its reply).
    private var ownerWork: Task<Void, Never>?
    private var registeredWaiters: [CheckedContinuation<Void, Never>] = []
    /// Signals handed to listeners so far; a call's reply says how many came before it.
    package private(set) var deliveredSignals = 0

    /// The client's connection phase, as ScanControl's: the data of each phase lives in its case, so no flag can
    /// disagree with another (a path while closed, a refusal while registered).
    private enum Phase {
        /// Not registered: beacond is away, or the last registration failed (tried again, with backoff, while beacond
        /// runs: an administrator's fix, an app declared or a user added then `systemctl reload beacond`, needs no
        /// restart).
        case unregistered(RegistrationFailures)
        /// A RegisterClient waits for its reply from the beacond with the unique name `owner`; that beacond's client
        /// signals that came first wait in `early` (beacond sends the registration's AuthorizationChanged after the
        /// reply; a daemon that sent it before would lose nothing either). The last failures stand meanwhile.
        case registering(owner: String, early: [IncomingSignal], RegistrationFailures)
        /// Registered as the object `path` with the beacond whose unique name is `owner`: its signals only count.
        case registered(path: String, owner: String)
        /// Closed by the program, or its bus connection was lost (`lost`); `refusal`: beacond's refusal of the last
        /// registration, if it refused (`connect` throws it even when the connection went in between).
        case closed(lost: Bool, refusal: BeaconLocationError?)
    }

    /// Why the last registrations failed, until one succeeds or another beacond takes the name.
    private struct RegistrationFailures {
        /// beacond refused the registration (an unknown app, a user the app's declaration does not allow).
        var refusal: BeaconLocationError?
        /// beacond is there but did not answer (hung, slow), or the bus refused the call.
        var trouble: BeaconLocationError?
    }

    /// The client's object (`/org/beacond/client/N`) while registered.
    package var path: String? {
        if case .registered(let path, _) = phase { return path }
        return nil
    }

    /// The unique bus name of the beacond this client is registered with.
    private var owner: String? {
        if case .registered(_, let owner) = phase { return owner }
        return nil
    }

    /// Why the last registration failed when beacond refused it (nil while registered).
    package var registrationError: BeaconLocationError? {
        if case .closed(_, let refusal) = phase { return refusal }
        return failures?.refusal
    }

    private var failures: RegistrationFailures? {
        switch phase {
        case .unregistered(let failures), .registering(_, _, let failures): return failures
        case .registered, .closed: return nil
        }
    }

    /// Notes a failed registration in the phase that is not registered (a registered or closed client has none).
    private func recordFailure(_ change: (inout RegistrationFailures) -> Void) {
        switch phase {
        case .unregistered(var failures):
            change(&failures)
            phase = .unregistered(failures)
        case .registering(let owner, let early, var failures):
            change(&failures)
            phase = .registering(owner: owner, early: early, failures)
        case .registered, .closed:
            break
        }
    }

    /// Connects to `bus` (`nil`: `$BEACOND_BUS`, else the system bus; "session"; or a D-Bus address), follows
    /// beacond and registers as `appID`; with beacond absent it returns all the same (listeners hear
    /// `daemonGone`) and registers when beacond takes its name. Throws beacond's refusal of the registration.
    package static func connect(
        appID: String, bus: String? = nil, listener: (@Sendable (ClientNews) -> Void)? = nil
    ) async throws(BeaconLocationError) -> BeaconClient {
        let client = try BeaconClient(appID: appID, bus: bus)
        // Cancelled while it registers (a timeout around the face's initialiser): the client is closed at once, so no
        // registration is left that nobody holds, which would take the app's regions and queued events.
        let result = await withTaskCancellationHandler {
            do throws(BeaconLocationError) {
                try await client.start(listener: listener)
                return Result<Void, BeaconLocationError>.success(())
            } catch {
                return .failure(error)
            }
        } onCancel: {
            Task { await client.close() }
        }
        if Task.isCancelled {
            await client.close()
            throw BeaconLocationError(
                name: BeaconLocationError.cancelledName,
                message: "cancelled before beacond answered the registration; nothing is left registered")
        }
        try result.get()
        return client
    }

    private init(appID: String, bus: String?) throws(BeaconLocationError) {
        self.appID = appID
        let address = Self.address(bus)
        busAddress = address
        switch address {
        case .system: busDescription = "the system bus"
        case .session: busDescription = "the session bus"
        case .address(let text): busDescription = "the bus at \(text)"
        }
        do {
            loop = try MainLoop()
        } catch {
            throw BeaconLocationError(name: "org.freedesktop.DBus.Error.Failed", message: "cannot start the client's loop: \(error)")
        }
        do {
            // Made before the loop runs, as DBusObjectServer requires; used on the loop thread only after.
            let connection = try DBusConnection(address)
            server = try DBusObjectServer(connection: connection, loop: loop, watchingConnections: false)
        } catch {
            throw BeaconLocationError(
                name: BeaconLocationError.daemonUnavailableName,
                message: "cannot connect to \(busDescription): \(error.message)")
        }
        do {
            try loop.startThread(detached: true)
        } catch {
            throw BeaconLocationError(name: "org.freedesktop.DBus.Error.Failed", message: "cannot start the client's thread: \(error)")
        }
    }

    isolated deinit {
        // On the loop's thread, where the connection's watches live: released here, then the loop ends (its
        // thread is detached: nothing is left of it). A monitor iterating its events hears the end.
        if server != nil { tell(.ended(nil)) }
        server = nil
        loop.stop()
    }

    /// `nil` or "system": the system bus; "session"; anything else is a D-Bus address (`unix:path=…`).
    /// `$BEACOND_BUS` stands in for nil, so one program runs against a test daemon unchanged.
    static func address(_ bus: String?) -> DBusBusAddress {
        let environment = ProcessInfo.processInfo.environment["BEACOND_BUS"]
        let text = bus ?? (environment?.isEmpty == false ? environment : nil) ?? "system"
        return DBusBusAddress(parsing: text)
    }

    private func start(listener: (@Sendable (ClientNews) -> Void)?) async throws(BeaconLocationError) {
        if let listener { _ = addListener(listener) }
        guard let server else { throw unavailable() }
        server.disconnected = { [weak self] in self?.assumeIsolated { $0.connectionLost() } }
        server.nameOwnerChanged = { [weak self] name, old, new in
            guard name == BeacondBus.name else { return }
            self?.assumeIsolated { $0.ownerChanged(old: old, new: new) }
        }
        do {
            // The owner rule first, then GetNameOwner: a beacond that starts between the two is heard either way.
            try server.addSignalHandler(matchRule: Self.ownerRule) { _ in }
            try server.addSignalHandler(matchRule: Self.clientRule) { [weak self] message in
                let signal = IncomingSignal(message)
                self?.assumeIsolated { $0.received(signal) }
            }
            try server.addSignalHandler(matchRule: Self.propertiesRule) { _ in }
            try server.addSignalHandler(matchRule: Self.managerPropertiesRule) { _ in }
        } catch {
            throw BeaconLocationError(name: error.name, message: "cannot listen on \(busDescription): \(error.message)")
        }
        let (reply, _) = await rawCall(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "GetNameOwner", arguments: [.string(BeacondBus.name)])
        var current = ""
        if case .success(let values) = reply, let name = values.first?.stringValue { current = name }
        if current.isEmpty { current = await activate() }
        ownerChanged(old: nil, new: current)
        await ownerWork?.value
        if let registrationError, path == nil {
            await close()
            throw registrationError
        }
    }

    /// beacond not running: the bus starts it if it can (D-Bus activation, as a call to it would on the system bus
    /// with beacond installed). Its unique name, or "" when it cannot be started (no activation file, or its start
    /// failed: the news says beacond is away, and the client registers when it appears).
    private func activate() async -> String {
        let (started, _) = await rawCall(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "StartServiceByName", arguments: [.string(BeacondBus.name), .uint32(0)])
        guard case .success = started else { return "" }
        let (owner, _) = await rawCall(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "GetNameOwner", arguments: [.string(BeacondBus.name)])
        if case .success(let values) = owner, let name = values.first?.stringValue { return name }
        return ""
    }

    static let ownerRule =
        "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',"
        + "arg0='\(BeacondBus.name)'"
    static let clientRule =
        "type='signal',sender='\(BeacondBus.name)',interface='\(BeacondInterface.locationManager)',"
        + "path_namespace='\(BeacondBus.clientPathPrefix.dropLast())'"
    static let propertiesRule =
        "type='signal',sender='\(BeacondBus.name)',interface='org.freedesktop.DBus.Properties',"
        + "member='PropertiesChanged',path_namespace='\(BeacondBus.clientPathPrefix.dropLast())'"
    /// Manager1's (`ScannerState`, `LocationServicesEnabled`): broadcast on beacond's own path.
    static let managerPropertiesRule =
        "type='signal',sender='\(BeacondBus.name)',interface='org.freedesktop.DBus.Properties',"
        + "member='PropertiesChanged',path='\(BeacondBus.managerPath)'"

    // MARK: Listeners

    /// `listener` hears every `ClientNews` from now on, on the client's loop, one at a time; it must not block.
    @discardableResult
    package func addListener(_ listener: @escaping @Sendable (ClientNews) -> Void) -> Int {
        nextListener += 1
        listeners.append((nextListener, listener))
        return nextListener
    }

    package func removeListener(_ id: Int) {
        listeners.removeAll { $0.id == id }
    }

    private func tell(_ news: ClientNews) {
        for listener in listeners { listener.body(news) }
    }

    // MARK: State

    package var isRegistered: Bool { path != nil }
    /// The members of the calls sent and waiting for their reply (a test waits for the one it sent, not for a
    /// count that the client's own reads after registering also change).
    package var pendingCallMembers: [String] { pendingMembers.sorted { $0.key < $1.key }.map(\.value) }
    /// Closed by the program or its bus lost: make a new client.
    package var isClosed: Bool { server == nil }

    /// Until registered with a running beacond (at once when it is).
    package func waitUntilRegistered() async {
        if path != nil || server == nil { return }
        await withCheckedContinuation { registeredWaiters.append($0) }
    }

    /// How to start beacond where this client looks for it: systemd's unit on the system bus, else by hand on
    /// that bus (a test daemon, a private bus).
    private var startAdvice: String {
        switch busAddress {
        case .system: return "start it: `systemctl start beacond` (and `systemctl enable beacond` to start it at boot)"
        case .session: return "start it on the session bus: `beacond --bus session --config-dir DIR --state-dir DIR`"
        case .address(let text): return "start it on that bus: `beacond --bus '\(text)' --config-dir DIR --state-dir DIR`"
        }
    }

    /// The error a call meets now: closed, lost, refused, or beacond away.
    package func unavailable() -> BeaconLocationError {
        if case .closed(let lost, _) = phase {
            if lost {
                return BeaconLocationError(
                    name: BeaconLocationError.disconnectedName,
                    message: "the D-Bus connection was lost (the bus went away), so this client is closed; make a new "
                        + "one once the bus is back")
            }
            return .daemonUnavailable("this client is closed; make a new one")
        }
        if let failure = failures?.refusal ?? failures?.trouble { return failure }
        return .daemonUnavailable(
            "beacond is not running on \(busDescription) (org.beacond has no owner); \(startAdvice). This client "
                + "registers again by itself when it is back.")
    }

    // MARK: Calls

    /// A `LocationManager1` method of this client; throws beacond's refusal (its name and message) or why it could
    /// not be called. `signalsBefore`: `deliveredSignals` when the reply came (what beacond sent before it).
    package func call(
        _ member: String, _ arguments: [DBusValue] = [], timeout: Duration = .seconds(25)
    ) async throws(BeaconLocationError) -> (values: [DBusValue], signalsBefore: Int) {
        guard let path else { throw unavailable() }
        return try await checkedCall(
            path: path, interface: BeacondInterface.locationManager, member: member, arguments: arguments,
            timeout: timeout)
    }

    /// A property of `Manager1` (anyone may read them).
    package func managerProperty(_ name: String) async throws(BeaconLocationError) -> DBusValue {
        try await property(path: BeacondBus.managerPath, interface: BeacondInterface.manager, name)
    }

    /// A property of this client's `LocationManager1` object.
    package func clientProperty(_ name: String) async throws(BeaconLocationError) -> DBusValue {
        guard let path else { throw unavailable() }
        return try await property(path: path, interface: BeacondInterface.locationManager, name)
    }

    private func property(path: String, interface: String, _ name: String) async throws(BeaconLocationError) -> DBusValue {
        let reply = try await checkedCall(
            path: path, interface: "org.freedesktop.DBus.Properties", member: "Get",
            arguments: [.string(interface), .string(name)])
        guard let value = reply.values.first?.unwrapped else {
            throw BeaconLocationError(name: DBusCallError.unreadableReplyName, message: "Get(\(name)) returned nothing")
        }
        return value
    }

    /// `SetInUse`: false when the program goes to the background (a WhenInUse app's ranging pauses). Said again
    /// after beacond restarts; while beacond is away it is kept and said at the next registration (no error).
    package func setInUse(_ inUse: Bool) async throws(BeaconLocationError) {
        let before = self.inUse
        self.inUse = inUse
        if path != nil {
            do {
                _ = try await call(BeacondMember.setInUse, [.boolean(inUse)])
            } catch  where error.isRefusal {
                self.inUse = before
                throw error
            } catch {
                // beacond went away meanwhile: said at the next registration.
            }
        } else if server == nil {
            self.inUse = before
            throw unavailable()
        }
        tell(.inUseChanged(inUse))
    }

    /// `StartRanging`, remembered so it is started again after a restart. Remembered before the call, so a
    /// RangingDidFail that comes before the caller resumes forgets it for good.
    package func startRanging(_ constraint: BeaconIdentityConstraint) async throws(BeaconLocationError) -> Int {
        let known = ranged.contains(constraint)
        if !known { ranged.append(constraint) }
        do {
            return try await call(BeacondMember.startRanging, [.vardict(constraint.dictionary)]).signalsBefore
        } catch {
            if !known { ranged.removeAll { $0 == constraint } }
            throw error
        }
    }

    /// beacond stopped this ranging (RangingDidFail): it is not started again after a restart.
    package func forgetRanging(_ constraint: BeaconIdentityConstraint) {
        ranged.removeAll { $0 == constraint }
    }

    package func stopRanging(
        _ constraint: BeaconIdentityConstraint, timeout: Duration = .seconds(25)
    ) async throws(BeaconLocationError) -> Int {
        ranged.removeAll { $0 == constraint }
        return try await call(BeacondMember.stopRanging, [.vardict(constraint.dictionary)], timeout: timeout).signalsBefore
    }

    /// Ends the client (its ranging stops; the app's regions stay, beacond keeps them for the app) and the
    /// connection. Listeners hear `.ended(nil)`.
    package func close() async {
        guard server != nil else { return }
        if path != nil { _ = try? await call(BeacondMember.close, timeout: .seconds(2)) }
        end(lost: false)
    }

    /// Ends the connection without `Close`: beacond detaches the client the same way when its connection goes
    /// (its ranging stops; the app's regions stay). Listeners hear `.ended(nil)`.
    package func disconnect() {
        end(lost: false)
    }

    private func end(lost: Bool) {
        guard let server else { return }
        server.connection.flush()
        self.server = nil // on the loop thread: the watches go with it
        let waiting = pendingCalls
        pendingCalls = [:]
        pendingMembers = [:]
        for continuation in waiting.values {
            continuation.resume(
                returning: (.failure(DBusCallError(name: BeaconLocationError.disconnectedName, message: "the client is closed")), 0))
        }
        phase = .closed(lost: lost, refusal: registrationError)
        for waiter in registeredWaiters { waiter.resume() }
        registeredWaiters = []
        tell(.ended(lost ? unavailable() : nil))
    }

    private func checkedCall(
        path: String, interface: String, member: String, arguments: [DBusValue], timeout: Duration = .seconds(25)
    ) async throws(BeaconLocationError) -> (values: [DBusValue], signalsBefore: Int) {
        // To the unique name of the beacond this client is registered with: a call never reaches a newer one.
        let (result, before) = await rawCall(
            destination: owner ?? BeacondBus.name, path: path, interface: interface, member: member, arguments: arguments,
            timeout: timeout)
        switch result {
        case .success(let values): return (values, before)
        case .failure(let error):
            if error.name == BeaconLocationError.disconnectedName || server == nil { throw unavailable() }
            if error.name.hasPrefix(BeaconLocationError.beacondErrorPrefix) {
                throw BeaconLocationError(name: error.name, message: error.message)
            }
            throw BeaconLocationError(
                name: error.name, message: "\(member) failed on \(busDescription): \(error.message)")
        }
    }

    /// A method call that does not block the loop, with `deliveredSignals` when its reply was read (in order with
    /// the signals around it). `registeringWith`: a RegisterClient to the beacond with that unique name, whose
    /// reply registers the client right there: the AuthorizationChanged right behind it must find it registered.
    private func rawCall(
        destination: String, path: String, interface: String, member: String, arguments: [DBusValue],
        timeout: Duration = .seconds(25), registeringWith owner: String? = nil
    ) async -> (Result<[DBusValue], DBusCallError>, signalsBefore: Int) {
        guard let server else {
            return (.failure(DBusCallError(name: BeaconLocationError.disconnectedName, message: "the client is closed")), 0)
        }
        nextCall += 1
        let id = nextCall
        return await withCheckedContinuation { continuation in
            pendingCalls[id] = continuation
            pendingMembers[id] = member
            server.callAsync(
                destination: destination, path: path, interface: interface, member: member, arguments: arguments,
                timeout: timeout
            ) { [weak self] result in
                guard let self else { return continuation.resume(returning: (result, 0)) }
                self.assumeIsolated { client in
                    // Ended by `end()` already (closed, or the bus lost).
                    guard let continuation = client.pendingCalls.removeValue(forKey: id) else { return }
                    client.pendingMembers[id] = nil
                    if let owner, case .success(let values) = result, let path = values.first?.stringValue {
                        client.registered(path: path, owner: owner)
                    }
                    continuation.resume(returning: (result, client.deliveredSignals))
                }
            }
        }
    }

    // MARK: Signals in

    private func received(_ signal: IncomingSignal?) {
        guard let signal else { return }
        if case .registering(let owner, var early, let failures) = phase, owner == signal.sender {
            early.append(signal)
            phase = .registering(owner: owner, early: early, failures)
            return
        }
        if signal.path == BeacondBus.managerPath {
            // Manager1's properties: only from the beacond registered with.
            guard path != nil, let owner, signal.sender == owner, signal.member == "PropertiesChanged",
                signal.arguments.count == 3, signal.arguments[0].stringValue == BeacondInterface.manager,
                let changed = signal.arguments[1].unwrapped.vardictEntries
            else { return }
            tell(.managerChanged(changed))
            return
        }
        // Only beacond's (the one registered with), only for this client: anyone on the bus may send us a signal.
        guard let path, signal.path == path, let owner, signal.sender == owner else { return }
        deliveredSignals += 1
        tell(.signal(member: signal.member, arguments: signal.arguments))
    }

    private func connectionLost() {
        end(lost: true)
    }

    // MARK: beacond coming and going

    /// `org.beacond` went from `old` (nil: from GetNameOwner, not a change) to `new` ("" for nobody).
    private func ownerChanged(old: String?, new: String) {
        if old != nil || currentOwner == nil { currentOwner = new }
        let previous = ownerWork
        ownerWork = Task {
            await previous?.value
            await self.handleOwner(old: old, new: new)
        }
    }

    private func handleOwner(old: String?, new: String) async {
        guard server != nil else { return }
        if path != nil {
            if new == owner { return } // the beacond this client is registered with, heard twice
            // News of a beacond this client is not registered with (one that came and went while a registration
            // waited for its reply, which the beacond after it answered).
            if let old, old != owner { return }
        }
        let wasRegistered = path != nil
        var failures = failures ?? RegistrationFailures()
        if old != nil {
            // Another beacond (or none): what the last one said of the registration no longer holds.
            failures = RegistrationFailures()
            retryDelay = .seconds(1)
        }
        phase = .unregistered(failures)
        if new.isEmpty {
            if wasRegistered || old == nil { tellFailure(.daemonGone(unavailable())) }
            return
        }
        await register(with: new)
    }

    private func register(with owner: String) async {
        phase = .registering(owner: owner, early: [], failures ?? RegistrationFailures())
        defer {
            // Not registered by the reply: the failures stay, the early signals go.
            if case .registering(_, _, let failures) = phase { phase = .unregistered(failures) }
        }
        // To the unique name: if that beacond is gone already, the call fails (ServiceUnknown) instead of reaching
        // the next one, which the next NameOwnerChanged registers with.
        let (result, _) = await rawCall(
            destination: owner, path: BeacondBus.managerPath, interface: BeacondInterface.manager,
            member: BeacondMember.registerClient, arguments: [.string(appID)], registeringWith: owner)
        switch result {
        case .success:
            if path == nil {
                let trouble = BeaconLocationError(
                    name: DBusCallError.unreadableReplyName, message: "RegisterClient returned no object path")
                recordFailure { $0.trouble = trouble }
                tellFailure(.registrationFailed(trouble))
                retry(owner)
                return
            }
        case .failure(let error):
            guard server != nil else { return }
            if error.name.hasPrefix(BeaconLocationError.beacondErrorPrefix) {
                let refusal = BeaconLocationError(name: error.name, message: error.message)
                recordFailure { $0.refusal = refusal }
                tellFailure(.registrationFailed(refusal))
            } else if currentOwner == owner {
                // beacond is there and did not answer (hung or slow: NoReply), or the bus refused the call.
                let trouble = BeaconLocationError(
                    name: error.name,
                    message: "beacond (\(owner) on \(busDescription)) did not answer RegisterClient: \(error.message). "
                        + "This client tries again by itself; if it goes on, see journalctl -u beacond -e")
                recordFailure { $0.trouble = trouble }
                tellFailure(.daemonGone(trouble))
            } else {
                // beacond went away before it answered: the next NameOwnerChanged registers again.
                tellFailure(.daemonGone(unavailable()))
                return
            }
            retry(owner)
            return
        }
        // What beacond does not keep across its restart. Ranging first, while the new client is in use: a
        // WhenInUse client not in use may keep its ranging (paused), not start it.
        for constraint in ranged {
            // Stopped by the program while an earlier one was restarted: not started again.
            guard ranged.contains(constraint), path != nil else { continue }
            do {
                _ = try await call(BeacondMember.startRanging, [.vardict(constraint.dictionary)])
            } catch {
                ranged.removeAll { $0 == constraint }
                tell(
                    .signal(
                        member: BeacondMember.rangingDidFail,
                        arguments: [.vardict(constraint.dictionary), .string(error.name), .string(error.message)]))
            }
        }
        if !inUse { _ = try? await call(BeacondMember.setInUse, [.boolean(false)]) }
    }

    /// Registers again with the same beacond after a failure, after a delay that doubles up to `maximumRetry`, if
    /// it still owns the name and nothing registered meanwhile.
    private func retry(_ owner: String) {
        let delay = retryDelay
        retryDelay = min(retryDelay * 2, Self.maximumRetry)
        Task {
            try? await Task.sleep(for: delay)
            guard self.server != nil, self.path == nil, self.currentOwner == owner else { return }
            self.ownerChanged(old: nil, new: owner)
        }
    }

    /// A failure told once, not again while it stays the same (a retry that fails alike says nothing new).
    private func tellFailure(_ news: ClientNews) {
        let error: BeaconLocationError
        switch news {
        case .daemonGone(let failure), .registrationFailed(let failure): error = failure
        default: return tell(news)
        }
        guard error != lastFailure else { return }
        lastFailure = error
        tell(news)
    }

    private func registered(path: String, owner: String) {
        lastFailure = nil
        retryDelay = .seconds(1)
        var early: [IncomingSignal] = []
        if case .registering(_, let waiting, _) = phase { early = waiting }
        phase = .registered(path: path, owner: owner)
        tell(.registered(path: path))
        for signal in early { received(signal) }
        for waiter in registeredWaiters { waiter.resume() }
        registeredWaiters = []
    }
}

/// What of a signal the client reads, taken out of the message (which stays on the loop's side).
private struct IncomingSignal: Sendable {
    let sender: String
    let path: String
    /// The `LocationManager1` member, or `PropertiesChanged`.
    let member: String
    let arguments: [DBusValue]

    init?(_ message: DBusMessage) {
        guard message.kind == .signal, let sender = message.sender, let path = message.path,
            let member = message.member
        else { return nil }
        switch message.interface {
        case BeacondInterface.locationManager?: break
        case "org.freedesktop.DBus.Properties"? where member == "PropertiesChanged": break
        default: return nil
        }
        guard let arguments = try? message.arguments() else { return nil }
        self.sender = sender
        self.path = path
        self.member = member
        self.arguments = arguments
    }
}
