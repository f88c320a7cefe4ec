/// The objects a `DBusObjectServer` exports, by path, and the signals their interfaces declare, which every emitted
/// signal is checked against.
struct DBusExportedObjects {
    static let propertiesChangedSignature = "sa{sv}as"

    private(set) var objects: [String: DBusObject] = [:]
    /// Declared signal signatures by interface and member, of every interface ever exported that declares
    /// signals (kept after `unexport`: a signal queued for an object that just went away is still checked).
    private var declaredSignals: [String: [String: String]] = [:]

    /// Exports `object` at its path (replacing any object there).
    mutating func export(_ object: DBusObject) {
        objects[object.path] = object
        for interface in object.interfaces where !interface.signals.isEmpty {
            declaredSignals[interface.name] = Dictionary(
                interface.signals.map { ($0.name, $0.signature) },
                uniquingKeysWith: { first, _ in first })
        }
    }

    mutating func unexport(path: String) {
        objects[path] = nil
    }

    /// Refuses a signal its interface does not declare, or declares with other arguments (see
    /// `DBusObjectServer.emit`).
    func checkDeclared(interface: String, member: String, signature: String) throws(DBusCallError) {
        let declared: String?
        if interface == "org.freedesktop.DBus.Properties" {
            declared = member == "PropertiesChanged" ? Self.propertiesChangedSignature : nil
        } else if let signals = declaredSignals[interface] {
            declared = signals[member]
        } else {
            return // an interface that declares no signals (a test double, a standard interface) is not checked
        }
        guard let declared else {
            throw DBusCallError(
                name: DBusStandardError.failed,
                message: "signal \(interface).\(member) is not declared; not sent")
        }
        guard declared == signature else {
            throw DBusCallError(
                name: DBusStandardError.failed,
                message: "signal \(interface).\(member) is declared "
                    + "(\(declared)) but was emitted with (\(signature)); not sent")
        }
    }
}
