import CDBus
public import MainLoopKit

/// Serves exported objects on a connection from a `MainLoop`: libdbus's watches and timeouts become loop
/// descriptors and timers, incoming messages are dispatched between polls, and replies, errors and signals
/// are sent from the loop thread. Nothing a peer sends can crash it: unknown objects, interfaces, methods
/// and properties, and wrong argument types, are answered with the standard D-Bus errors.
///
/// Use it only on the loop thread (create it there, or before the loop runs).
public final class DBusObjectServer {
    /// Messages and replies waiting to be handled on the loop, outside libdbus's callbacks.
    fileprivate struct Inbox {
        /// Messages the filter took from libdbus, handled after `dbus_connection_dispatch` returns so that no
        /// handler runs inside a libdbus callback (a handler may call back into libdbus, e.g. to send or to call).
        var messages: [DBusMessage] = []
        /// Replies to `callAsync`, run after `dbus_connection_dispatch` returns (never inside a libdbus callback).
        var completedCalls: [() -> Void] = []
        var isBeingHandled = false

        var isEmpty: Bool { messages.isEmpty && completedCalls.isEmpty }

        /// The oldest completed call, taken out: it runs after this access ends, so it may queue more.
        mutating func takeCompletedCall() -> (() -> Void)? {
            completedCalls.isEmpty ? nil : completedCalls.removeFirst()
        }

        mutating func takeMessage() -> DBusMessage? {
            messages.isEmpty ? nil : messages.removeFirst()
        }
    }

    /// Signal handlers added with `addSignalHandler`, by id.
    private struct SignalHandlers {
        private(set) var entries: [(id: Int, rule: String, handler: (DBusMessage) -> Void)] = []
        private var nextID = 0

        /// Adds `handler` for `rule`; returns its id.
        mutating func add(rule: String, _ handler: @escaping (DBusMessage) -> Void) -> Int {
            nextID += 1
            entries.append((nextID, rule, handler))
            return nextID
        }

        /// Removes the handler `id`; returns its rule, nil if there is no such handler.
        mutating func remove(_ id: Int) -> String? {
            guard let index = entries.firstIndex(where: { $0.id == id }) else { return nil }
            return entries.remove(at: index).rule
        }
    }

    // State that belongs together is a value with the methods that keep it (the exports, the inbox, the signal
    // handlers, the credentials); libdbus's watches and timeouts are a class, `DBusLoopSources`, as libdbus calls back
    // into them. No handler, completion or dispatch runs inside the values' methods, so no access to a stored property
    // here spans a call that may come back into the server. (Dropping a held message or a handler inside one may
    // release it, and libdbus may then toggle a watch: that reaches only `DBusLoopSources`, never these values.)
    public let connection: DBusConnection
    let loop: MainLoop
    /// libdbus's watches and timeouts as the loop's descriptors and timers.
    private let loopSources: DBusLoopSources
    private(set) var exports = DBusExportedObjects()
    fileprivate var inbox = Inbox()
    private var signalHandlers = SignalHandlers()
    /// Who each caller of an object with `needsCallerCredentials` is, and its calls that wait for that answer.
    var credentials = DBusCredentialsCache()

    /// Called with a unique name (`:1.42`) when that connection leaves the bus (NameOwnerChanged).
    public var connectionClosed: ((String) -> Void)?
    /// Called for every NameOwnerChanged (name, old owner, new owner; "" for none): e.g. `org.bluez` coming
    /// and going when bluetoothd restarts.
    public var nameOwnerChanged: ((String, String, String) -> Void)?
    /// Called when the bus itself goes away.
    public var disconnected: (() -> Void)?

    /// `watchingConnections`: hear every connection leave the bus (`connectionClosed`, needed by a service whose
    /// callers' state ends with them); a client that follows one name adds its own narrower rule instead.
    public init(connection: DBusConnection, loop: MainLoop, watchingConnections: Bool = true) throws(DBusCallError) {
        self.connection = connection
        self.loop = loop
        self.loopSources = DBusLoopSources(loop: loop)
        let context = Unmanaged.passUnretained(self).toOpaque()
        // The callbacks get `self` unretained: `deinit` removes them before `self` goes away.
        let installedWatches = dbus_connection_set_watch_functions(
            connection.pointer,
            { watch, data in
                guard let watch, let data else { return 0 }
                Unmanaged<DBusObjectServer>.fromOpaque(data).takeUnretainedValue().loopSources.addWatch(watch)
                return 1
            },
            { watch, data in
                guard let watch, let data else { return }
                Unmanaged<DBusObjectServer>.fromOpaque(data).takeUnretainedValue().loopSources.removeWatch(watch)
            },
            { watch, data in
                guard let watch, let data else { return }
                Unmanaged<DBusObjectServer>.fromOpaque(data).takeUnretainedValue().loopSources.toggleWatch(watch)
            }, context, nil)
        let installedTimeouts = dbus_connection_set_timeout_functions(
            connection.pointer,
            { timeout, data in
                guard let timeout, let data else { return 0 }
                Unmanaged<DBusObjectServer>.fromOpaque(data).takeUnretainedValue().loopSources.addTimeout(timeout)
                return 1
            },
            { timeout, data in
                guard let timeout, let data else { return }
                Unmanaged<DBusObjectServer>.fromOpaque(data).takeUnretainedValue().loopSources.removeTimeout(timeout)
            },
            { timeout, data in
                guard let timeout, let data else { return }
                Unmanaged<DBusObjectServer>.fromOpaque(data).takeUnretainedValue().loopSources.toggleTimeout(timeout)
            }, context, nil)
        let installedFilter = dbus_connection_add_filter(connection.pointer, objectServerFilter, context, nil)
        guard installedWatches != 0, installedTimeouts != 0, installedFilter != 0 else {
            throw DBusCallError(name: "org.freedesktop.DBus.Error.NoMemory", message: "could not attach the connection to the main loop")
        }
        // Clients that vanish must be noticed at once (their ranging stops).
        if watchingConnections {
            try connection.addMatch(
                "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
                    + "interface='org.freedesktop.DBus',member='NameOwnerChanged'")
        }
        loop.addBeforePollHook { [weak self] in self?.dispatchIncoming() }
    }

    deinit {
        dbus_connection_remove_filter(connection.pointer, objectServerFilter, Unmanaged.passUnretained(self).toOpaque())
        dbus_connection_set_watch_functions(connection.pointer, nil, nil, nil, nil, nil)
        dbus_connection_set_timeout_functions(connection.pointer, nil, nil, nil, nil, nil)
        loopSources.removeAll()
    }

    // MARK: Objects

    /// Exports `object` at its path (replacing any object there).
    public func export(_ object: DBusObject) {
        exports.export(object)
    }

    public func unexport(path: String) {
        exports.unexport(path: path)
    }

    public var exportedPaths: [String] { exports.objects.keys.sorted() }

    // MARK: Sending

    /// Sends a signal; with `destination` it goes to that connection only (unicast), otherwise to every
    /// connection with a matching rule. The introspection data is the one description of a signal: on an
    /// interface exported with signal declarations, a signal that is not declared, or whose arguments do not
    /// have the declared signature, is refused (`org.freedesktop.DBus.Error.Failed`) and not sent; so is a
    /// `PropertiesChanged` that is not `sa{sv}as`.
    public func emit(
        path: String, interface: String, member: String, arguments: [DBusValue],
        destination: String? = nil
    ) throws(DBusCallError) {
        try exports.checkDeclared(interface: interface, member: member, signature: arguments.map(\.signature).joined())
        do {
            let signal = try DBusMessage.signal(path: path, interface: interface, member: member)
            try signal.append(arguments)
            if let destination { try signal.setDestination(destination) }
            try send(signal)
        } catch let error as DBusMarshallingError {
            throw DBusCallError.wrap(error)
        } catch let error as DBusCallError {
            throw error
        } catch {
            throw DBusCallError(name: DBusStandardError.failed, message: "\(error)")
        }
    }

    /// `org.freedesktop.DBus.Properties.PropertiesChanged` for `interface` at `path`.
    public func emitPropertiesChanged(
        path: String, interface: String, changed: [String: DBusValue],
        destination: String? = nil
    ) throws(DBusCallError) {
        try emit(
            path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            arguments: [.string(interface), .vardict(changed), .array(elementSignature: "s", [])],
            destination: destination)
    }

    func send(_ message: DBusMessage) throws(DBusCallError) {
        guard dbus_connection_send(connection.pointer, message.pointer, nil) != 0 else {
            throw DBusCallError(name: "org.freedesktop.DBus.Error.NoMemory", message: "could not queue the message")
        }
    }

    // MARK: libdbus callbacks

    fileprivate func filter(_ message: OpaquePointer) -> DBusHandlerResult {
        let type = dbus_message_get_type(message)
        guard type == Int32(DBUS_MESSAGE_TYPE_METHOD_CALL) || type == Int32(DBUS_MESSAGE_TYPE_SIGNAL) else {
            return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        }
        inbox.messages.append(DBusMessage(adopting: dbus_message_ref(message)))
        return type == Int32(DBUS_MESSAGE_TYPE_METHOD_CALL) ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
    }

    // MARK: Dispatch

    /// How many messages one loop iteration handles before timers and other descriptors get their turn, so a
    /// peer flooding the daemon with calls cannot starve ranging cycles, exits or the watchdog.
    static let messagesPerIteration = 64

    /// Reads what libdbus has queued and handles up to `messagesPerIteration` of it; runs before every poll.
    func dispatchIncoming() {
        guard !inbox.isBeingHandled else { return } // a handler's blocking call re-entered the loop's hook
        inbox.isBeingHandled = true
        defer { inbox.isBeingHandled = false }
        var handled = 0
        while handled < Self.messagesPerIteration {
            // Taken out before it runs: a completion or a handler may queue more into the inbox.
            if let completion = inbox.takeCompletedCall() {
                completion()
                handled += 1
                continue
            }
            guard let message = inbox.takeMessage() else {
                guard dbus_connection_get_dispatch_status(connection.pointer) == DBUS_DISPATCH_DATA_REMAINS else { break }
                _ = dbus_connection_dispatch(connection.pointer)
                continue
            }
            handle(message)
            handled += 1
        }
        if !inbox.isEmpty || dbus_connection_get_dispatch_status(connection.pointer) == DBUS_DISPATCH_DATA_REMAINS {
            // More is waiting in memory, where poll cannot see it: keep the loop from sleeping.
            loop.execute {}
        }
    }

    private func handle(_ message: DBusMessage) {
        switch message.kind {
        case .signal: handleSignal(message)
        case .methodCall: handleMethodCall(message)
        default: break
        }
    }

    private func handleSignal(_ message: DBusMessage) {
        if message.interface == "org.freedesktop.DBus.Local", message.member == "Disconnected" {
            disconnected?()
            return
        }
        // A copy: a handler may add or remove handlers.
        for entry in signalHandlers.entries { entry.handler(message) }
        guard message.sender == "org.freedesktop.DBus", message.interface == "org.freedesktop.DBus",
            message.member == "NameOwnerChanged", message.signature == "sss",
            let arguments = try? message.arguments(), arguments.count == 3,
            case .string(let name) = arguments[0], case .string(let oldOwner) = arguments[1],
            case .string(let newOwner) = arguments[2]
        else { return }
        nameOwnerChanged?(name, oldOwner, newOwner)
        if name.hasPrefix(":"), newOwner.isEmpty {
            credentials.forget(name)
            connectionClosed?(name)
        }
    }

    func handleMethodCall(_ message: DBusMessage) {
        if holdsForCredentials(message) { return }
        var reply: DBusMessage?
        do {
            let outputs = try answer(message)
            reply = try message.makeReturn()
            try reply?.append(outputs)
        } catch let error as DBusCallError {
            reply = try? message.makeError(name: error.name, message: error.message)
        } catch {
            reply = try? message.makeError(name: DBusStandardError.failed, message: "\(error)")
        }
        guard message.expectsReply, let reply else { return }
        try? send(reply)
    }

    /// The reply's arguments, or the error to reply with. Arguments are parsed only after the object and method
    /// are known and the header's signature matches: parsing makes one value per element, so a peer must not be
    /// able to make the daemon build a 32 MiB array for a method that does not exist or takes a string.
    private func answer(_ message: DBusMessage) throws(DBusCallError) -> [DBusValue] {
        guard let path = message.path, let member = message.member, let sender = message.sender else {
            throw DBusCallError(name: DBusStandardError.invalidArgs, message: "method call without path, member or sender")
        }
        let signature = message.signature
        let object = exports.objects[path]
        if message.interface == "org.freedesktop.DBus.Introspectable" || (message.interface == nil && member == "Introspect") {
            guard member == "Introspect" else { throw DBusCallError.unknownMethod(member, "org.freedesktop.DBus.Introspectable") }
            guard signature.isEmpty else { throw DBusCallError.wrongSignature("org.freedesktop.DBus.Introspectable.Introspect", "", signature) }
            let children = DBusIntrospection.children(of: path, among: exports.objects.keys)
            guard object != nil || !children.isEmpty else { throw DBusCallError.unknownObject(path) }
            return [.string(DBusIntrospection.document(object: object, children: children))]
        }
        guard let object else { throw DBusCallError.unknownObject(path) }
        try object.accessCheck?(sender)
        if message.interface == "org.freedesktop.DBus.Properties" {
            let expected = ["Get": "ss", "GetAll": "s", "Set": "ssv"]
            guard let wanted = expected[member] else { throw DBusCallError.unknownMethod(member, "org.freedesktop.DBus.Properties") }
            guard signature == wanted else { throw DBusCallError.wrongSignature("org.freedesktop.DBus.Properties.\(member)", wanted, signature) }
            return try answerProperties(member: member, arguments: try Self.arguments(of: message), object: object, sender: sender)
        }
        let candidates = object.interfaces.filter { message.interface == nil || $0.name == message.interface }
        guard !candidates.isEmpty, let interfaceName = candidates.first?.name else {
            throw DBusCallError(
                name: DBusStandardError.unknownInterface,
                message: "\(path) has no interface \(message.interface ?? "")")
        }
        guard
            let (interface, method) = candidates.lazy.compactMap({ interface in
                interface.methods.first { $0.name == member }.map { (interface, $0) }
            }).first
        else {
            throw DBusCallError.unknownMethod(member, interfaceName)
        }
        guard signature == method.inSignature else {
            throw DBusCallError.wrongSignature("\(interface.name).\(method.name)", method.inSignature, signature)
        }
        let call = DBusMethodCall(
            sender: sender, path: path, interface: interface.name, member: member,
            arguments: try Self.arguments(of: message))
        let outputs = try method.handler(call)
        // A handler returning the wrong types is our bug; the caller gets an error, never a reply it cannot parse.
        let outputSignature = outputs.map(\.signature).joined()
        guard outputSignature == method.outSignature else {
            throw DBusCallError(
                name: DBusStandardError.failed,
                message: "internal error: \(method.name) produced '\(outputSignature)' instead of '\(method.outSignature)'")
        }
        return outputs
    }

    private static func arguments(of message: DBusMessage) throws(DBusCallError) -> [DBusValue] {
        do { return try message.arguments() } catch { throw DBusCallError.wrap(error) }
    }

    private func answerProperties(
        member: String, arguments: [DBusValue], object: DBusObject,
        sender: String
    ) throws(DBusCallError) -> [DBusValue] {
        func interface(_ name: String) throws(DBusCallError) -> DBusInterface {
            guard let found = object.interfaces.first(where: { $0.name == name }) else {
                throw DBusCallError(name: DBusStandardError.unknownInterface, message: "\(object.path) has no interface \(name)")
            }
            return found
        }
        let strings = arguments.compactMap { value -> String? in
            if case .string(let text) = value { return text }
            return nil
        }
        let signature = arguments.map(\.signature).joined()
        switch member {
        case "Get" where signature == "ss":
            let found = try interface(strings[0])
            guard let property = found.properties.first(where: { $0.name == strings[1] }) else {
                throw DBusCallError(name: DBusStandardError.unknownProperty, message: "\(strings[0]) has no property \(strings[1])")
            }
            return [.variant(try property.read(sender))]
        case "GetAll" where signature == "s":
            let found = try interface(strings[0])
            var values: [String: DBusValue] = [:]
            for property in found.properties { values[property.name] = try property.read(sender) }
            return [.vardict(values)]
        case "Set" where signature == "ssv":
            let found = try interface(strings[0])
            guard found.properties.contains(where: { $0.name == strings[1] }) else {
                throw DBusCallError(name: DBusStandardError.unknownProperty, message: "\(strings[0]) has no property \(strings[1])")
            }
            throw DBusCallError(
                name: DBusStandardError.propertyReadOnly,
                message: "\(strings[0]).\(strings[1]) is read-only; use the interface's methods to change it")
        default:
            throw DBusCallError.unknownMethod(member, "org.freedesktop.DBus.Properties")
        }
    }
}

/// The standard errors a call the server cannot route is answered with.
extension DBusCallError {
    fileprivate static func wrongSignature(_ method: String, _ expected: String, _ found: String) -> DBusCallError {
        DBusCallError(
            name: DBusStandardError.invalidArgs,
            message: "\(method) takes arguments of type '\(expected)', not '\(found)'")
    }

    fileprivate static func unknownObject(_ path: String) -> DBusCallError {
        DBusCallError(name: DBusStandardError.unknownObject, message: "no object at \(path)")
    }

    fileprivate static func unknownMethod(_ member: String, _ interface: String) -> DBusCallError {
        DBusCallError(name: DBusStandardError.unknownMethod, message: "\(interface) has no method \(member)")
    }
}

/// One named function, so `deinit` can remove exactly the filter `init` added (libdbus matches by pointer).
private func objectServerFilter(
    _ connection: OpaquePointer?, _ message: OpaquePointer?,
    _ data: UnsafeMutableRawPointer?
) -> DBusHandlerResult {
    guard let message, let data else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
    return Unmanaged<DBusObjectServer>.fromOpaque(data).takeUnretainedValue().filter(message)
}

// MARK: Calling other services and hearing their signals (the daemon as a client of bluetoothd)

extension DBusObjectServer {
    /// Adds a match rule on the bus and calls `handler` with every signal that reaches this connection (the
    /// handler checks interface, member and path itself: the filter sees the signals of every match rule).
    @discardableResult
    public func addSignalHandler(matchRule: String, _ handler: @escaping (DBusMessage) -> Void) throws(DBusCallError) -> Int {
        try connection.addMatch(matchRule)
        return signalHandlers.add(rule: matchRule, handler)
    }

    /// Removes the handler and its match rule (other handlers with the same rule keep theirs: the bus counts).
    public func removeSignalHandler(_ id: Int) {
        guard let rule = signalHandlers.remove(id) else { return }
        connection.removeMatch(rule)
    }

    /// Calls a method without blocking the loop; `completion` runs on the loop thread with the reply's
    /// arguments or the error (the peer's, a timeout's, or the bus's when the peer is gone).
    public func callAsync(
        destination: String, path: String, interface: String, member: String,
        arguments: [DBusValue] = [], timeout: Duration = .seconds(5),
        completion: @escaping (Result<[DBusValue], DBusCallError>) -> Void
    ) {
        let message: DBusMessage
        do {
            message = try DBusMessage.methodCall(destination: destination, path: path, interface: interface, member: member)
            try message.append(arguments)
        } catch {
            inbox.completedCalls.append { completion(.failure(DBusCallError.wrap(error))) }
            loop.execute {}
            return
        }
        let milliseconds = Int32(
            clamping: timeout.components.seconds * 1000
                + timeout.components.attoseconds / 1_000_000_000_000_000)
        var pending: OpaquePointer?
        guard dbus_connection_send_with_reply(connection.pointer, message.pointer, &pending, milliseconds) != 0,
            let pending
        else {
            inbox.completedCalls.append {
                completion(
                    .failure(
                        DBusCallError(
                            name: "org.freedesktop.DBus.Error.Disconnected",
                            message: "not connected to the bus; \(member) was not sent")))
            }
            loop.execute {}
            return
        }
        let call = PendingCall(server: self, completion: completion)
        // libdbus keeps one reference to `call` until it frees the notify data.
        let data = Unmanaged.passRetained(call).toOpaque()
        _ = dbus_pending_call_set_notify(
            pending, pendingCallNotify, data,
            { data in
                guard let data else { return }
                Unmanaged<PendingCall>.fromOpaque(data).release()
            })
        // Single-threaded use: nothing could have completed it between send and set_notify, but be sure.
        if dbus_pending_call_get_completed(pending) != 0 { call.complete(pending) }
        dbus_pending_call_unref(pending)
    }
}

/// One outstanding asynchronous call: turns the reply into a `Result` and queues the completion.
private final class PendingCall {
    weak var server: DBusObjectServer?
    var completion: ((Result<[DBusValue], DBusCallError>) -> Void)?

    init(server: DBusObjectServer, completion: @escaping (Result<[DBusValue], DBusCallError>) -> Void) {
        self.server = server
        self.completion = completion
    }

    func complete(_ pending: OpaquePointer) {
        guard let completion, let server else { return }
        self.completion = nil
        let result: Result<[DBusValue], DBusCallError>
        if let reply = dbus_pending_call_steal_reply(pending) {
            let message = DBusMessage(adopting: reply)
            do {
                let arguments = try message.arguments()
                if message.kind == .error {
                    var text = ""
                    if case .string(let first)? = arguments.first { text = first }
                    result = .failure(DBusCallError(name: message.errorName ?? DBusStandardError.failed, message: text))
                } else {
                    result = .success(arguments)
                }
            } catch {
                result = .failure(DBusCallError(name: DBusCallError.unreadableReplyName, message: "the reply could not be read: \(error)"))
            }
        } else {
            result = .failure(DBusCallError(name: "org.freedesktop.DBus.Error.NoReply", message: "no reply"))
        }
        server.inbox.completedCalls.append { completion(result) }
    }
}

private func pendingCallNotify(_ pending: OpaquePointer?, _ data: UnsafeMutableRawPointer?) {
    guard let pending, let data else { return }
    Unmanaged<PendingCall>.fromOpaque(data).takeUnretainedValue().complete(pending)
}
