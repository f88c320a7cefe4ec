// The same app in iOS 17's CLMonitor shape: add a condition, then read its events. The monitor's session asks for
// Always; the events say why nothing comes ("lobby waiting: …" with the fix: denied, waiting for an administrator,
// beacond not running, a scanner that cannot scan) and "lobby ready" when that is over. beacond's restarts are
// handled by the library. Usage: example-monitor-events [APP_ID [UUID]]
import BeaconLocation
import Foundation

let given = Array(CommandLine.arguments.dropFirst())
do {
    let lobby = try BeaconIdentityCondition(uuidString: given.count > 1 ? given[1] : "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")
    let monitor = try await Monitor(appID: given.first ?? "org.example.BeaconDemo")
    try await monitor.add(lobby, identifier: "lobby")
    for try await event in monitor.events { print(event) } // lobby inside, lobby outside, or lobby waiting: why
} catch {
    print("example-monitor-events: \(error)")
    exit(1)
}
