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
    /// Messages `handleEarlier` took off the connection but did not hand out: they come first in `run`.
    private var readAhead: [DBusMessage] = []

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
            if !readAhead.isEmpty {
                message = readAhead.removeFirst()
            } else {
                do {
                    message = try client.connection.nextMessage(timeout: nil, where: { _ in true })
                } catch {
                    throw .busClosed(client.bus)
                }
            }
            guard let message else { continue }
            if try !dispatch(IncomingSignal(message, daemon: daemon), handle) { return .finished }
        }
    }

    /// Hands `handle` what beacond sent before its reply to the command's last call (`DaemonClient.lastReply`).
    /// libdbus queues signals that arrive while a call waits for its reply; read only by the next `run`, they
    /// would come out after what the command prints about the call (a registration's
    /// AuthorizationChanged(notDetermined) after the request's authorizedAlways). A command calls this after each
    /// call, before it prints the call's result; what came after the reply stays for `run`. Returns false when
    /// `handle` did.
    func handleEarlier(_ handle: (IncomingSignal) throws(BeaconctlError) -> Bool) throws(BeaconctlError) -> Bool {
        guard let reply = client.lastReply else { return true }
        // Only what is already queued: nothing is read from the socket, so this never waits.
        while let message = try? client.connection.nextMessage(timeout: .zero, where: { _ in true }) {
            readAhead.append(message)
        }
        if daemon == nil { daemon = reply.sender }
        while let message = readAhead.first, !(message.sender == reply.sender && message.serial >= reply.serial) {
            readAhead.removeFirst()
            if try !dispatch(IncomingSignal(message, daemon: reply.sender), handle) { return false }
        }
        return true
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
