// The same app in iOS 17's CLMonitor shape: add a condition, then read its events; the monitor's session asks for
// Always, and its diagnostics say why nothing comes. beacond's restarts are handled by the library.
// Usage: example-monitor-events [APP_ID [UUID]]
import BeaconLocation
import Foundation

let given = Array(CommandLine.arguments.dropFirst())
do {
    let lobby = try BeaconIdentityCondition(uuidString: given.count > 1 ? given[1] : "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")
    let monitor = try await Monitor(appID: given.first ?? "org.example.BeaconDemo")
    try await monitor.add(lobby, identifier: "lobby")
    Task { for await diagnostic in monitor.diagnostics { print(diagnostic.isBlocked ? "waiting:" : "ready", diagnostic.message) } }
    for try await event in monitor.events { print(event.identifier, event.state) }
} catch {
    print("example-monitor-events: \(error)")
    exit(1)
}
