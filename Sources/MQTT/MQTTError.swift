import CMosquitto
#if canImport(Glibc)
    import Glibc
#endif

/// A libmosquitto call that failed: what was being done and libmosquitto's own words for why (with the system's
/// for `MOSQ_ERR_ERRNO`, and OpenSSL's last complaint for a TLS failure when libmosquitto logged one).
public struct MQTTError: Error, Hashable, Sendable, CustomStringConvertible {
    public var operation: String
    /// libmosquitto's `mosq_err_t`.
    public var code: Int32
    public var message: String

    public init(operation: String, code: Int32, message: String) {
        self.operation = operation
        self.code = code
        self.message = message
    }

    /// Reads `errno` at once, before anything else can change it.
    init(operation: String, code: Int32, detail: String? = nil) {
        self.init(operation: operation, code: code, message: MQTTError.text(code, detail: detail))
    }

    public var description: String { "\(operation): \(message)" }

    static func text(_ code: Int32, detail: String? = nil) -> String {
        var text: String
        if code == Int32(MOSQ_ERR_ERRNO.rawValue) {
            text = String(cString: strerror(errno))
        } else {
            text = String(cString: mosquitto_strerror(code))
        }
        if text.hasSuffix(".") { text.removeLast() }
        if let detail, !detail.isEmpty { text += " (\(detail))" }
        return text
    }
}
