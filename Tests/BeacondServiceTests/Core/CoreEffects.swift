import BeaconKit
@testable import BeacondService
@testable import BeacondCore
import Logging

/// Views of a core's effects by kind, so a test says what a client heard or what the runtime was asked to do.
extension [DaemonEffect] {
    /// The signals a client gets, in order, as short text: "didEnterRegion lobby", "authorizationChanged
    /// authorizedAlways"; a mirror for administrators only is left out (see `notified`).
    func signals(to client: Int) -> [String] {
        notified.filter { $0.address.number == client && $0.audience != .administratorsOnly }.map { $0.event.text }
    }

    /// Every client event, with whom it is for.
    var notified: [(address: ClientAddress, event: ClientEvent, audience: Audience)] {
        compactMap {
            guard case .notify(let address, let event, let audience) = $0 else { return nil }
            return (address, event, audience)
        }
    }

    /// The region events (enter, exit, state) whoever they were for.
    var regionEvents: [String] {
        notified.map(\.event.text).filter { $0.hasPrefix("didEnter") || $0.hasPrefix("didExit") || $0.hasPrefix("didDetermine") }
    }

    var adminEvents: [AdminEvent] {
        compactMap {
            guard case .adminEvent(let event) = $0 else { return nil }
            return event
        }
    }

    func properties(of client: Int) -> [[ClientProperty]] {
        compactMap {
            guard case .clientPropertiesChanged(let address, let properties) = $0, address.number == client else { return nil }
            return properties
        }
    }

    func logs(_ level: Logger.Level) -> [String] {
        compactMap {
            guard case .log(level, let message, _) = $0 else { return nil }
            return message
        }
    }

    func armed(_ timer: DaemonTimer) -> [Timestamp] {
        compactMap {
            guard case .arm(timer, let deadline) = $0 else { return nil }
            return deadline
        }
    }

    /// The apps whose `dbus_name` the bus is asked to start.
    var activations: [String] {
        compactMap {
            guard case .activate(_, let appID) = $0 else { return nil }
            return appID
        }
    }

    var unexported: [String] {
        compactMap {
            guard case .unexportClient(let path) = $0 else { return nil }
            return path
        }
    }

    /// "start" and "stop", in order.
    var scannerCommands: [String] {
        compactMap {
            switch $0 {
            case .startScanner: "start"
            case .stopScanner: "stop"
            default: nil
            }
        }
    }

    /// Manager1 `ScannerState` as apps are told it, in order.
    var scannerStates: [String] {
        compactMap {
            guard case .managerPropertyChanged(.scannerState(let state)) = $0 else { return nil }
            return state
        }
    }

    /// Whether the effects hold one of this kind (`{ if case .reconfigureFleetMonitoring = $0 … }`).
    func has(_ matches: (DaemonEffect) -> Bool) -> Bool { contains(where: matches) }
}

extension ClientEvent {
    /// The event in a few words: its kind, state or status, region, and for a failure the error's name.
    var text: String {
        switch self {
        case .authorizationChanged(let status): "authorizationChanged \(status.rawValue)"
        case .didStartMonitoring(let region): "didStartMonitoring \(region.identifier)"
        case .didDetermineState(let state, let region, _): "didDetermineState \(state) \(region.identifier)"
        case .didEnterRegion(let region, _): "didEnterRegion \(region.identifier)"
        case .didExitRegion(let region, _): "didExitRegion \(region.identifier)"
        case .monitoringDidFail(let region, let error):
            "monitoringDidFail \(region.identifier) \(error.name.rawValue.split(separator: ".").last ?? "")"
        case .rangingDidFail(let constraint, let error):
            "rangingDidFail \(constraint) \(error.name.rawValue.split(separator: ".").last ?? "")"
        }
    }

    /// When a region event happened, and whether it was late.
    var info: EventInfo? {
        switch self {
        case .didDetermineState(_, _, let info), .didEnterRegion(_, let info), .didExitRegion(_, let info): info
        default: nil
        }
    }
}
