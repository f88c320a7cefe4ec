public import BeaconKit
import BeacondAPI
import Foundation

/// BlueZ's bond store (`/var/lib/bluetooth/<adapter>/<device>/info`, a GLib key file): what pairing a phone with this
/// host left there, read to import its Identity Resolving Key (`beaconctl devices import`).
public struct BondStore: Sendable {
    /// One paired device's info file.
    public struct Device: Hashable, Sendable {
        public var adapter: String
        /// The directory's name: the device's identity address (public or static random).
        public var address: String
        public var name: String?
        /// `[IdentityResolvingKey] Key=`: 32 hex digits as BlueZ stores them (least significant byte first).
        public var storedKey: String?
        public var file: String
        /// `[General] AddressType=static`: the identity address is static random, not public.
        public var addressIsRandom = false
        /// `[IdentityResolvingKey]` gives `Key=` more than once: which one is meant cannot be told.
        public var storedKeyRepeated = false

        /// The identity address as a key's `@` writes it: `random:` before a static random one.
        public var identityAddressText: String { (addressIsRandom ? "random:" : "") + address }

        /// The key, in the order it means, with the device's identity address.
        public func key() throws(IdentityResolvingKey.Invalid) -> IdentityResolvingKey? {
            guard let storedKey else { return nil }
            if storedKeyRepeated { throw .malformed("[IdentityResolvingKey] holds Key= more than once") }
            return try IdentityResolvingKey(
                bluezStoredKey: storedKey, identityAddress: BluetoothAddress(address), identityAddressIsRandom: addressIsRandom)
        }

        /// `no IRK`, `malformed IRK` (never the key: even a damaged one gives most of its digits away) or `IRK`.
        public var keyState: String {
            guard storedKey != nil else { return "no IRK" }
            return (try? key()) == nil ? "malformed IRK" : "IRK"
        }

        /// Why the stored key cannot be imported, with the fix: BlueZ wrote it, so pairing again writes a good one.
        public func damage(_ invalid: IdentityResolvingKey.Invalid) -> String {
            "\(file): BlueZ's [IdentityResolvingKey] Key= is damaged (\(invalid.problem); BlueZ writes 32 hex digits "
                + "there). Pair the phone again: bluetoothctl remove \(address), forget this host on the phone, then pair "
                + "it (docs/devices.md)"
        }
    }

    public static let defaultDirectory = "/var/lib/bluetooth"
    public let directory: String

    public init(directory: String = BondStore.defaultDirectory) { self.directory = directory }

    /// Every paired device with an info file, by adapter then address.
    public func devices() throws(BeaconctlError) -> [Device] {
        let manager = FileManager.default
        let adapters: [String]
        do {
            adapters = try manager.contentsOfDirectory(atPath: directory).sorted()
        } catch {
            throw BeaconctlError(
                exitStatus: FileManager.default.fileExists(atPath: directory) ? ExitStatus.noPermission : ExitStatus.unavailable,
                message: "cannot read BlueZ's bond store \(directory): \(error.localizedDescription). It is root's "
                    + "(run as root), and it exists once bluetoothd has run; pair the phone first (docs/devices.md)")
        }
        var devices: [Device] = []
        for adapter in adapters where BluetoothAddress(adapter) != nil {
            let entries = (try? manager.contentsOfDirectory(atPath: directory + "/" + adapter)) ?? []
            for entry in entries.sorted() where BluetoothAddress(entry) != nil {
                let file = "\(directory)/\(adapter)/\(entry)/info"
                guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { continue }
                let sections = Self.keyFile(text)
                devices.append(
                    Device(
                        adapter: adapter, address: entry, name: sections["General"]?["Name"],
                        storedKey: sections["IdentityResolvingKey"]?["Key"], file: file,
                        addressIsRandom: sections["General"]?["AddressType"] == "static",
                        storedKeyRepeated: sections["IdentityResolvingKey"]?["Key" + Self.repeatedMark] != nil))
            }
        }
        return devices
    }

    /// The device named by its address or its name (either case), or an error listing what there is.
    public func device(named query: String) throws(BeaconctlError) -> Device {
        let all = try devices()
        let byAddress = all.filter { $0.address.lowercased() == query.lowercased() }
        let matches = byAddress.isEmpty ? all.filter { $0.name?.lowercased() == query.lowercased() } : byAddress
        guard matches.count == 1 else {
            let listing = all.map { "\($0.address) \($0.name.map { "\"\($0)\"" } ?? "(no name)")\($0.keyState == "IRK" ? "" : " (\($0.keyState))")" }
            let known = listing.isEmpty ? "no device is paired with this host" : "paired: " + listing.joined(separator: ", ")
            throw BeaconctlError(
                exitStatus: ExitStatus.usage,
                message: matches.isEmpty
                    ? "no paired device has the address or name \"\(query)\" in \(directory) (\(known)). Pair the phone "
                        + "with this host first: bluetoothctl, then pair ADDRESS (docs/devices.md)"
                    : "\(matches.count) paired devices are named \"\(query)\": name one by its address (\(known))")
        }
        return matches[0]
    }

    /// A GLib key file's `[section]` → key → value (comments and blank lines skipped; values as written).
    /// Beside a key that a section gives more than once (`Key` + this).
    static let repeatedMark = "\u{0}repeated"

    static func keyFile(_ text: String) -> [String: [String: String]] {
        var sections: [String: [String: String]] = [:]
        var current = ""
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                current = String(line.dropFirst().dropLast())
                continue
            }
            guard let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            // A key given twice is marked, not silently the last one (which would BlueZ have meant?).
            if sections[current]?[key] != nil { sections[current, default: [:]][key + Self.repeatedMark] = "" }
            sections[current, default: [:]][key] = value
        }
        return sections
    }

    /// A device name for `[devices]` from a phone's name: lowercase, runs of anything but a-z, 0-9, '_' and '-'
    /// one '-' ("Alice's iPhone" → alice-s-iphone).
    public static func deviceName(from name: String) -> String {
        var slug = ""
        var pendingDash = false
        for scalar in name.lowercased().unicodeScalars {
            let allowed = (scalar >= "a" && scalar <= "z") || (scalar >= "0" && scalar <= "9") || scalar == "_" || scalar == "-"
            if allowed {
                if pendingDash, !slug.isEmpty { slug.append("-") }
                pendingDash = false
                slug.unicodeScalars.append(scalar)
            } else {
                pendingDash = true
            }
        }
        return String(slug.prefix(64))
    }

    /// What `devices.d/NAME.toml` holds for an imported device.
    public static func declaration(name: String, device: Device) -> String {
        """
        # Imported by beaconctl devices import from \(device.file)
        # (\(device.name.map { "\"\(UntrustedText.escaped($0))\", " } ?? "")identity address \(device.address), adapter \(device.adapter)).
        # Keep this file 0640 root:beacond: the key lets anyone follow the phone.
        [devices]
        \(name) = "bluez:\(device.storedKey ?? "")@\(device.identityAddressText)"

        """
    }
}
