import BeaconctlKit
import DBus

/// The receive loop of the live commands: hands every signal from beacond to `handle` until it returns
/// false, SIGINT/SIGTERM arrives, or beacond leaves the bus (thrown: exit 69).
final class SignalLoop {
    enum Ending { case finished, interrupted }

    let client: DaemonClient
    let interruption: Interruption
    /// beacond's unique name. Learnt at once if beacond runs; otherwise at the first `run`, after the
    /// command's first call to beacond has started it by D-Bus activation.
    private var daemon: String?

    /// Subscribes to NameOwnerChanged for org.beacond and installs the SIGINT/SIGTERM handlers.
    init(client: DaemonClient) throws(BeaconctlError) {
        self.client = client
        try client.watchDaemonPresence()
        daemon = try? client.daemonUniqueName()
        interruption = Interruption.shared
        interruption.wakeLoop(on: client.bus, name: client.connection.uniqueName)
    }

    func run(_ handle: (IncomingSignal) throws(BeaconctlError) -> Bool) throws(BeaconctlError) -> Ending {
        let daemon: String
        if let known = self.daemon {
            daemon = known
        } else {
            daemon = try client.daemonUniqueName()
            self.daemon = daemon
        }
        while true {
            if interruption.isInterrupted { return .interrupted }
            let message: DBusMessage?
            do {
                message = try client.connection.nextMessage(timeout: nil, where: { _ in true })
            } catch {
                throw .busClosed(client.bus)
            }
            guard let message else { continue }
            if try !dispatch(IncomingSignal(message, daemon: daemon), handle) { return .finished }
        }
    }

    private func dispatch(
        _ signal: IncomingSignal,
        _ handle: (IncomingSignal) throws(BeaconctlError) -> Bool
    ) throws(BeaconctlError) -> Bool {
        switch signal {
        case .daemonLeft: throw .daemonLeft(client.bus)
        case .wakeup, .other: return true
        case .event, .client: return try handle(signal)
        }
    }
}
