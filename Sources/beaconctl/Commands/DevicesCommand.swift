#if canImport(Glibc)
    @preconcurrency import Glibc
#endif
import ArgumentParser
import BeaconKit
import BeaconctlKit
import BeacondAPI
import Foundation

/// `beaconctl devices`: private devices (phones) known by their Identity Resolving Keys.
struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "Import a paired phone's Identity Resolving Key from BlueZ's bond store.",
        discussion: """
            Phones rotate their Bluetooth address every ~15 minutes; beacond follows one by its Identity \
            Resolving Key (IRK). A phone paired with this host through BlueZ left its IRK in \
            /var/lib/bluetooth/ADAPTER/DEVICE/info; `import` writes it to /etc/beacond/devices.d/NAME.toml \
            (mode 0640, group beacond), where every app may name the device (Kind PrivateDevice, Device NAME). \
            Reload beacond afterwards (systemctl reload beacond). docs/devices.md gives the steps for iPhones, \
            Android phones and keys exported from a Mac or Windows.

            Needs root (the bond store and /etc/beacond are root's). Talks to no daemon.

            Examples:
              beaconctl devices list
              beaconctl devices import "Alice's iPhone"
              beaconctl devices import 5C:F3:70:12:34:56 --name alice-phone

            \(ExitStatus.helpText)
            """,
        subcommands: [List.self, Import.self])

    struct Paths: ParsableArguments {
        @Option(help: ArgumentHelp("BlueZ's bond store.", valueName: "dir"))
        var bluetoothDir = BondStore.defaultDirectory
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the devices paired with this host, and whether BlueZ holds an IRK for each.",
            discussion: """
                One line per paired device: its address, IRK (BlueZ holds its key), no IRK (paired without LE: pair \
                it again over LE) or malformed IRK (the stored key is damaged: pair the phone again; the key is \
                never shown), its name and the adapter.
                """)
        @OptionGroup var paths: Paths

        func run() throws {
            try Reporting.run { () throws(BeaconctlError) in
                let devices = try BondStore(directory: paths.bluetoothDir).devices()
                if devices.isEmpty { Reporting.printLine("no device is paired with this host (\(paths.bluetoothDir))") }
                for device in devices {
                    Reporting.printLine(
                        "\(device.address)  \(device.keyState)  \(device.name ?? "(no name)")  (adapter \(device.adapter))")
                }
            }
        }
    }

    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a paired device's IRK to devices.d/NAME.toml.",
            usage: """
                beaconctl devices import <device> [--name <name>] [--print] [--force]
                                         [--bluetooth-dir <dir>] [--config-dir <dir>]
                """,
            discussion: "DEVICE is its address (as `list` shows it) or its name. Refuses to replace an existing file "
                + "unless --force.")
        @OptionGroup var paths: Paths
        @Argument(help: ArgumentHelp("The paired device's address or name.", valueName: "device"))
        var device: String
        @Option(help: ArgumentHelp("The name apps use for it (a-z, 0-9, '_', '-'); default: from its Bluetooth name.", valueName: "name"))
        var name: String?
        @Option(help: ArgumentHelp("beacond's configuration directory.", valueName: "dir"))
        var configDir = "/etc/beacond"
        @Flag(help: "Print the declaration instead of writing it.")
        var print = false
        @Flag(help: "Replace devices.d/NAME.toml if it exists.")
        var force = false

        func validate() throws {
            if let name, !BeaconIdentityConstraint.isDeviceName(name) {
                throw ValidationError(
                    "--name is not a device name: 1-64 of a-z, 0-9, '_' and '-', with no 8 hex digits in a row, e.g. alice-phone")
            }
        }

        func run() throws {
            try Reporting.run { () throws(BeaconctlError) in try importDevice() }
        }

        func importDevice() throws(BeaconctlError) {
            let store = BondStore(directory: paths.bluetoothDir)
            let found = try store.device(named: device)
            guard found.storedKey != nil else {
                throw BeaconctlError(
                    exitStatus: ExitStatus.failure,
                    message: "BlueZ holds no Identity Resolving Key for \(found.address) (\(found.file) has no "
                        + "[IdentityResolvingKey]): the device shares none when it uses its public address, or it was "
                        + "paired without LE. Remove and pair it again over LE (docs/devices.md)")
            }
            do { _ = try found.key() } catch {
                throw BeaconctlError(exitStatus: ExitStatus.failure, message: found.damage(error))
            }
            let chosen = name ?? found.name.map(BondStore.deviceName(from:)) ?? ""
            guard BeaconIdentityConstraint.isDeviceName(chosen) else {
                throw BeaconctlError(
                    exitStatus: ExitStatus.usage,
                    message: "\(found.address) has no usable name (\(found.name ?? "none")): give one with --name, e.g. --name alice-phone")
            }
            let text = BondStore.declaration(name: chosen, device: found)
            if print {
                Swift.print(text, terminator: "")
                return
            }
            // A typo in --config-dir must not make a directory beacond never reads and report success.
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: configDir, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw BeaconctlError(
                    exitStatus: ExitStatus.unavailable,
                    message: "the configuration directory \(configDir) does not exist: give beacond's (--config-dir, "
                        + "/etc/beacond unless beacond runs with another)")
            }
            let directory = configDir + "/devices.d"
            let file = "\(directory)/\(chosen).toml"
            if FileManager.default.fileExists(atPath: file), !force {
                throw BeaconctlError(
                    exitStatus: ExitStatus.failure, message: "\(file) exists: give --force to replace it, or another --name")
            }
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                // Created unreadable to others before the key is written, so it is never exposed.
                let descriptor = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0o640)
                guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
                fchmod(descriptor, 0o640)
                if let group = getgrnam("beacond") { fchown(descriptor, 0, group.pointee.gr_gid) }
                let bytes = Array(text.utf8)
                let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                close(descriptor)
                guard written == bytes.count else { throw POSIXError(.EIO) }
            } catch {
                throw BeaconctlError(
                    exitStatus: ExitStatus.noPermission,
                    message: "cannot write \(file): \(error.localizedDescription) (run as root)")
            }
            // The name is the phone owner's choice: escaped, never sent raw to the terminal.
            let shown = found.name.map { UntrustedText.escaped($0) } ?? found.address
            Swift.print(
                "wrote \(file): device \(chosen) (\(shown)). Apply it: systemctl reload beacond (or kill -HUP a beacond run by hand)")
        }
    }
}
