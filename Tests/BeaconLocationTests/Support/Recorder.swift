import BeaconLocation
import Synchronization

/// A delegate that writes down what it is told, in order.
final class Recorder: LocationManagerDelegate {
    enum Call: Equatable, Sendable {
        case authorization(AuthorizationStatus)
        case enter(String, late: Bool)
        case exit(String, late: Bool)
        case state(RegionState, String)
        case range([Beacon], BeaconIdentityConstraint)
        case monitoringFailed(String?, String)
        case rangingFailed(BeaconIdentityConstraint, String)
        case error(String)
    }

    private let log = Mutex<[Call]>([])

    var calls: [Call] { log.withLock { $0 } }

    func locationManagerDidChangeAuthorization(_ manager: LocationManager) {
        log.withLock { $0.append(.authorization(manager.authorizationStatus)) }
    }
    func locationManager(_ manager: LocationManager, didEnterRegion region: BeaconRegion) {
        log.withLock { $0.append(.enter(region.identifier, late: manager.currentRegionEvent?.late ?? false)) }
    }
    func locationManager(_ manager: LocationManager, didExitRegion region: BeaconRegion) {
        log.withLock { $0.append(.exit(region.identifier, late: manager.currentRegionEvent?.late ?? false)) }
    }
    func locationManager(_ manager: LocationManager, didDetermineState state: RegionState, for region: BeaconRegion) {
        log.withLock { $0.append(.state(state, region.identifier)) }
    }
    func locationManager(
        _ manager: LocationManager, didRange beacons: [Beacon], satisfying constraint: BeaconIdentityConstraint
    ) {
        log.withLock { $0.append(.range(beacons, constraint)) }
    }
    func locationManager(
        _ manager: LocationManager, monitoringDidFailFor region: BeaconRegion?, withError error: BeaconLocationError
    ) {
        log.withLock { $0.append(.monitoringFailed(region?.identifier, error.name)) }
    }
    func locationManager(
        _ manager: LocationManager, didFailRangingFor constraint: BeaconIdentityConstraint, error: BeaconLocationError
    ) {
        log.withLock { $0.append(.rangingFailed(constraint, error.name)) }
    }
    func locationManager(_ manager: LocationManager, didFailWithError error: BeaconLocationError) {
        log.withLock { $0.append(.error(error.name)) }
    }

    var entries: [Call] { calls.filter { if case .enter = $0 { true } else { false } } }
    var exits: [Call] { calls.filter { if case .exit = $0 { true } else { false } } }
    var ranged: [[Beacon]] { calls.compactMap { if case .range(let beacons, _) = $0 { beacons } else { nil } } }
    var statuses: [AuthorizationStatus] { calls.compactMap { if case .authorization(let s) = $0 { s } else { nil } } }
}
