import ArgumentParser
import BeaconctlKit
import BeacondAPI

/// `beaconctl auth`: the "Settings app" — see and change each app's authorization.
struct AuthCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "auth",
        abstract: "List, grant, deny or reset apps' location authorization.",
        discussion: """
            With prompt = "admin" in beacond.toml, an app's authorization request waits until an administrator \
            decides here. Decisions persist across daemon restarts and apply at once (revoking Always stops that \
            app's monitoring with MonitoringDidFail; clients get AuthorizationChanged).

            Examples:
              beaconctl auth list
              beaconctl auth grant com.example.door always
              beaconctl auth deny com.example.door
              beaconctl auth reset com.example.door

            \(AdminAccess.requirement)

            \(ExitStatus.helpText)
            """,
        subcommands: [AuthListCommand.self, AuthGrantCommand.self, AuthDenyCommand.self, AuthResetCommand.self])
}

struct AuthListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List declared apps, their authorization, and requests waiting for a decision.",
        discussion: """
            From org.beacond.Admin1.ListApps and ListPendingRequests.

            --json prints {"Apps": [{"AppId", "AuthorizationStatus", "PendingRequest", "DeclarationFile", \
            "Users", "QueuedEvents", "MonitoredRegions", "ConnectedClients"}], \
            "PendingRequests": [{"AppId", "Request", "AuthorizationStatus", "UsageDescription"}]}.

            Example: beaconctl auth list --json | jq '.PendingRequests[].AppId'

            \(AdminAccess.requirement)

            \(ExitStatus.helpText)
            """)

    @ParentCommand var root: BeaconctlCommand
    @OptionGroup var bus: BusOptions
    @OptionGroup var output: OutputOptions

    func run() throws {
        try Reporting.withDaemon(Self.busChoice(bus, parent: root.bus)) { client throws(BeaconctlError) in
            let apps = try client.apps()
            let pending = try client.pendingRequests()
            if output.json {
                print(JSON.object(["Apps": JSON(apps), "PendingRequests": JSON(pending)]).text)
            } else {
                Reporting.printLines(StatusText.authorizations(apps: apps, pending: pending))
            }
        }
    }
}

/// `always|when-in-use` on the command line (AuthorizationLevel lives in BeaconctlKit, which knows no
/// ArgumentParser).
enum LevelArgument: String, ExpressibleByArgument, CaseIterable {
    case always
    case whenInUse = "when-in-use"

    var level: AuthorizationLevel {
        switch self {
        case .always: return .always
        case .whenInUse: return .whenInUse
        }
    }
}

struct AuthGrantCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grant",
        abstract: "Authorize an app: always (monitoring and ranging, also in background) or when-in-use (ranging while in use).",
        discussion: """
            Calls org.beacond.Admin1.SetAuthorization(APP, authorizedAlways|authorizedWhenInUse). Answers a \
            pending request, or changes an earlier decision.

            Example: beaconctl auth grant com.example.door always

            \(AdminAccess.requirement)

            \(ExitStatus.helpText)
            """)

    @ParentCommand var root: BeaconctlCommand
    @OptionGroup var bus: BusOptions
    @Argument(help: "The app id, as declared in /etc/beacond/apps.d.") var app: String
    @Argument(help: "always or when-in-use.") var level: LevelArgument

    func run() throws {
        try Reporting.withDaemon(Self.busChoice(bus, parent: root.bus)) { client throws(BeaconctlError) in
            try Self.reportChange(client, app: app) { () throws(BeaconctlError) in
                try client.setAuthorization(app: app, status: level.level.status)
            }
        }
    }
}

struct AuthDenyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deny",
        abstract: "Deny an app location access.",
        discussion: """
            Calls org.beacond.Admin1.SetAuthorization(APP, denied): its monitoring and ranging stop at once.

            Example: beaconctl auth deny com.example.door

            \(AdminAccess.requirement)

            \(ExitStatus.helpText)
            """)

    @ParentCommand var root: BeaconctlCommand
    @OptionGroup var bus: BusOptions
    @Argument(help: "The app id.") var app: String

    func run() throws {
        try Reporting.withDaemon(Self.busChoice(bus, parent: root.bus)) { client throws(BeaconctlError) in
            try Self.reportChange(client, app: app) { () throws(BeaconctlError) in
                try client.setAuthorization(app: app, status: BeacondStatus.denied)
            }
        }
    }
}

struct AuthResetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reset",
        abstract: "Forget an app's decision, so it is notDetermined and may request again.",
        discussion: """
            Calls org.beacond.Admin1.ResetAuthorization(APP).

            Example: beaconctl auth reset com.example.door

            \(AdminAccess.requirement)

            \(ExitStatus.helpText)
            """)

    @ParentCommand var root: BeaconctlCommand
    @OptionGroup var bus: BusOptions
    @Argument(help: "The app id.") var app: String

    func run() throws {
        try Reporting.withDaemon(Self.busChoice(bus, parent: root.bus)) { client throws(BeaconctlError) in
            try Self.reportChange(client, app: app) { () throws(BeaconctlError) in
                try client.resetAuthorization(app: app)
            }
        }
    }
}

extension ParsableCommand {
    /// Makes the change, then prints what it did: the app's stored status and pending request are read before
    /// and after (`AppAuthorization.change`), so a denied upgrade request is reported as declined, not "denied".
    static func reportChange(
        _ client: DaemonClient, app: String,
        _ change: () throws(BeaconctlError) -> Void
    ) throws(BeaconctlError) {
        let before = try AppAuthorization(app: app, apps: client.apps())
        try change()
        let after = try AppAuthorization(app: app, apps: client.apps())
        Reporting.printLine(AppAuthorization.change(app: app, before: before, after: after))
    }
}
