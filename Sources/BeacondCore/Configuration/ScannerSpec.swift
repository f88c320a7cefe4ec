/// Where the daemon's advertisements come from: `[scanner] source` in `beacond.toml`, or `beacond --scanner`.
///
/// The text form is the configuration value, and `description` gives it back unchanged:
/// `auto`, `hci`, `hci:hci0`, `bluez`, `bluez:hci1`, `replay:/path/capture.btsnoop`, `fifo:/run/beacond.fifo`.
public enum ScannerSpec: Hashable, Sendable, CustomStringConvertible {
    /// bluetoothd runs LE discovery and an HCI socket reads every report; without CAP_NET_RAW, BlueZ D-Bus only.
    case auto
    /// The HCI socket reader, on `adapter` (`hciN`) or on the first adapter.
    case hci(adapter: String?)
    /// BlueZ over D-Bus only (Device1 ManufacturerData/RSSI), on `adapter` or on the default one.
    case bluez(adapter: String?)
    /// A capture file (btsnoop, pcap, pcapng or hex lines) played in real time.
    case replay(path: String)
    /// A FIFO of hex HCI event lines, read live and stamped with the daemon's clock (tests and demos).
    case fifo(path: String)

    /// The forms accepted, for error messages.
    package static let forms = "auto, hci, hci:hciN, bluez, bluez:hciN, replay:PATH or fifo:PATH"

    /// Parses the configuration form. `source` and `line` only say where the text came from in the error:
    /// the option (`--scanner`) by default, or the configuration file and line.
    public init(parsing text: String, source: String = "--scanner", line: Int? = nil) throws(ConfigurationError) {
        func failure(_ message: String) -> ConfigurationError {
            ConfigurationError(
                file: source, line: line, message: message,
                fix: "use one of \(Self.forms), e.g. \"auto\" or \"hci:hci0\"")
        }
        let kind: Substring
        let argument: Substring?
        if let colon = text.firstIndex(of: ":") {
            kind = text[..<colon]
            argument = text[text.index(after: colon)...]
        } else {
            kind = text[...]
            argument = nil
        }
        switch (kind, argument) {
        case ("auto", nil):
            self = .auto
        case ("hci", _), ("bluez", _):
            var adapter: String?
            if let argument {
                guard Self.isAdapterName(argument) else {
                    throw failure(
                        "scanner source \"\(text)\" names adapter \"\(argument)\", which is not "
                            + "an adapter name like hci0")
                }
                adapter = String(argument)
            }
            self = kind == "hci" ? .hci(adapter: adapter) : .bluez(adapter: adapter)
        case ("replay", let path?), ("fifo", let path?):
            guard !path.isEmpty else {
                throw failure("scanner source \"\(text)\" has no path after \"\(kind):\"")
            }
            self = kind == "replay" ? .replay(path: String(path)) : .fifo(path: String(path))
        default:
            throw failure("\"\(text)\" is not a scanner source")
        }
    }

    public var description: String {
        switch self {
        case .auto: "auto"
        case .hci(nil): "hci"
        case .hci(let adapter?): "hci:\(adapter)"
        case .bluez(nil): "bluez"
        case .bluez(let adapter?): "bluez:\(adapter)"
        case .replay(let path): "replay:\(path)"
        case .fifo(let path): "fifo:\(path)"
        }
    }

    /// BlueZ and the kernel name adapters `hci` followed by the controller index.
    private static func isAdapterName(_ text: Substring) -> Bool {
        let digits = text.dropFirst(3)
        return text.hasPrefix("hci") && !digits.isEmpty && digits.count <= 5
            && digits.allSatisfy { $0.isASCII && $0.isNumber }
    }
}
