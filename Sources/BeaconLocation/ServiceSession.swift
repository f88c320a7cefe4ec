import BeacondAPI
import DBus
import Synchronization

/// `CLServiceSession(authorization:)`: holds the authorization the app needs, asks for it once (only while
/// `notDetermined`, as iOS asks), and says through `diagnostics` why events do not arrive yet: the silent failure
/// of Core Location's first releases, made impossible to miss.
public final class ServiceSession: Sendable {
    /// `CLServiceSession.AuthorizationRequirement`.
    public enum AuthorizationRequirement: String, Sendable {
        case whenInUse, always
    }

    /// `CLServiceSession.Diagnostic`, with what beacond adds. `isBlocked` is false and `message` empty when
    /// nothing stands in the way.
    public struct Diagnostic: Hashable, Sendable, CustomStringConvertible {
        public var daemonUnavailable = false
        public var authorizationDenied = false
        public var authorizationRestricted = false
        public var locationServicesDisabled = false
        public var authorizationRequestInProgress = false
        public var alwaysAuthorizationDenied = false
        public var insufficientlyInUse = false
        public var regionLimitExceeded = false
        /// A condition added while the app could not monitor was refused by beacond once it could
        /// (`Monitor.refused` says which and why).
        public var conditionRefused = false
        /// beacond cannot scan (no adapter, bluetoothd gone, a scanner that failed): nothing can be seen, so no
        /// event comes and ranging is empty until it scans again, which it tries by itself.
        public var scannerUnavailable = false
        /// What is missing and how to fix it, in beacond's words where it said them.
        public var message = ""

        public var isBlocked: Bool { !message.isEmpty }
        public var description: String { isBlocked ? message : "ready" }
    }

    public let authorization: AuthorizationRequirement
    package let client: BeaconClient
    let standing: Standing

    /// A session of `appID` on the system bus (or `bus`; `$BEACOND_BUS`), requesting `authorization`.
    public convenience init(
        appID: String, authorization: AuthorizationRequirement = .always, bus: String? = nil
    ) async throws(BeaconLocationError) {
        let standing = Standing(appID: appID, authorization: authorization)
        let client = try await BeaconClient.connect(appID: appID, bus: bus) { standing.handle($0) }
        self.init(client: client, standing: standing)
        await standing.settled()
    }

    init(client: BeaconClient, standing: Standing) {
        self.client = client
        self.standing = standing
        self.authorization = standing.authorization
        standing.attach(client)
    }

    /// The app's status as beacond last said it.
    public var authorizationStatus: AuthorizationStatus { standing.state.withLock { $0.status } }

    /// What stands in the way now.
    public var diagnostic: Diagnostic { standing.state.withLock { standing.diagnostic($0) } }

    /// The diagnostic now, then each time it changes. Ends when the client is closed.
    public var diagnostics: AsyncStream<Diagnostic> { standing.diagnostics() }

    /// False when the program goes to the background: a WhenInUse app's ranging pauses (`insufficientlyInUse`).
    public func setInUse(_ inUse: Bool) async throws(BeaconLocationError) {
        try await client.setInUse(inUse)
    }

    public func close() async {
        await client.close()
    }

    /// The app's standing with beacond as last said: its authorization, whether it is registered or beacond is
    /// away, location services and the scanner, and the diagnostic they make.
    final class Standing: Sendable {
        struct State {
            /// Weak: the face holds the client; a face dropped without `close()` takes its thread with it.
            weak var client: BeaconClient?
            var status = AuthorizationStatus.notDetermined
            var registered = false
            var unavailable: BeaconLocationError?
            var servicesEnabled = true
            /// Manager1 `ScannerState`, as beacond last said it.
            var scannerState = BeacondScannerState.idle
            /// PropertiesChanged of each property so far: a read that was out meanwhile answers with an older
            /// value (its reply came before the signal, but is taken in a task that may run after it).
            var servicesNews = 0
            var scannerNews = 0
            /// AuthorizationChanged so far: a request's reply says the status when beacond answered it, which a
            /// signal taken meanwhile has made old (the request waits for an administrator who may answer first).
            var statusNews = 0
            var inUse = true
            var requested = false
            var upgradeRequested = false
            var requestError = ""
            var limitMessage = ""
            var refusalMessage = ""
            var ended = false
            var watchers: [Int: AsyncStream<Diagnostic>.Continuation] = [:]
            var nextWatcher = 0
            var last: Diagnostic?
            /// Told each change that is news to a program (`Monitor`'s diagnostic events).
            var observers: [@Sendable (Diagnostic) -> Void] = []
            /// What the observers were last told; "ready" at first, so a monitor opened where nothing stands in the
            /// way says nothing.
            var observed = Diagnostic()
            /// Registered, and beacond's first AuthorizationChanged not heard yet: the status is the previous
            /// beacond's, so what the diagnostic says now is not news.
            var awaitingStatus = false
        }

        let appID: String
        let authorization: AuthorizationRequirement
        let state = Mutex(State())
        let work = SerialWork()

        init(appID: String, authorization: AuthorizationRequirement) {
            self.appID = appID
            self.authorization = authorization
        }

        func attach(_ client: BeaconClient) {
            state.withLock { $0.client = client }
            work.open()
        }

        /// Until the work the registration started (reading the services switch, the request) is done.
        func settled() async { await work.idle() }

        var authorized: Bool {
            state.withLock { authorized($0.status) }
        }

        func authorized(_ status: AuthorizationStatus) -> Bool {
            authorization == .always ? status == .authorizedAlways : status.allowsRanging
        }

        private var grant: String { authorization == .always ? "always" : "when-in-use" }

        func diagnostic(_ state: State) -> Diagnostic {
            var result = Diagnostic()
            if !state.registered {
                let error = state.unavailable ?? .daemonUnavailable("not registered with beacond yet")
                result.daemonUnavailable = error.name == BeaconLocationError.daemonUnavailableName
                result.message = error.message
                return result
            }
            if !state.servicesEnabled {
                result.locationServicesDisabled = true
                result.authorizationRestricted = true
                result.message =
                    "location services are off on this host: an administrator switches them on with "
                    + "`beaconctl services on` (and `location_services = true` in beacond.toml)"
            } else if state.status == .denied {
                result.authorizationDenied = true
                result.message = "\(appID) is denied: an administrator allows it with `beaconctl auth grant \(appID) \(grant)`"
            } else if state.status == .restricted {
                result.authorizationRestricted = true
                result.message =
                    "\(appID) is restricted by an administrator: `beaconctl auth grant \(appID) \(grant)` lifts it"
            } else if !state.requestError.isEmpty {
                result.message = state.requestError
            } else if state.status == .notDetermined {
                result.authorizationRequestInProgress = state.requested
                result.message =
                    state.requested
                    ? "waiting for an administrator to answer \(appID)'s request: `beaconctl auth pending`, then "
                        + "`beaconctl auth grant \(appID) \(grant)`"
                    : "authorization not requested yet"
            } else if authorization == .always && state.status == .authorizedWhenInUse {
                result.alwaysAuthorizationDenied = true
                result.message =
                    "\(appID) has WhenInUse, and monitoring needs Always: `beaconctl auth grant \(appID) always`"
            } else if let reason = Self.scannerProblem(state.scannerState) {
                result.scannerUnavailable = true
                result.message =
                    "beacond cannot scan: \(reason); it tries again by itself (an administrator sees why in "
                    + "`beaconctl status` and the journal)"
            } else if !state.limitMessage.isEmpty {
                result.regionLimitExceeded = true
                result.message = state.limitMessage
            } else if !state.refusalMessage.isEmpty {
                result.conditionRefused = true
                result.message = state.refusalMessage
            } else if state.status == .authorizedWhenInUse && !state.inUse {
                result.insufficientlyInUse = true
                result.message =
                    "ranging is paused while this WhenInUse client is not in use (setInUse(true) resumes it)"
            }
            return result
        }

        /// Why beacond cannot scan, from its `ScannerState` (nil while it can, or nobody needs it to).
        static func scannerProblem(_ scannerState: String) -> String? {
            for prefix in [BeacondScannerState.failedPrefix, BeacondScannerState.waitingPrefix]
            where scannerState.hasPrefix(prefix) {
                return String(scannerState.dropFirst(prefix.count))
            }
            return nil
        }

        func diagnostics() -> AsyncStream<Diagnostic> {
            let (stream, continuation) = AsyncStream.makeStream(of: Diagnostic.self, bufferingPolicy: .bufferingNewest(64))
            let id = state.withLock { state -> Int? in
                continuation.yield(diagnostic(state))
                if state.ended { return nil }
                state.nextWatcher += 1
                state.watchers[state.nextWatcher] = continuation
                return state.nextWatcher
            }
            guard let id else {
                continuation.finish()
                return stream
            }
            continuation.onTermination = { [weak self] _ in
                _ = self?.state.withLock { $0.watchers.removeValue(forKey: id) }
            }
            return stream
        }

        /// Tells the watchers when the diagnostic changed, and the observers when that is news: not the moment
        /// between beacond's "not determined" and the request the session makes at once.
        func publish() {
            let (news, observers) = state.withLock { state -> (Diagnostic?, [@Sendable (Diagnostic) -> Void]) in
                let now = diagnostic(state)
                guard now != state.last else { return (nil, []) }
                state.last = now
                for watcher in state.watchers.values { watcher.yield(now) }
                // Closed: the events end, and say nothing more (no "waiting: closed" per condition).
                guard !state.ended, !isTransient(state), now != state.observed else { return (nil, []) }
                state.observed = now
                return (now, state.observers)
            }
            if let news { for observer in observers { observer(news) } }
        }

        /// Registered, not determined, and the request not made yet: it is being made.
        func isTransient(_ state: State) -> Bool {
            state.awaitingStatus
                || (state.registered && state.status == .notDetermined && !state.requested && state.requestError.isEmpty)
        }

        /// The diagnostic now, if it is news worth an event (blocked, and not transient).
        var blockingNews: Diagnostic? {
            state.withLock { state in
                let now = diagnostic(state)
                return now.isBlocked && !isTransient(state) ? now : nil
            }
        }

        func observe(_ observer: @escaping @Sendable (Diagnostic) -> Void) {
            state.withLock { $0.observers.append(observer) }
        }

        func noteLimit(_ message: String) {
            state.withLock { $0.limitMessage = message }
            publish()
        }

        func noteRefusal(_ message: String) {
            state.withLock { $0.refusalMessage = message }
            publish()
        }

        func handle(_ news: ClientNews) {
            switch news {
            case .registered:
                state.withLock {
                    $0.registered = true
                    $0.unavailable = nil
                    $0.awaitingStatus = true
                }
                work.add {
                    await self.readServicesSwitch()
                    await self.readScannerState()
                }
            case .managerChanged(let changed):
                state.withLock { state in
                    if let scanner = changed[BeacondMember.scannerState]?.unwrapped.stringValue {
                        state.scannerState = scanner
                        state.scannerNews += 1
                    }
                    if case .boolean(let enabled)? = changed[BeacondMember.locationServicesEnabled]?.unwrapped {
                        state.servicesEnabled = enabled
                        state.servicesNews += 1
                    }
                }
            case .daemonGone(let error), .registrationFailed(let error):
                state.withLock {
                    $0.registered = false
                    $0.unavailable = error
                    // The next beacond says its own scanner state; this one's is not carried over.
                    $0.scannerState = BeacondScannerState.idle
                    $0.awaitingStatus = false
                }
            case .inUseChanged(let inUse):
                state.withLock { $0.inUse = inUse }
            case .ended(let error):
                let watchers = state.withLock { state in
                    state.registered = false
                    state.unavailable = error ?? .daemonUnavailable("this client is closed; make a new one")
                    state.ended = true
                    defer { state.watchers = [:] }
                    return state.watchers
                }
                publish()
                for watcher in watchers.values {
                    watcher.yield(state.withLock { diagnostic($0) })
                    watcher.finish()
                }
                return
            case .signal(BeacondMember.authorizationChanged, let arguments):
                guard let status = arguments.first?.stringValue.flatMap(AuthorizationStatus.init(rawValue:)) else { return }
                let (servicesOff, request) = state.withLock { state -> (Bool, Bool) in
                    state.status = status
                    state.statusNews += 1
                    state.awaitingStatus = false
                    var request = false
                    if status == .notDetermined && !state.requested {
                        request = true
                    } else if authorization == .always && status == .authorizedWhenInUse && !state.upgradeRequested {
                        state.upgradeRequested = true // the one WhenInUse → Always upgrade request
                        request = true
                    }
                    return (status == .restricted || !state.servicesEnabled, request)
                }
                if servicesOff { work.add { await self.readServicesSwitch() } }
                if request { work.add { await self.request() } }
            case .signal:
                return
            }
            publish()
        }

        private func readServicesSwitch() async {
            let (client, news) = state.withLock { ($0.client, $0.servicesNews) }
            guard let client,
                case .boolean(let enabled)? = try? await client.managerProperty(BeacondMember.locationServicesEnabled)
            else { return }
            // A change beacond signalled while the read was out is newer than this answer.
            let taken = state.withLock { state -> Bool in
                guard state.servicesNews == news else { return false }
                state.servicesEnabled = enabled
                return true
            }
            if taken { publish() }
        }

        /// A beacond without `ScannerState` (before 0.4) is taken as able to scan.
        private func readScannerState() async {
            let (client, news) = state.withLock { ($0.client, $0.scannerNews) }
            guard let client,
                let scanner = try? await client.managerProperty(BeacondMember.scannerState).unwrapped.stringValue
            else { return }
            let taken = state.withLock { state -> Bool in
                guard state.scannerNews == news else { return false }
                state.scannerState = scanner
                return true
            }
            if taken { publish() }
        }

        private func request() async {
            let (client, news) = state.withLock { ($0.client, $0.statusNews) }
            guard let client else { return }
            let member =
                authorization == .always
                ? BeacondMember.requestAlwaysAuthorization : BeacondMember.requestWhenInUseAuthorization
            do {
                let reply = try await client.call(member)
                let status = reply.values.first?.stringValue.flatMap(AuthorizationStatus.init(rawValue:))
                state.withLock {
                    if let status, $0.statusNews == news { $0.status = status }
                    $0.requested = true
                    $0.requestError = ""
                }
            } catch {
                // MissingUsageDescription: the app's declaration lacks the text the request shows.
                if error.isRefusal { state.withLock { $0.requestError = error.message } }
            }
            publish()
        }
    }
}

/// Follow-up work (calls the news asked for), run one piece after the other, off the loop thread's callbacks.
/// It waits until `open()`: news comes while the client connects, before its owner has the client to call.
final class SerialWork: Sendable {
    private struct State {
        var last: Task<Void, Never>?
        var waiting: [@Sendable () async -> Void]? = []
    }

    private let state = Mutex(State())

    func add(_ body: @escaping @Sendable () async -> Void) {
        state.withLock { state in
            if state.waiting != nil {
                state.waiting?.append(body)
            } else {
                Self.chain(body, &state)
            }
        }
    }

    private static func chain(_ body: @escaping @Sendable () async -> Void, _ state: inout State) {
        let previous = state.last
        state.last = Task {
            await previous?.value
            await body()
        }
    }

    /// Runs what waited, and from now on what is added.
    func open() {
        state.withLock { state in
            let waiting = state.waiting ?? []
            state.waiting = nil
            for body in waiting { Self.chain(body, &state) }
        }
    }

    /// Until everything added so far is done.
    func idle() async {
        while let task = state.withLock({ $0.last }) {
            await task.value
            if state.withLock({ $0.last }) == task { return }
        }
    }
}
