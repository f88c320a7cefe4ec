public import Foundation
import BeacondAPI
import DBus
import Synchronization

/// `CLMonitor` for beacon identity conditions, with a `ServiceSession` for Always:
///
///     let monitor = try await Monitor(appID: "com.example.door")
///     try await monitor.add(BeaconIdentityCondition(uuid: uuid), identifier: "door")
///     for try await event in monitor.events { print(event.identifier, event.state) }
///
/// A condition added before the app may monitor (authorization not given yet, location services off) is kept and
/// monitored as soon as it may; `diagnostics` says meanwhile why no event comes. An event is yielded when a
/// condition's state changes: its first determination, then each change between inside (Core Location's
/// `satisfied`) and outside (`unsatisfied`). A region that becomes unknown again only because beacond restarted
/// yields nothing: the next known state that differs does. beacond keeps the conditions for the app, across this
/// program's exits and its own restarts.
public final class Monitor: Sendable {
    /// `CLMonitor.Event`: a condition's new state, or (with `diagnostic`) why it cannot be monitored now.
    ///
    /// As `CLMonitor.Event`'s diagnostic properties (`authorizationDenied`, `authorizationRequestInProgress`, …)
    /// do, a diagnostic event says in the event stream itself why nothing can happen: the app denied or waiting
    /// for an administrator, beacond gone, a scanner that cannot scan; and a ready one when that is over. One comes
    /// for each condition when the session's diagnostic changes, and one when a condition is added while blocked.
    /// `print(event)` prints either: `door inside`, or `door waiting: <what is wrong and how to fix it>`.
    public struct Event: Hashable, Sendable, CustomStringConvertible {
        public let identifier: String
        /// The new state; for a diagnostic event, the condition's last known state (`unknown` before one).
        public let state: RegionState
        public let date: Date
        public let condition: BeaconIdentityCondition
        /// Queued by beacond while the app had no client, delivered when it came back.
        public let late: Bool
        /// Nil for a state change; else the session's diagnostic: blocked (`isBlocked`, its `message` says the fix)
        /// or ready again.
        public let diagnostic: ServiceSession.Diagnostic?

        public init(
            identifier: String, state: RegionState, date: Date, condition: BeaconIdentityCondition, late: Bool = false,
            diagnostic: ServiceSession.Diagnostic? = nil
        ) {
            self.identifier = identifier
            self.state = state
            self.date = date
            self.condition = condition
            self.late = late
            self.diagnostic = diagnostic
        }

        public var description: String {
            guard let diagnostic else { return "\(identifier) \(state)" }
            return diagnostic.isBlocked ? "\(identifier) waiting: \(diagnostic.message)" : "\(identifier) ready"
        }
    }

    /// `CLMonitor.Record`: a condition and its last event (nil before its first determination).
    public struct Record: Hashable, Sendable {
        public var condition: BeaconIdentityCondition
        public var lastEvent: Event?
    }

    /// At most this many events wait for an iterator (beacond's own queue_limit default); the oldest go first.
    public static let backlogLimit = 1000

    public let session: ServiceSession
    private let tracker: Tracker

    /// A monitor of `appID` on the system bus (or `bus`: "session", a D-Bus address; `$BEACOND_BUS` when nil).
    /// It requests Always if the app's status is not determined. With beacond absent it returns all the same
    /// (`diagnostics` says so) and registers when beacond starts. Throws beacond's refusal of the registration.
    public init(appID: String, bus: String? = nil) async throws(BeaconLocationError) {
        let standing = ServiceSession.Standing(appID: appID, authorization: .always)
        let tracker = Tracker(session: standing)
        standing.observe { [weak tracker] diagnostic in tracker?.diagnosticChanged(diagnostic) }
        let client = try await BeaconClient.connect(appID: appID, bus: bus) { news in
            standing.handle(news)
            tracker.handle(news)
        }
        session = ServiceSession(client: client, standing: standing)
        self.tracker = tracker
        tracker.attach(client)
        await standing.settled()
        await tracker.work.idle()
    }

    /// The identifiers of the conditions this monitor has (monitored, or waiting to be).
    public var identifiers: [String] {
        tracker.state.withLock { Set($0.records.keys).union($0.wanted.keys).sorted() }
    }

    public func record(for identifier: String) -> Record? {
        tracker.state.withLock { $0.records[identifier] }
    }

    /// Conditions that waited for authorization and were then refused by beacond, with why.
    public var refused: [String: BeaconLocationError] { tracker.state.withLock { $0.refused } }

    /// Monitors `condition` as `identifier` (the same identifier again replaces it). Kept until the app may monitor,
    /// if it may not yet. Throws for what waiting cannot fix: an invalid condition, the region limit.
    public func add(_ condition: BeaconIdentityCondition, identifier: String) async throws(BeaconLocationError) {
        guard let client = tracker.client else { throw .daemonUnavailable("this monitor is closed") }
        if await client.isClosed { throw await client.unavailable() }
        try BeaconRegion(beaconIdentityConstraint: condition, identifier: identifier).validate()
        tracker.forgetRefusal(identifier)
        tracker.state.withLock { $0.wanted[identifier] = condition }
        try await tracker.start(identifier, condition)
        // Said in the event stream, not only in `diagnostics`: a program that only iterates events learns why none come.
        if let blocked = tracker.session.blockingNews { tracker.diagnosticEvent(identifier, condition, blocked) }
    }

    /// Stops monitoring `identifier`. Throws while beacond is away (it keeps the app's regions, so the region
    /// would come back at the next registration): remove it again once `diagnostics` says ready.
    public func remove(_ identifier: String) async throws(BeaconLocationError) {
        let waitingOnly = tracker.state.withLock { state in
            let waiting = state.wanted.removeValue(forKey: identifier) != nil
            return waiting && state.records[identifier] == nil
        }
        tracker.forgetRefusal(identifier)
        if waitingOnly { return } // it never reached beacond
        guard let client = tracker.client else { throw .daemonUnavailable("this monitor is closed") }
        do {
            _ = try await client.call(BeacondMember.stopMonitoring, [.string(identifier)])
        } catch  where error.beacondError == .unknownRegion {
            // Already gone at beacond.
        }
        tracker.state.withLock { _ = $0.records.removeValue(forKey: identifier) }
        tracker.session.noteLimit("")
    }

    /// Each condition's state changes, in order, as they happen. Ends when the monitor is closed; throws when its
    /// bus connection is lost. The first iterator also gets, first, the events that came before anyone iterated.
    public var events: AsyncThrowingStream<Event, any Error> { tracker.events() }

    /// The session's diagnostics: why no event comes, each time that changes.
    public var diagnostics: AsyncStream<ServiceSession.Diagnostic> { session.diagnostics }

    public func close() async {
        await session.close()
    }

    /// What the monitor keeps track of: each condition's record, the conditions wanted while beacond cannot take
    /// them, the refusals, and the event streams handed out.
    final class Tracker: Sendable {
        struct State {
            /// Weak: the face holds the client; a face dropped without `close()` takes its thread with it.
            weak var client: BeaconClient?
            var records: [String: Record] = [:]
            var wanted = WaitingConditions()
            var refused: [String: BeaconLocationError] = [:]
            var watchers: [Int: AsyncThrowingStream<Event, any Error>.Continuation] = [:]
            var nextWatcher = 0
            var backlog: [Event] = []
            /// Nil while running; then how it ended (nil error: closed).
            var ending: BeaconLocationError??
        }

        let session: ServiceSession.Standing
        let state = Mutex(State())
        let work = SerialWork()

        init(session: ServiceSession.Standing) {
            self.session = session
        }

        func attach(_ client: BeaconClient) {
            state.withLock { $0.client = client }
            work.open()
        }
        var client: BeaconClient? { state.withLock { $0.client } }

        func events() -> AsyncThrowingStream<Event, any Error> {
            let (stream, continuation) = AsyncThrowingStream.makeStream(of: Event.self, throwing: (any Error).self)
            let id = state.withLock { state -> Int? in
                for event in state.backlog { continuation.yield(event) }
                state.backlog = []
                if let ending = state.ending {
                    continuation.finish(throwing: ending)
                    return nil
                }
                state.nextWatcher += 1
                state.watchers[state.nextWatcher] = continuation
                return state.nextWatcher
            }
            if let id {
                continuation.onTermination = { [weak self] _ in
                    _ = self?.state.withLock { $0.watchers.removeValue(forKey: id) }
                }
            }
            return stream
        }

        func forgetRefusal(_ identifier: String) {
            let none = state.withLock { state -> Bool in
                state.refused.removeValue(forKey: identifier) != nil && state.refused.isEmpty
            }
            if none { session.noteRefusal("") }
        }

        /// StartMonitoring now, if the app may; otherwise it waits in `wanted`.
        func start(_ identifier: String, _ condition: BeaconIdentityCondition) async throws(BeaconLocationError) {
            guard let client, await client.isRegistered, session.authorized else { return }
            let region = BeaconRegion(beaconIdentityConstraint: condition, identifier: identifier)
            do {
                _ = try await client.call(BeacondMember.startMonitoring, [.vardict(region.dictionary)])
            } catch {
                switch error.beacondError {
                case .notAuthorized?, .locationServicesDisabled?: return // waits, as above
                case _ where error.name == BeaconLocationError.daemonUnavailableName: return
                case .regionLimitExceeded?: session.noteLimit(error.message)
                default: break
                }
                state.withLock { _ = $0.wanted.removeValue(forKey: identifier) }
                throw error
            }
            state.withLock { state in
                state.wanted[identifier] = nil
                state.records[identifier, default: Record(condition: condition)].condition = condition
            }
            session.noteLimit("")
        }

        /// The conditions waiting for authorization, now that the app may monitor.
        private func startWanted() async {
            guard session.authorized else { return }
            for (identifier, condition) in state.withLock({ $0.wanted.entries }) {
                do {
                    try await start(identifier, condition)
                } catch {
                    // Refused now that it could be monitored: said, not dropped (`refused`, the diagnostics). Its
                    // record (kept across the denial for its last event) goes: beacond monitors nothing of it.
                    state.withLock {
                        $0.refused[identifier] = error
                        $0.records[identifier] = nil
                    }
                    session.noteRefusal("\(identifier) was refused: \(error.message)")
                }
            }
        }

        /// The regions beacond keeps for the app become records (at registration, and after a takeover).
        private func refreshRecords() async {
            guard let client, let value = try? await client.clientProperty(BeacondMember.monitoredRegions) else { return }
            let regions = SignalArguments.regions(value)
            state.withLock { state in
                for region in regions where state.records[region.identifier] == nil {
                    state.records[region.identifier] = Record(condition: region.beaconIdentityConstraint)
                }
            }
        }

        func handle(_ news: ClientNews) {
            switch news {
            case .registered:
                work.add {
                    await self.refreshRecords()
                    await self.startWanted()
                }
            case .ended(let error):
                let watchers = state.withLock { state in
                    state.ending = .some(error)
                    defer { state.watchers = [:] }
                    return state.watchers
                }
                for watcher in watchers.values { watcher.finish(throwing: error) }
            case .signal(let member, let arguments):
                signal(member, arguments)
            default:
                break
            }
        }

        private func signal(_ member: String, _ values: [DBusValue]) {
            let arguments = SignalArguments(values)
            switch member {
            case BeacondMember.didDetermineState:
                guard let state = RegionState(rawValue: arguments.text(0)), let region = arguments.region(1) else { return }
                event(region, state, arguments.event(2))
            case BeacondMember.didEnterRegion:
                if let region = arguments.region(0) { event(region, .inside, arguments.event(1)) }
            case BeacondMember.didExitRegion:
                if let region = arguments.region(0) { event(region, .outside, arguments.event(1)) }
            case BeacondMember.monitoringDidFail:
                guard let region = arguments.region(0) else { return }
                let error = arguments.error
                state.withLock { state in
                    if error.beacondError == .notAuthorized || error.beacondError == .locationServicesDisabled {
                        // Again once authorized. The record keeps its last event: the state beacond determines
                        // then is an event only if it differs (one change, one event); the diagnostic events say
                        // meanwhile why it is not monitored.
                        state.wanted[region.identifier] = region.beaconIdentityConstraint
                    } else if error.beacondError != .regionReplaced {
                        // (A replaced region's identifier lives on in the region that replaced it.)
                        state.records[region.identifier] = nil
                    }
                }
            case BeacondMember.authorizationChanged:
                work.add { await self.startWanted() }
            case "PropertiesChanged":
                if arguments.changedProperties.contains(BeacondMember.monitoredRegions) {
                    work.add { await self.refreshRecords() }
                }
            default:
                break
            }
        }

        /// One diagnostic event per condition.
        func diagnosticChanged(_ diagnostic: ServiceSession.Diagnostic) {
            let conditions = state.withLock { state in
                var conditions = state.records.mapValues(\.condition)
                for (identifier, condition) in state.wanted.entries { conditions[identifier] = condition }
                return conditions
            }
            for (identifier, condition) in conditions.sorted(by: { $0.key < $1.key }) {
                diagnosticEvent(identifier, condition, diagnostic)
            }
        }

        func diagnosticEvent(_ identifier: String, _ condition: BeaconIdentityCondition, _ diagnostic: ServiceSession.Diagnostic) {
            state.withLock { state in
                let event = Event(
                    identifier: identifier, state: state.records[identifier]?.lastEvent?.state ?? .unknown, date: Date(),
                    condition: condition, diagnostic: diagnostic)
                deliver(event, &state)
            }
        }

        private func deliver(_ event: Event, _ state: inout State) {
            if state.watchers.isEmpty {
                state.backlog.append(event)
                if state.backlog.count > Monitor.backlogLimit { state.backlog.removeFirst() }
            }
            for watcher in state.watchers.values { watcher.yield(event) }
        }

        private func event(_ region: BeaconRegion, _ regionState: RegionState, _ info: RegionEventInfo) {
            state.withLock { state in
                var record = state.records[region.identifier] ?? Record(condition: region.beaconIdentityConstraint)
                if let last = record.lastEvent, regionState == last.state || regionState == .unknown {
                    return // no change, or beacond cannot tell for now (it restarted): not an event
                }
                let event = Event(
                    identifier: region.identifier, state: regionState, date: info.timestamp,
                    condition: region.beaconIdentityConstraint, late: info.late)
                record.lastEvent = event
                state.records[region.identifier] = record
                deliver(event, &state)
            }
        }
    }
}

/// Conditions waiting to be monitored, in the order they were added (so they are started, and refused at the
/// limit, in that order).
struct WaitingConditions {
    private(set) var entries: [(identifier: String, condition: BeaconIdentityCondition)] = []

    var keys: [String] { entries.map(\.identifier) }

    subscript(identifier: String) -> BeaconIdentityCondition? {
        get { entries.first { $0.identifier == identifier }?.condition }
        set {
            if let index = entries.firstIndex(where: { $0.identifier == identifier }) {
                if let newValue { entries[index].condition = newValue } else { entries.remove(at: index) }
            } else if let newValue {
                entries.append((identifier, newValue))
            }
        }
    }

    @discardableResult
    mutating func removeValue(forKey identifier: String) -> BeaconIdentityCondition? {
        defer { self[identifier] = nil }
        return self[identifier]
    }
}
