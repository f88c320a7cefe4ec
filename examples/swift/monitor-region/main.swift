// The iOS articles' flow on Linux: a manager with a delegate asks for Always, then monitors a region and prints
// each entry and exit. beacond's restarts are handled by the library. Usage: example-monitor-region [APP_ID [UUID]]
import BeaconLocation
import Foundation

let given = Array(CommandLine.arguments.dropFirst())
let uuid =
    UUID(uuidString: given.count > 1 ? given[1] : "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")
    ?? {
        print("example-monitor-region: '\(given[1])' is not a UUID: give it as E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")
        exit(64)
    }()

final class Door: LocationManagerDelegate {
    func locationManagerDidChangeAuthorization(_ manager: LocationManager) {
        print("authorization:", manager.authorizationStatus)
        guard manager.authorizationStatus == .authorizedAlways else { return }
        Task {
            do {
                try await manager.startMonitoring(for: BeaconRegion(uuid: uuid, identifier: "lobby"))
            } catch {
                print("lobby not monitored:", error) // beacond's refusal, saying the fix
            }
        }
    }
    // Core Location's signatures: the error is a BeaconLocationError, whose message says the fix.
    func locationManager(_ manager: LocationManager, monitoringDidFailFor region: BeaconRegion?, withError error: any Error) {
        print("\(region?.identifier ?? "a region") no longer monitored:", error)
    }
    func locationManager(_ manager: LocationManager, didFailWithError error: any Error) {
        print("waiting:", error) // beacond not running (registers again by itself when it is back), or refused
    }
    func locationManager(_ manager: LocationManager, didEnterRegion region: BeaconRegion) {
        print("entered", region.identifier)
    }
    func locationManager(_ manager: LocationManager, didExitRegion region: BeaconRegion) {
        print("exited", region.identifier)
    }
}

let door = Door()
do {
    let manager = try await LocationManager(appID: given.first ?? "org.example.BeaconDemo", delegate: door)
    print("request:", try await manager.requestAlwaysAuthorization())
    await manager.waitUntilClosed()
} catch {
    print("example-monitor-region: \(error)") // beacond's refusal, saying the fix
    exit(1)
}
