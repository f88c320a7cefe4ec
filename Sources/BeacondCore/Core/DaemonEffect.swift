package import BeaconKit
package import Fleet
package import Logging

/// What the daemon must do, in this order.
package enum DaemonEffect {
    case notify(ClientAddress, ClientEvent, Audience)
    case adminEvent(AdminEvent)
    case clientPropertiesChanged(ClientAddress, [ClientProperty])
    case managerPropertyChanged(ManagerProperty)
    /// A ranging result for the client (and administrators watching), if they are reading.
    case range(ClientAddress, BeaconIdentityConstraint, [RangedBeaconReport])
    /// Export a new client's object.
    case exportClient(Int)
    /// Its object goes (the client closed or detached).
    case unexportClient(path: String)
    /// Ask the bus to start an app's `dbus_name` to deliver its queued events.
    case activate(dbusName: String, appID: String)
    case arm(DaemonTimer, at: Timestamp)
    case cancel(DaemonTimer)
    case startScanner
    case stopScanner
    /// This receiver's reading for the broker, then the Home Assistant distance sensor's state if any.
    case publishReading(ESPresenseReading, distance: HomeAssistantPresence.Publication?)
    /// Home Assistant's entities and states (retained).
    case publishRetained([HomeAssistantPresence.Publication])
    /// `[mqtt]` changed on reload: the node is replaced.
    case mqttSettingsChanged(from: MQTTSettings)
    /// Something must be saved and signals are waiting: a flush is due.
    case scheduleFlush
    case log(Logger.Level, String, Logger.Metadata)
}
