import BeacondAPI
import DBus
import Synchronization

/// `CLLocationManagerDelegate` for beacons. Every method has a default that does nothing: implement what you
/// need. They are called on the client's own thread (the one its D-Bus connection runs on), one at a time, in the
/// order beacond sent what they report; return quickly.
public protocol LocationManagerDelegate: AnyObject, Sendable {
    /// The app's authorization changed (also called once when the delegate is set, as Core Location does).
    func locationManagerDidChangeAuthorization(_ manager: LocationManager)
    func locationManager(_ manager: LocationManager, didStartMonitoringFor region: BeaconRegion)
    func locationManager(_ manager: LocationManager, didDetermineState state: RegionState, for region: BeaconRegion)
    func locationManager(_ manager: LocationManager, didEnterRegion region: BeaconRegion)
    func locationManager(_ manager: LocationManager, didExitRegion region: BeaconRegion)
    /// About once a second per constraint being ranged.
    func locationManager(
        _ manager: LocationManager, didRange beacons: [Beacon], satisfying constraint: BeaconIdentityConstraint)
    /// A region stopped being monitored: authorization revoked, location services off, or replaced. As in Core
    /// Location, `error` is `any Error`; it is a `BeaconLocationError` (`error as? BeaconLocationError`).
    func locationManager(_ manager: LocationManager, monitoringDidFailFor region: BeaconRegion?, withError error: any Error)
    /// Ranging of `constraint` failed: refused (it stops), or beacond cannot scan now
    /// (`org.beacond.Client.RangingUnavailable`: it goes on, and beacons come again once beacond scans).
    func locationManager(_ manager: LocationManager, didFailRangingFor constraint: BeaconIdentityConstraint, error: any Error)
    /// beacond went away (the manager registers again when it is back), refused the registration, or the bus is
    /// gone (the manager is closed).
    func locationManager(_ manager: LocationManager, didFailWithError error: any Error)

    // The same three with the error typed. A delegate may implement these instead: the defaults of the ones
    // above call them, so either spelling is called (implement one of the two, not both).
    func locationManager(
        _ manager: LocationManager, monitoringDidFailFor region: BeaconRegion?, withError error: BeaconLocationError)
    func locationManager(
        _ manager: LocationManager, didFailRangingFor constraint: BeaconIdentityConstraint, error: BeaconLocationError)
    func locationManager(_ manager: LocationManager, didFailWithError error: BeaconLocationError)
}

extension LocationManagerDelegate {
    public func locationManagerDidChangeAuthorization(_ manager: LocationManager) {}
    public func locationManager(_ manager: LocationManager, didStartMonitoringFor region: BeaconRegion) {}
    public func locationManager(
        _ manager: LocationManager, didDetermineState state: RegionState, for region: BeaconRegion
    ) {}
    public func locationManager(_ manager: LocationManager, didEnterRegion region: BeaconRegion) {}
    public func locationManager(_ manager: LocationManager, didExitRegion region: BeaconRegion) {}
    public func locationManager(
        _ manager: LocationManager, didRange beacons: [Beacon], satisfying constraint: BeaconIdentityConstraint
    ) {}
    public func locationManager(
        _ manager: LocationManager, monitoringDidFailFor region: BeaconRegion?, withError error: any Error
    ) {
        locationManager(manager, monitoringDidFailFor: region, withError: BeaconLocationError(error))
    }
    public func locationManager(
        _ manager: LocationManager, didFailRangingFor constraint: BeaconIdentityConstraint, error: any Error
    ) {
        locationManager(manager, didFailRangingFor: constraint, error: BeaconLocationError(error))
    }
    public func locationManager(_ manager: LocationManager, didFailWithError error: any Error) {
        locationManager(manager, didFailWithError: BeaconLocationError(error))
    }
    public func locationManager(
        _ manager: LocationManager, monitoringDidFailFor region: BeaconRegion?, withError error: BeaconLocationError
    ) {}
    public func locationManager(
        _ manager: LocationManager, didFailRangingFor constraint: BeaconIdentityConstraint, error: BeaconLocationError
    ) {}
    public func locationManager(_ manager: LocationManager, didFailWithError error: BeaconLocationError) {}
}

/// `CLLocationManager` for beacons: one client of `appID` on beacond, registered again by itself when beacond
/// restarts (its regions are the app's and stay; its ranging and "not in use" are started again).
///
///     let manager = try await LocationManager(appID: "com.example.door")
///     manager.delegate = door
///     try await manager.requestAlwaysAuthorization()
///     try await manager.startMonitoring(for: BeaconRegion(uuid: uuid, identifier: "door"))
///
/// Where Core Location reports a refused start through the delegate, these calls throw at once, with beacond's
/// message saying what is missing and how to fix it; failures that come later (an administrator revokes Always)
/// reach the delegate. Nothing fails silently.
public final class LocationManager: Sendable {
    package let client: BeaconClient
    private let delivery: Delivery

    /// Connects as `appID` on the system bus (or `bus`: "session", a D-Bus address; `$BEACOND_BUS` when nil).
    /// With beacond not running it returns all the same and registers when beacond starts (the delegate hears
    /// `didFailWithError` meanwhile). Throws beacond's refusal: an app it does not know, a user the app's
    /// declaration does not allow.
    public init(
        appID: String, bus: String? = nil, delegate: (any LocationManagerDelegate)? = nil
    ) async throws(BeaconLocationError) {
        let delivery = Delivery()
        delivery.state.withLock { $0.delegate = delegate }
        self.delivery = delivery
        client = try await BeaconClient.connect(appID: appID, bus: bus) { news in delivery.handle(news) }
        delivery.attach(self)
        // What came while connecting (the registration's AuthorizationChanged, an Always app's queued events, or
        // beacond's absence) reaches the delegate now, in order, before anything after it.
        await withCheckedContinuation { continuation in
            client.loop.execute { [delivery] in
                delivery.replayHeldNews()
                continuation.resume()
            }
        }
        await delivery.work.idle()
    }

    /// Held weakly, as Core Location holds it. Setting it calls `locationManagerDidChangeAuthorization` once.
    public var delegate: (any LocationManagerDelegate)? {
        get { delivery.state.withLock { $0.delegate } }
        set {
            delivery.state.withLock {
                $0.delegate = newValue
                $0.delegateToldStatus = false
            }
            guard newValue != nil else { return }
            client.loop.execute { [delivery] in delivery.tellAuthorization(greeting: true) }
        }
    }

    public var appID: String { client.appID }

    // MARK: Authorization

    /// The app's status as beacond last said it.
    public var authorizationStatus: AuthorizationStatus { delivery.state.withLock { $0.status } }

    /// Asks while `notDetermined` (else does nothing); the answer comes to `locationManagerDidChangeAuthorization`.
    /// Returns the status now: `notDetermined` while an administrator decides (`beaconctl auth pending`).
    @discardableResult
    public func requestWhenInUseAuthorization() async throws(BeaconLocationError) -> AuthorizationStatus {
        try await request(BeacondMember.requestWhenInUseAuthorization)
    }

    /// As `requestWhenInUseAuthorization`, for Always (and the one WhenInUse → Always upgrade).
    @discardableResult
    public func requestAlwaysAuthorization() async throws(BeaconLocationError) -> AuthorizationStatus {
        try await request(BeacondMember.requestAlwaysAuthorization)
    }

    private func request(_ member: String) async throws(BeaconLocationError) -> AuthorizationStatus {
        let reply = try await client.call(member)
        return reply.values.first?.stringValue.flatMap(AuthorizationStatus.init(rawValue:)) ?? .notDetermined
    }

    // MARK: Monitoring

    /// The app's regions this client monitors, those beacond kept from the app's earlier clients too.
    public var monitoredRegions: Set<BeaconRegion> { Set(delivery.state.withLock { $0.regions.values }) }

    /// Needs `authorizedAlways`. The same identifier again replaces the region. beacond keeps it for the app
    /// until `stopMonitoring`, across this program's exits and its own restarts.
    public func startMonitoring(for region: BeaconRegion) async throws(BeaconLocationError) {
        try region.validate()
        _ = try await client.call(BeacondMember.startMonitoring, [.vardict(region.dictionary)])
        delivery.changeRegions { $0[region.identifier] = region }
    }

    public func stopMonitoring(for region: BeaconRegion) async throws(BeaconLocationError) {
        _ = try await client.call(BeacondMember.stopMonitoring, [.string(region.identifier)])
        delivery.changeRegions { $0[region.identifier] = nil }
    }

    /// The region's state comes to `didDetermineState` at once.
    public func requestState(for region: BeaconRegion) async throws(BeaconLocationError) {
        _ = try await client.call(BeacondMember.requestState, [.string(region.identifier)])
    }

    /// When the region event being delivered now happened, and whether it is late (queued while the app had no
    /// client): read it in `didEnterRegion`, `didExitRegion` or `didDetermineState`.
    public var currentRegionEvent: RegionEventInfo? { delivery.state.withLock { $0.currentEvent } }

    // MARK: Ranging

    public var rangedBeaconConstraints: Set<BeaconIdentityConstraint> { Set(delivery.state.withLock { $0.ranged }) }

    /// `didRange` about once a second. Needs `authorizedAlways`, or `authorizedWhenInUse` while in use. Started
    /// again by itself after beacond restarts.
    public func startRangingBeacons(satisfying constraint: BeaconIdentityConstraint) async throws(BeaconLocationError) {
        _ = try await client.startRanging(constraint)
        let ranged = await client.ranged
        let problem = delivery.state.withLock { state in
            state.ranged = ranged
            return state.scannerProblem
        }
        // Started while beacond cannot scan: said now, not only at the next change.
        if let problem { client.loop.execute { [delivery] in delivery.tellRangingUnavailable(constraint, problem) } }
    }

    public func stopRangingBeacons(satisfying constraint: BeaconIdentityConstraint) async throws(BeaconLocationError) {
        defer { delivery.state.withLock { $0.ranged.removeAll { $0 == constraint } } }
        _ = try await client.stopRanging(constraint)
    }

    /// False when the program goes to the background: a WhenInUse app's ranging pauses until true again.
    public func setInUse(_ inUse: Bool) async throws(BeaconLocationError) {
        try await client.setInUse(inUse)
    }

    /// Ends this client: its ranging stops; the app's regions stay monitored (they are the app's, as in Core
    /// Location), and their events wait for its next client.
    public func close() async {
        await client.close()
    }

    /// Until `close()`, or the bus connection is lost.
    public func waitUntilClosed() async {
        await delivery.waitUntilEnded()
    }

    // MARK: beacond's signals to the delegate

    /// What beacond said to this manager and its delivery to the delegate, in order: the manager's state, read
    /// from any thread, written on the client's loop and by the calls above.
    final class Delivery: Sendable {
        struct State {
            weak var delegate: (any LocationManagerDelegate)?
            weak var manager: LocationManager?
            /// Weak: the face holds the client; a face dropped without `close()` takes its thread with it.
            weak var client: BeaconClient?
            var status = AuthorizationStatus.notDetermined
            var regions: [String: BeaconRegion] = [:]
            var ranged: [BeaconIdentityConstraint] = []
            var currentEvent: RegionEventInfo?
            /// beacond said the status (registration sends it); and the delegate has heard it since it was set.
            var statusHeard = false
            var delegateToldStatus = false
            var ended = false
            var endWaiters: [CheckedContinuation<Void, Never>] = []
            /// News held until the manager exists (it comes while the client connects); nil once replayed.
            var held: [ClientNews]? = []
            /// Bumped by every change of `regions` made here, so a refresh that raced one reads again.
            var regionsVersion = 0
            /// Why beacond cannot scan, as its `ScannerState` last said (nil: it can).
            var scannerProblem: String?
            /// PropertiesChanged of `ScannerState` so far: a read that was out meanwhile answers with an older value.
            var scannerNews = 0
        }

        let state = Mutex(State())
        /// Region refreshes, one after the other.
        let work = SerialWork()

        func attach(_ manager: LocationManager) {
            state.withLock {
                $0.manager = manager
                $0.client = manager.client
            }
        }

        /// On the loop: the news held while connecting, in order; then news is handled as it comes.
        func replayHeldNews() {
            let held = state.withLock { state in
                defer { state.held = nil }
                return state.held ?? []
            }
            for news in held { handle(news) }
            work.open()
            tellAuthorization(greeting: true)
        }

        /// Calls the delegate, if there is one (on the loop thread, outside the lock).
        func deliver(_ body: (any LocationManagerDelegate, LocationManager) -> Void) {
            let (delegate, manager) = state.withLock { ($0.delegate, $0.manager) }
            guard let delegate, let manager else { return }
            body(delegate, manager)
        }

        /// `locationManagerDidChangeAuthorization`. A `greeting` (a delegate just set) tells only a delegate that
        /// has not heard the status since it was set, and only once beacond said it; else the AuthorizationChanged
        /// that comes tells it. The delegate told is the one read with the flag, under one lock, so a delegate set
        /// meanwhile from another thread is never told twice. On the loop, in order with the signals.
        func tellAuthorization(greeting: Bool) {
            let target = state.withLock { state -> (any LocationManagerDelegate, LocationManager)? in
                if greeting, !state.statusHeard || state.delegateToldStatus { return nil }
                guard let delegate = state.delegate, let manager = state.manager else { return nil }
                state.delegateToldStatus = true
                return (delegate, manager)
            }
            if let (delegate, manager) = target { delegate.locationManagerDidChangeAuthorization(manager) }
        }

        func changeRegions(_ body: (inout [String: BeaconRegion]) -> Void) {
            state.withLock {
                body(&$0.regions)
                $0.regionsVersion += 1
            }
        }

        func waitUntilEnded() async {
            await withCheckedContinuation { continuation in
                let ended = state.withLock { state in
                    if !state.ended { state.endWaiters.append(continuation) }
                    return state.ended
                }
                if ended { continuation.resume() }
            }
        }

        /// The regions beacond says this client monitors (at registration and after a takeover). A snapshot that
        /// raced a change made here (a stop, a failure) is read again, not written over it.
        func refreshRegions() async {
            for _ in 0..<5 {
                guard let (client, version) = state.withLock({ state in state.client.map { ($0, state.regionsVersion) } }),
                    let value = try? await client.clientProperty(BeacondMember.monitoredRegions)
                else { return }
                let regions = SignalArguments.regions(value)
                let applied = state.withLock { state in
                    guard state.regionsVersion == version else { return false }
                    state.regions = Dictionary(regions.map { ($0.identifier, $0) }, uniquingKeysWith: { $1 })
                    return true
                }
                if applied { return }
            }
        }

        func handle(_ news: ClientNews) {
            let holding = state.withLock { state in
                state.held?.append(news)
                return state.held != nil
            }
            if holding { return }
            switch news {
            case .registered:
                // Read after the news (the property is a call, which must not block the loop), in order.
                work.add {
                    await self.refreshRegions()
                    await self.readScannerState()
                }
            case .daemonGone(let error), .registrationFailed(let error):
                // A new beacond says its scanner state afresh: a failure then is told again.
                state.withLock { $0.scannerProblem = nil }
                deliver { $0.locationManager($1, didFailWithError: error as any Error) }
            case .inUseChanged:
                break
            case .managerChanged(let changed):
                if let scanner = changed[BeacondMember.scannerState]?.unwrapped.stringValue {
                    state.withLock { $0.scannerNews += 1 }
                    scannerStateChanged(scanner)
                }
            case .ended(let error):
                let waiters = state.withLock { state in
                    state.ended = true
                    defer { state.endWaiters = [] }
                    return state.endWaiters
                }
                for waiter in waiters { waiter.resume() }
                if let error { deliver { $0.locationManager($1, didFailWithError: error as any Error) } }
            case .signal(let member, let arguments):
                signal(member, arguments)
            }
        }

        private func readScannerState() async {
            let (client, news) = state.withLock { ($0.client, $0.scannerNews) }
            guard let client,
                let scanner = try? await client.managerProperty(BeacondMember.scannerState).unwrapped.stringValue
            else { return }
            client.loop.execute { [self] in
                // A change beacond signalled while the read was out is newer than this answer.
                guard state.withLock({ $0.scannerNews == news }) else { return }
                scannerStateChanged(scanner)
            }
        }

        /// beacond cannot scan: each ranged constraint's `didFailRangingFor` says so (`RangingUnavailable`), once
        /// until it scans again. The ranging stays started; beacons come again when it does.
        func scannerStateChanged(_ scannerState: String) {
            let problem = ServiceSession.Standing.scannerProblem(scannerState)
            let failed = state.withLock { state -> [BeaconIdentityConstraint] in
                defer { state.scannerProblem = problem }
                return problem != nil && state.scannerProblem == nil ? state.ranged : []
            }
            guard let problem else { return }
            for constraint in failed { tellRangingUnavailable(constraint, problem) }
        }

        func tellRangingUnavailable(_ constraint: BeaconIdentityConstraint, _ problem: String) {
            let error = BeaconLocationError.rangingUnavailable(problem)
            deliver { $0.locationManager($1, didFailRangingFor: constraint, error: error as any Error) }
        }

        private func signal(_ member: String, _ values: [DBusValue]) {
            let arguments = SignalArguments(values)
            func event(_ index: Int) { state.withLock { $0.currentEvent = arguments.event(index) } }
            switch member {
            case BeacondMember.authorizationChanged:
                guard let status = AuthorizationStatus(rawValue: arguments.text(0)) else { return }
                state.withLock {
                    $0.status = status
                    $0.statusHeard = true
                }
                tellAuthorization(greeting: false)
            case BeacondMember.didStartMonitoring:
                guard let region = arguments.region(0) else { return }
                changeRegions { $0[region.identifier] = region }
                deliver { $0.locationManager($1, didStartMonitoringFor: region) }
            case BeacondMember.didDetermineState:
                guard let state = RegionState(rawValue: arguments.text(0)), let region = arguments.region(1) else { return }
                event(2)
                deliver { $0.locationManager($1, didDetermineState: state, for: region) }
            case BeacondMember.didEnterRegion:
                guard let region = arguments.region(0) else { return }
                event(1)
                deliver { $0.locationManager($1, didEnterRegion: region) }
            case BeacondMember.didExitRegion:
                guard let region = arguments.region(0) else { return }
                event(1)
                deliver { $0.locationManager($1, didExitRegion: region) }
            case BeacondMember.didRangeBeacons:
                guard let constraint = arguments.constraint(1) else { return }
                let beacons = arguments.beacons(0)
                deliver { $0.locationManager($1, didRange: beacons, satisfying: constraint) }
            case BeacondMember.monitoringDidFail:
                let region = arguments.region(0)
                let error = arguments.error
                if let region, error.beacondError != .regionReplaced {
                    // (A replaced region's identifier lives on in the region that replaced it.)
                    changeRegions { regions in
                        if regions[region.identifier] == region { regions[region.identifier] = nil }
                    }
                }
                deliver { $0.locationManager($1, monitoringDidFailFor: region, withError: error as any Error) }
            case BeacondMember.rangingDidFail:
                guard let constraint = arguments.constraint(0) else { return }
                let error = arguments.error
                state.withLock { $0.ranged.removeAll { $0 == constraint } }
                if let client = state.withLock({ $0.client }) {
                    client.assumeIsolated { $0.forgetRanging(constraint) }
                }
                deliver { $0.locationManager($1, didFailRangingFor: constraint, error: error as any Error) }
            case "PropertiesChanged":
                // A takeover gave this client the regions of the app's other clients.
                if arguments.changedProperties.contains(BeacondMember.monitoredRegions) {
                    work.add { await self.refreshRegions() }
                }
            default:
                break
            }
        }
    }
}
