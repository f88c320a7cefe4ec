package import BeaconKit
import BeacondAPI
package import Fleet

extension BeacondError {
    package var callError: CallError { .beacond(self) }
}

/// A client property by name; `clientPropertiesChanged` reads its value as it is now.
package enum ClientPropertyName {
    case authorizationStatus, inUse, monitoredRegions, rangedConstraints
}

/// Who a caller is, as the bus and the system say (resolved before the call reaches the core).
package struct Caller: Sendable {
    package var credentials: CallerCredentials
    package var processID: UInt32?

    package init(credentials: CallerCredentials, processID: UInt32?) {
        self.credentials = credentials
        self.processID = processID
    }
}

/// Everything that happens to the daemon.
package enum DaemonInput {
    /// A client's or administrator's method call; the step carries its reply.
    case call(DaemonCall)
    /// The bus is served: what the restore left to do (scanning, saving, expiring queued events).
    case started
    /// The scanner's input.
    case scanner(ScannerInput)
    case scannerStarted(label: String)
    case scannerFailedToStart(String)
    case scannerReported(ScannerStatus, label: String)
    /// Another receiver's reading or status, with the room the `[mqtt]` node knows the receiver by.
    case fleet(ReceiverDirectory.Input, room: String?)
    /// A node was made for `[mqtt]`, or none (`[mqtt]` is off, or a setting was refused).
    case fleetStarted(FleetStart)
    /// The node stopped; these are the receivers it knew.
    case fleetStopped(receivers: [ReceiverDirectory.Receiver])
    /// The node's connection to the broker was made (true) or lost (false).
    case fleetConnection(Bool)
    case timerFired(DaemonTimer)
    /// A connection left the bus.
    case connectionClosed(String)
    /// Signals are about to be sent, or a call that changes nothing was answered: what is pending is saved.
    case commit(StateDurability)
    /// The signals were sent: what sending them settles (queued events delivered) can be saved.
    case signalsSent
    /// Outside a commit (a watch event, GetStatus): recover or report a lost database now.
    case checkStateDatabase
    /// Stop scanning, cancel every timer and save everything, durably.
    case shuttingDown
}

/// A method call, its arguments decoded (a decoding error is part of the call: it is reported after the checks
/// that come before it).
package enum DaemonCall {
    case registerClient(appID: String, sender: String, caller: Caller)
    case requestAuthorization(AuthorizationRequest, client: Int)
    case startMonitoring(client: Int, Result<BeaconRegion, BeacondError>)
    case stopMonitoring(client: Int, identifier: String)
    case requestState(client: Int, identifier: String)
    case startRanging(client: Int, Result<BeaconIdentityConstraint, BeacondError>)
    case stopRanging(client: Int, Result<BeaconIdentityConstraint, BeacondError>)
    case setInUse(client: Int, Bool)
    case close(client: Int)
    case setAuthorization(appID: String, status: String, sender: String)
    case resetAuthorization(appID: String)
    case setLocationServicesEnabled(Bool)
    /// The configuration read again from disk, or why it was rejected.
    case reload(Result<DaemonConfiguration, ConfigurationRejection>)
}

/// Why the configuration files were rejected (file, line, what is wrong).
package struct ConfigurationRejection: Error {
    package var message: String

    package init(message: String) {
        self.message = message
    }
}

package enum CallReply: Equatable {
    case none
    case clientPath(String)
    case status(AuthorizationStatus)
    /// Reload's answer: "" when the new configuration is in force.
    case configurationError(String)
}

/// A refused call.
package enum CallError: Error, Equatable {
    case beacond(BeacondError)
    /// The client's object is gone.
    case clientClosed(Int)
}

/// What one input led to.
package struct DaemonStep {
    package var reply: Result<CallReply, CallError>?
    package var effects: [DaemonEffect]
}
