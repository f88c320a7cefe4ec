import BeaconctlKit
import DBus

/// The receive loop of the live commands: hands every signal from beacond to `handle` until it returns
/// false, SIGINT/SIGTERM arrives, or beacond leaves the bus (thrown: exit 69).
struct SignalLoop {
    enum Ending { case finished, interrupted }

    let client: DaemonClient
    let daemon: String
    let interruption: Interruption

    /// Subscribes to NameOwnerChanged first, then learns beacond's unique name and installs the handlers.
    init(client: DaemonClient) throws(BeaconctlError) {
        self.client = client
        try client.watchDaemonPresence()
        daemon = try client.daemonUniqueName()
        interruption = Interruption(bus: client.bus, wake: client.connection.uniqueName)
    }

    func run(_ handle: (IncomingSignal) throws(BeaconctlError) -> Bool) throws(BeaconctlError) -> Ending {
        while true {
            if interruption.isInterrupted { return .interrupted }
            let message: DBusMessage?
            do {
                message = try client.connection.nextMessage(timeout: nil, where: { _ in true })
            } catch {
                throw .busClosed(client.bus)
            }
            guard let message else { continue }
            let signal = IncomingSignal(message, daemon: daemon)
            switch signal {
            case .daemonLeft: throw .daemonLeft(client.bus)
            case .wakeup, .other: continue
            case .event, .client:
                if try !handle(signal) { return .finished }
            }
        }
    }
}
