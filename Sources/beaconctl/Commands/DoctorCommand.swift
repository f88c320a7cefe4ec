import DBus
import ArgumentParser
import BeaconctlKit
import BeacondAPI

/// `beaconctl doctor`: why a client gets no events.
struct DoctorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Explain why a client gets no events, check by check, with the fix for each failure.",
        discussion: """
            Checks in order, stopping where a failure hides the rest: the bus is reachable; beacond is running \
            (owns org.beacond); this user may use org.beacond.Admin1; location services are on; the scanner \
            works and a Bluetooth adapter is present and powered (not needed for replay:/fifo: scanners). \
            With --app: the app is declared in /etc/beacond/apps.d, its authorization (a pending request, \
            denied, restricted, or never requested), a client of it is connected (and in use, for \
            when-in-use apps), and it monitors a region or ranges.

            Each check prints ✓ or ✗ and, on ✗, the fix. Exits 0 when every check passes, 1 otherwise \
            (whatever failed, even an unreachable bus).

            --json prints {"Passed": bool, "Checks": [{"Check", "Passed", "Detail", "Fix"}]}.

            Examples:
              beaconctl doctor
              beaconctl doctor --app com.example.door

            Every check after "beacond running" needs root or membership of the admin group \
            (default \(AdminAccess.defaultGroup)).
            """)

    @ParentCommand var root: BeaconctlCommand
    @OptionGroup var bus: BusOptions
    @OptionGroup var output: OutputOptions
    @Option(help: "Also check this app (its declaration, authorization, clients and regions).") var app: String?

    func run() throws {
        let choice = Self.busChoice(bus, parent: root.bus)
        let checks = Self.diagnose(bus: choice, app: app)
        if output.json {
            print(DoctorCheck.json(checks).text)
        } else {
            Reporting.printLines(checks.flatMap(\.lines))
        }
        if !checks.allSatisfy(\.passed) { throw ExitCode(ExitStatus.failure) }
    }

    static func diagnose(bus: BusChoice, app: String?) -> [DoctorCheck] {
        let client: DaemonClient
        do {
            client = try DaemonClient(bus: bus)
        } catch {
            return [DoctorCheck("bus reachable", passed: false, error.message, fix: Doctor.Fix.bus(bus))]
        }
        var checks = [DoctorCheck("bus reachable", passed: true, "\(bus), connected as \(client.connection.uniqueName)")]
        do {
            guard try client.isDaemonRunning() else {
                checks.append(
                    DoctorCheck(
                        "beacond running", passed: false, "nobody owns \(BeacondBus.name) on \(bus)",
                        fix: Doctor.Fix.daemon(bus)))
                return checks
            }
            checks.append(DoctorCheck("beacond running", passed: true, "\(BeacondBus.name) is \(try client.daemonUniqueName())"))
        } catch {
            checks.append(DoctorCheck("beacond running", passed: false, error.message, fix: Doctor.Fix.daemon(bus)))
            return checks
        }
        let status: VarDict
        do {
            status = try client.snapshot(regions: 0)
        } catch {
            checks.append(Doctor.adminAccess(refused: error))
            return checks
        }
        checks.append(
            DoctorCheck(
                "admin access (\(BeacondInterface.admin))", passed: true,
                "GetStatus answered (beacond \(status.string(BeacondStatusKey.version) ?? "?"))"))
        return checks + Doctor.checks(status: status, app: app)
    }
}
