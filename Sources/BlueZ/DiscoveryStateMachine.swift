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

    /// Whether discovery is wanted and, if so, what it is doing: one value, so discovery running or waiting
    /// while nobody wants it cannot be written down.
    private enum Phase: Equatable {
        /// Not wanted (before `start`, after `stop`).
        case stopped
        /// Wanted; bluetoothd has not yet said whether discovery can run (the first GetManagedObjects or
        /// StartDiscovery is out). Shown as `.stopped`: nothing is seen yet, and there is no reason to give.
        case starting
        /// Wanted but impossible now; the reason says why and what would fix it.
        case waiting(String)
        /// Wanted, and discovery runs on this adapter.
        case discovering(BlueZAdapter)
    }

    /// `hciN`, or nil for the first powered adapter.
    let adapterName: String?
    private var phase: Phase = .stopped
    /// bluetoothd's adapters as it last described them. Independent of `phase`: they describe bluetoothd, not
    /// what beacond wants of it, and are kept across `stop` and `start`.
    private(set) var adapters: [String: BlueZAdapter] = [:]
    /// GetManagedObjects is out: another refresh would only repeat it. Independent of `phase`: a `stop` does
    /// not recall a call, so one asked before a `stop` may still be out after the next `start`; its answer is
    /// then used.
    private var refreshing = false
    /// SetDiscoveryFilter/StartDiscovery are out: a second start would make bluetoothd answer InProgress.
    /// Independent of `phase` for the same reason: the answer comes whether or not discovery is still wanted,
    /// and `discoveryStarted` releases a session nobody wants any more.
    private var startingDiscovery = false

    init(adapterName: String?) {
        self.adapterName = adapterName
    }

    /// What `BlueZDiscovery` reports: `.stopped` also while starting.
    var state: BlueZDiscovery.State {
        switch phase {
        case .stopped, .starting: return .stopped
        case .waiting(let reason): return .waiting(reason)
        case .discovering(let adapter): return .discovering(adapter)
        }
    }

    /// Discovery is wanted (between `start` and `stop`).
    var wanted: Bool { phase != .stopped }

    var isDiscovering: Bool {
        if case .discovering = phase { return true }
        return false
    }

    // MARK: Asked by the daemon

    mutating func start() -> [Action] {
        guard !wanted else { return [] }
        phase = .starting
        return refreshDue()
    }

    mutating func stop() -> [Action] {
        guard wanted else { return [] }
        var actions: [Action] = []
        if case .discovering(let adapter) = phase { actions.append(.stopDiscovery(path: adapter.path, retryAfterwards: false)) }
        actions.append(.forgetDevices(under: nil))
        phase = .stopped
        return actions
    }

    /// Reads bluetoothd's objects again, to find an adapter to discover on (at start, when bluetoothd appears, on
    /// the retry timer). Retries cannot be recalled, so one that comes due once discovery runs is stale: ignored.
    mutating func refreshDue() -> [Action] {
        guard wanted, !isDiscovering, !refreshing else { return [] }
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
            phase = .waiting("bluetoothd is not running (org.bluez is not on the bus). Fix: systemctl start bluetooth")
            return []
        }
        phase = .waiting("bluetoothd did not answer GetManagedObjects: \(error.message)")
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
            phase = .discovering(adapters[adapter.path] ?? adapter)
            return []
        case .failure(let error) where error.name == "org.bluez.Error.InProgress":
            // bluetoothd answers InProgress both when our session already exists and when its start failed
            // because the controller is busy (e.g. discovery left running by a bluetoothd that was killed): then
            // it has dropped our session. Release whatever is ours and start afresh.
            phase = .waiting("bluetoothd could not start discovery on \(adapter.name) (\(error.message)); retrying")
            return [.stopDiscovery(path: adapter.path, retryAfterwards: true)]
        case .failure(let error):
            let filterNote = filterFailed ? " (SetDiscoveryFilter failed too)" : ""
            phase = .waiting("bluetoothd refused StartDiscovery on \(adapter.name): \(error.name): \(error.message)\(filterNote)")
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
        phase = .waiting("bluetoothd stopped (org.bluez left the bus); scanning resumes when it is back. Fix: systemctl start bluetooth")
        return [.forgetDevices(under: nil)]
    }

    mutating func adapterAdded(_ path: String, _ properties: [String: DBusValue]) -> [Action] {
        updateAdapter(path, properties)
        return chooseAdapterIfWaiting()
    }

    mutating func adapterRemoved(_ path: String) -> [Action] {
        adapters[path] = nil
        var actions: [Action] = []
        if case .discovering(let adapter) = phase, adapter.path == path {
            phase = .waiting("adapter \(adapter.name) was removed; scanning resumes when it is back")
            actions.append(.forgetDevices(under: path))
        }
        return actions + chooseAdapterIfWaiting()
    }

    /// PropertiesChanged of an adapter (Powered, Discovering, …).
    mutating func adapterChanged(_ path: String, _ changed: [String: DBusValue]) -> [Action] {
        updateAdapter(path, changed)
        guard let adapter = adapters[path] else { return [] }
        guard case .discovering(let current) = phase, current.path == path else {
            return adapter.powered ? chooseAdapterIfWaiting() : []
        }
        if !adapter.powered {
            phase = .waiting("adapter \(adapter.name) was powered off (or blocked by rfkill); scanning resumes when it is on")
            return []
        }
        if changed["Discovering"] == .boolean(false) {
            // bluetoothd stopped discovering under us (a controller reset, its own restart of the scan). If it is
            // not back on within 2 s, we are blind: say so and start a fresh session.
            return [.scheduleDiscoveringCheck(path: path)]
        }
        phase = .discovering(adapter)
        return []
    }

    /// Two seconds after bluetoothd said discovery stopped on `path`.
    mutating func discoveringCheckDue(path: String) -> [Action] {
        guard wanted, case .discovering(let current) = phase, current.path == path,
            adapters[path]?.discovering == false
        else { return [] }
        phase = .waiting("discovery on \(current.name) stopped; restarting it")
        return [.stopDiscovery(path: path, retryAfterwards: true)]
    }

    // MARK: Choosing the adapter

    private mutating func chooseAdapterIfWaiting() -> [Action] {
        guard wanted, !isDiscovering else { return [] }
        return chooseAdapter()
    }

    private mutating func chooseAdapter() -> [Action] {
        guard wanted else { return [] }
        // Never move away from the adapter discovering while it is there and powered: a start elsewhere would leave
        // its session scanning for nobody (`stop` releases only the adapter discovering). Removed or powered off,
        // bluetoothd has dropped the session already.
        if case .discovering(let current) = phase, adapters[current.path]?.powered == true { return [] }
        let candidates = adapters.values.sorted { $0.name < $1.name }
        let adapter: BlueZAdapter? =
            if let adapterName { adapters["/org/bluez/\(adapterName)"] } else { candidates.first(where: \.powered) ?? candidates.first }
        guard let adapter else {
            let which = adapterName.map { "adapter \($0)" } ?? "Bluetooth adapter"
            let known = candidates.map(\.name).joined(separator: ", ")
            phase = .waiting(
                "no \(which) in bluetoothd" + (known.isEmpty ? "" : " (it has \(known))")
                    + ". Plug one in, or check rfkill list and dmesg")
            return []
        }
        guard adapter.powered else {
            phase = .waiting("adapter \(adapter.name) is powered off. Fix: bluetoothctl power on (and rfkill unblock bluetooth if it is blocked)")
            return []
        }
        guard !startingDiscovery else { return [] }
        startingDiscovery = true
        return [.startDiscovery(adapter)]
    }

    private mutating func updateAdapter(_ path: String, _ properties: [String: DBusValue]) {
        var adapter =
            adapters[path]
            ?? BlueZAdapter(
                path: path, name: String(path.split(separator: "/").last ?? ""),
                address: "", powered: false, discovering: false)
        if case .string(let address)? = properties["Address"] { adapter.address = address }
        if case .boolean(let powered)? = properties["Powered"] { adapter.powered = powered }
        if case .boolean(let discovering)? = properties["Discovering"] { adapter.discovering = discovering }
        adapters[path] = adapter
    }
}
