import DBus

/// When beacond asks bluetoothd for what, as one state machine: whether discovery is wanted, which calls are in
/// flight, which adapter is chosen and what the discovery is doing. It does no I/O: each event (a call, a reply,
/// a signal, a timer) returns the actions for `BlueZDiscovery` to carry out, so every path (bluetoothd gone,
/// the adapter removed or powered off, a refused start, discovery stopped under us) is a unit test.
struct DiscoveryStateMachine {
    enum Action: Equatable {
        /// Ask bluetoothd for its objects (GetManagedObjects).
        case getManagedObjects
        /// SetDiscoveryFilter, then StartDiscovery, on the adapter.
        case startDiscovery(BlueZAdapter)
        /// Release our discovery session on the adapter (at `stop`, without a retry), or release it and then
        /// `retryAfterwards` (bluetoothd dropped it, or discovery stopped under us).
        case stopDiscovery(path: String, retryAfterwards: Bool)
        /// Call `refreshDue` in a second.
        case scheduleRetry
        /// Call `discoveringCheckDue(path:)` in two seconds: bluetoothd said discovery stopped; it may restart it.
        case scheduleDiscoveringCheck(path: String)
        /// The devices known so far are stale: all of them (nil), or those under an adapter's path.
        case forgetDevices(under: String?)
    }

    /// `hciN`, or nil for the first powered adapter.
    let adapterName: String?
    private(set) var state: BlueZDiscovery.State = .stopped
    private(set) var adapters: [String: BlueZAdapter] = [:]
    /// Discovery is wanted (between `start` and `stop`).
    private(set) var wanted = false
    /// GetManagedObjects is out: another refresh would only repeat it.
    private var refreshing = false
    /// SetDiscoveryFilter/StartDiscovery are out: a second start would make bluetoothd answer InProgress.
    private var startingDiscovery = false

    init(adapterName: String?) {
        self.adapterName = adapterName
    }

    var isDiscovering: Bool {
        if case .discovering = state { return true }
        return false
    }

    // MARK: Asked by the daemon

    mutating func start() -> [Action] {
        guard !wanted else { return [] }
        wanted = true
        return refreshDue()
    }

    mutating func stop() -> [Action] {
        guard wanted else { return [] }
        wanted = false
        var actions: [Action] = []
        if case .discovering(let adapter) = state { actions.append(.stopDiscovery(path: adapter.path, retryAfterwards: false)) }
        actions.append(.forgetDevices(under: nil))
        state = .stopped
        return actions
    }

    /// Reads bluetoothd's objects again (at start, when bluetoothd appears, on the retry timer).
    mutating func refreshDue() -> [Action] {
        guard wanted, !refreshing else { return [] }
        refreshing = true
        return [.getManagedObjects]
    }

    // MARK: bluetoothd's replies

    /// GetManagedObjects answered with every adapter's properties (path → properties).
    mutating func managedObjects(adapters found: [String: [String: DBusValue]]) -> [Action] {
        refreshing = false
        guard wanted else { return [] }
        adapters = [:]
        for (path, properties) in found { updateAdapter(path, properties) }
        return chooseAdapter()
    }

    /// GetManagedObjects failed: bluetoothd is not on the bus (its return is a signal, so no retry), or it did
    /// not answer (retried).
    mutating func managedObjectsFailed(_ error: DBusCallError) -> [Action] {
        refreshing = false
        guard wanted else { return [] }
        if error.name == "org.freedesktop.DBus.Error.ServiceUnknown" || error.name == "org.freedesktop.DBus.Error.NameHasNoOwner" {
            state = .waiting("bluetoothd is not running (org.bluez is not on the bus). Fix: systemctl start bluetooth")
            return []
        }
        state = .waiting("bluetoothd did not answer GetManagedObjects: \(error.message)")
        return [.scheduleRetry]
    }

    /// StartDiscovery answered (`filterFailed`: SetDiscoveryFilter before it failed).
    mutating func discoveryStarted(on adapter: BlueZAdapter, _ result: Result<Void, DBusCallError>, filterFailed: Bool) -> [Action] {
        startingDiscovery = false
        guard wanted else {
            // Stopped while the start was out: a session bluetoothd opened for us is released, or it would scan
            // for nobody until beacond exits.
            if case .success = result { return [.stopDiscovery(path: adapter.path, retryAfterwards: false)] }
            return []
        }
        switch result {
        case .success:
            state = .discovering(adapters[adapter.path] ?? adapter)
            return []
        case .failure(let error) where error.name == "org.bluez.Error.InProgress":
            // bluetoothd answers InProgress both when our session already exists and when its start failed
            // because the controller is busy (e.g. discovery left running by a bluetoothd that was killed): then
            // it has dropped our session. Release whatever is ours and start afresh.
            state = .waiting("bluetoothd could not start discovery on \(adapter.name) (\(error.message)); retrying")
            return [.stopDiscovery(path: adapter.path, retryAfterwards: true)]
        case .failure(let error):
            let filterNote = filterFailed ? " (SetDiscoveryFilter failed too)" : ""
            state = .waiting("bluetoothd refused StartDiscovery on \(adapter.name): \(error.name): \(error.message)\(filterNote)")
            return [.scheduleRetry]
        }
    }

    // MARK: bluetoothd's signals

    /// org.bluez came onto the bus, or left it.
    mutating func bluetoothd(running: Bool) -> [Action] {
        guard wanted else { return [] }
        // Adapters appear through InterfacesAdded as bluetoothd registers them; ask as well.
        if running { return refreshDue() }
        adapters = [:]
        state = .waiting("bluetoothd stopped (org.bluez left the bus); scanning resumes when it is back. Fix: systemctl start bluetooth")
        return [.forgetDevices(under: nil)]
    }

    mutating func adapterAdded(_ path: String, _ properties: [String: DBusValue]) -> [Action] {
        updateAdapter(path, properties)
        return chooseAdapterIfWaiting()
    }

    mutating func adapterRemoved(_ path: String) -> [Action] {
        adapters[path] = nil
        var actions: [Action] = []
        if case .discovering(let adapter) = state, adapter.path == path {
            state = .waiting("adapter \(adapter.name) was removed; scanning resumes when it is back")
            actions.append(.forgetDevices(under: path))
        }
        return actions + chooseAdapterIfWaiting()
    }

    /// PropertiesChanged of an adapter (Powered, Discovering, …).
    mutating func adapterChanged(_ path: String, _ changed: [String: DBusValue]) -> [Action] {
        updateAdapter(path, changed)
        guard let adapter = adapters[path] else { return [] }
        guard case .discovering(let current) = state, current.path == path else {
            return adapter.powered ? chooseAdapterIfWaiting() : []
        }
        if !adapter.powered {
            state = .waiting("adapter \(adapter.name) was powered off (or blocked by rfkill); scanning resumes when it is on")
            return []
        }
        if changed["Discovering"] == .boolean(false) {
            // bluetoothd stopped discovering under us (a controller reset, its own restart of the scan). If it is
            // not back on within 2 s, we are blind: say so and start a fresh session.
            return [.scheduleDiscoveringCheck(path: path)]
        }
        state = .discovering(adapter)
        return []
    }

    /// Two seconds after bluetoothd said discovery stopped on `path`.
    mutating func discoveringCheckDue(path: String) -> [Action] {
        guard wanted, case .discovering(let current) = state, current.path == path,
              adapters[path]?.discovering == false else { return [] }
        state = .waiting("discovery on \(current.name) stopped; restarting it")
        return [.stopDiscovery(path: path, retryAfterwards: true)]
    }

    // MARK: Choosing the adapter

    private mutating func chooseAdapterIfWaiting() -> [Action] {
        guard wanted, !isDiscovering else { return [] }
        return chooseAdapter()
    }

    private mutating func chooseAdapter() -> [Action] {
        guard wanted else { return [] }
        let candidates = adapters.values.sorted { $0.name < $1.name }
        let adapter: BlueZAdapter? = if let adapterName { adapters["/org/bluez/\(adapterName)"] }
            else { candidates.first(where: \.powered) ?? candidates.first }
        guard let adapter else {
            let which = adapterName.map { "adapter \($0)" } ?? "Bluetooth adapter"
            let known = candidates.map(\.name).joined(separator: ", ")
            state = .waiting("no \(which) in bluetoothd" + (known.isEmpty ? "" : " (it has \(known))")
                + ". Plug one in, or check rfkill list and dmesg")
            return []
        }
        guard adapter.powered else {
            state = .waiting("adapter \(adapter.name) is powered off. Fix: bluetoothctl power on (and rfkill unblock bluetooth if it is blocked)")
            return []
        }
        if case .discovering(let current) = state, current.path == adapter.path { return [] }
        guard !startingDiscovery else { return [] }
        startingDiscovery = true
        return [.startDiscovery(adapter)]
    }

    private mutating func updateAdapter(_ path: String, _ properties: [String: DBusValue]) {
        var adapter = adapters[path] ?? BlueZAdapter(path: path, name: String(path.split(separator: "/").last ?? ""),
                                                     address: "", powered: false, discovering: false)
        if case .string(let address)? = properties["Address"] { adapter.address = address }
        if case .boolean(let powered)? = properties["Powered"] { adapter.powered = powered }
        if case .boolean(let discovering)? = properties["Discovering"] { adapter.discovering = discovering }
        adapters[path] = adapter
    }
}
