@testable import BlueZ
import DBus
import Testing

/// The discovery state machine alone: each event of bluetoothd's life and what beacond does about it.
@Suite("BlueZ discovery state machine")
struct DiscoveryStateMachineTests {
    typealias Machine = DiscoveryStateMachine

    static func adapter(_ name: String, powered: Bool = true, discovering: Bool = false) -> [String: DBusValue] {
        [
            "Address": .string("00:11:22:33:44:5\(name.last ?? "0")"), "Powered": .boolean(powered),
            "Discovering": .boolean(discovering),
        ]
    }

    static func hci(_ name: String) -> BlueZAdapter {
        BlueZAdapter(
            path: "/org/bluez/\(name)", name: name, address: "00:11:22:33:44:5\(name.last ?? "0")",
            powered: true, discovering: false)
    }

    static func waiting(_ machine: Machine) -> String? {
        if case .waiting(let reason) = machine.state { return reason }
        return nil
    }

    /// bluetoothd as far as discovery sessions go: the adapters holding a session of ours. It grants
    /// StartDiscovery and StopDiscovery at once and feeds the answers back; GetManagedObjects and the retry timer
    /// are counted, for the test to answer.
    struct Sessions {
        var open: Set<String> = []
        var objectsAsked = 0
        var retriesScheduled = 0

        mutating func carryOut(_ actions: [Machine.Action], _ machine: inout Machine) {
            for action in actions {
                switch action {
                case .startDiscovery(let adapter):
                    open.insert(adapter.path)
                    carryOut(machine.discoveryStarted(on: adapter, .success(()), filterFailed: false), &machine)
                case .stopDiscovery(let path, let retryAfterwards):
                    open.remove(path)
                    if retryAfterwards { carryOut(machine.refreshDue(), &machine) }
                case .getManagedObjects: objectsAsked += 1
                case .scheduleRetry: retriesScheduled += 1
                case .scheduleDiscoveringCheck, .forgetDevices: break
                }
            }
        }
    }

    /// A machine discovering on hci0.
    static func discovering() -> Machine {
        var machine = Machine(adapterName: nil)
        _ = machine.start()
        _ = machine.managedObjects(adapters: ["/org/bluez/hci0": adapter("hci0")])
        _ = machine.discoveryStarted(on: hci("hci0"), .success(()), filterFailed: false)
        return machine
    }

    @Test("start asks once; the first powered adapter gets one discovery start, however often it is offered")
    func startsOnce() {
        var machine = Machine(adapterName: nil)
        #expect(machine.start() == [.getManagedObjects])
        #expect(machine.start().isEmpty)
        #expect(machine.refreshDue().isEmpty, "GetManagedObjects is already out")
        let objects = ["/org/bluez/hci1": Self.adapter("hci1", powered: false), "/org/bluez/hci0": Self.adapter("hci0")]
        #expect(machine.managedObjects(adapters: objects) == [.startDiscovery(Self.hci("hci0"))])
        #expect(machine.refreshDue() == [.getManagedObjects])
        #expect(machine.managedObjects(adapters: objects).isEmpty, "StartDiscovery is already out")
        #expect(machine.discoveryStarted(on: Self.hci("hci0"), .success(()), filterFailed: false).isEmpty)
        #expect(machine.state == .discovering(Self.hci("hci0")))
    }

    @Test("InProgress releases our session and starts afresh; another refusal is retried with its reason")
    func refusedStarts() {
        var machine = Machine(adapterName: nil)
        _ = machine.start()
        _ = machine.managedObjects(adapters: ["/org/bluez/hci0": Self.adapter("hci0")])
        let busy = DBusCallError(name: "org.bluez.Error.InProgress", message: "Operation already in progress")
        #expect(
            machine.discoveryStarted(on: Self.hci("hci0"), .failure(busy), filterFailed: false)
                == [.stopDiscovery(path: "/org/bluez/hci0", retryAfterwards: true)])
        #expect(Self.waiting(machine)?.contains("retrying") == true)
        #expect(machine.refreshDue() == [.getManagedObjects])
        #expect(machine.managedObjects(adapters: ["/org/bluez/hci0": Self.adapter("hci0")]) == [.startDiscovery(Self.hci("hci0"))])
        let refused = DBusCallError(name: "org.bluez.Error.NotReady", message: "Resource Not Ready")
        #expect(machine.discoveryStarted(on: Self.hci("hci0"), .failure(refused), filterFailed: true) == [.scheduleRetry])
        #expect(
            Self.waiting(machine) == "bluetoothd refused StartDiscovery on hci0: org.bluez.Error.NotReady: Resource Not Ready "
                + "(SetDiscoveryFilter failed too)")
    }

    @Test("without bluetoothd it waits for org.bluez to come back (no polling), then asks again")
    func followsBluetoothd() {
        var machine = Machine(adapterName: nil)
        _ = machine.start()
        let absent = DBusCallError(name: "org.freedesktop.DBus.Error.ServiceUnknown", message: "org.bluez")
        #expect(machine.managedObjectsFailed(absent).isEmpty)
        #expect(Self.waiting(machine)?.contains("systemctl start bluetooth") == true)
        #expect(machine.bluetoothd(running: true) == [.getManagedObjects])
        let slow = DBusCallError(name: "org.freedesktop.DBus.Error.NoReply", message: "timeout")
        #expect(machine.managedObjectsFailed(slow) == [.scheduleRetry])

        var running = Self.discovering()
        #expect(running.bluetoothd(running: false) == [.forgetDevices(under: nil)])
        #expect(Self.waiting(running)?.hasPrefix("bluetoothd stopped") == true)
        #expect(running.adapters.isEmpty)
    }

    @Test("powered off (or rfkill) while discovering waits; powered on starts again")
    func followsPower() {
        var machine = Self.discovering()
        #expect(machine.adapterChanged("/org/bluez/hci0", ["Powered": .boolean(false)]).isEmpty)
        #expect(Self.waiting(machine)?.contains("powered off") == true)
        #expect(machine.adapterChanged("/org/bluez/hci0", ["Powered": .boolean(true)]) == [.startDiscovery(Self.hci("hci0"))])
    }

    @Test("discovery stopped under us: restarted if bluetoothd has not resumed it within the check, left alone if it has")
    func discoveryStoppedUnderUs() {
        var machine = Self.discovering()
        _ = machine.adapterChanged("/org/bluez/hci0", ["Discovering": .boolean(true)])
        #expect(
            machine.adapterChanged("/org/bluez/hci0", ["Discovering": .boolean(false)])
                == [.scheduleDiscoveringCheck(path: "/org/bluez/hci0")])
        #expect(machine.isDiscovering, "not blind yet: bluetoothd may resume it")
        #expect(machine.discoveringCheckDue(path: "/org/bluez/hci0") == [.stopDiscovery(path: "/org/bluez/hci0", retryAfterwards: true)])
        #expect(Self.waiting(machine) == "discovery on hci0 stopped; restarting it")

        var resumed = Self.discovering()
        _ = resumed.adapterChanged("/org/bluez/hci0", ["Discovering": .boolean(false)])
        _ = resumed.adapterChanged("/org/bluez/hci0", ["Discovering": .boolean(true)])
        #expect(resumed.discoveringCheckDue(path: "/org/bluez/hci0").isEmpty)
        #expect(resumed.isDiscovering)
    }

    @Test("the adapter removed: its devices are forgotten and another powered adapter is taken")
    func adapterRemoved() {
        var machine = Self.discovering()
        #expect(machine.adapterAdded("/org/bluez/hci1", Self.adapter("hci1")).isEmpty, "already discovering on hci0")
        #expect(
            machine.adapterRemoved("/org/bluez/hci0")
                == [.forgetDevices(under: "/org/bluez/hci0"), .startDiscovery(Self.hci("hci1"))])
        #expect(Self.waiting(machine)?.contains("hci0 was removed") == true)
    }

    @Test("a named adapter that is missing is said, with the ones there are")
    func namedAdapterMissing() {
        var machine = Machine(adapterName: "hci1")
        _ = machine.start()
        #expect(machine.managedObjects(adapters: ["/org/bluez/hci0": Self.adapter("hci0")]).isEmpty)
        #expect(Self.waiting(machine) == "no adapter hci1 in bluetoothd (it has hci0). Plug one in, or check rfkill list and dmesg")
        #expect(machine.adapterAdded("/org/bluez/hci1", Self.adapter("hci1")) == [.startDiscovery(Self.hci("hci1"))])
    }

    @Test("stop releases the session, also one that bluetoothd opens after it; other replies change nothing")
    func stop() {
        var machine = Self.discovering()
        #expect(machine.stop() == [.stopDiscovery(path: "/org/bluez/hci0", retryAfterwards: false), .forgetDevices(under: nil)])
        #expect(machine.state == .stopped)
        #expect(machine.stop().isEmpty)

        var starting = Machine(adapterName: nil)
        _ = starting.start()
        _ = starting.managedObjects(adapters: ["/org/bluez/hci0": Self.adapter("hci0")])
        _ = starting.stop()
        #expect(
            starting.discoveryStarted(on: Self.hci("hci0"), .success(()), filterFailed: false)
                == [.stopDiscovery(path: "/org/bluez/hci0", retryAfterwards: false)])
        #expect(starting.state == .stopped)
        #expect(starting.bluetoothd(running: true).isEmpty)
        #expect(starting.start() == [.getManagedObjects])
    }

    @Test("wanted again while GetManagedObjects is still out: its answer is awaited, not asked again")
    func restartWhileAskingObjects() {
        var machine = Machine(adapterName: nil)
        #expect(machine.start() == [.getManagedObjects])
        #expect(machine.wanted)
        #expect(machine.state == .stopped, "nothing known yet")
        #expect(machine.stop() == [.forgetDevices(under: nil)])
        #expect(!machine.wanted)
        #expect(machine.start().isEmpty, "the first GetManagedObjects is still out")
        #expect(machine.managedObjects(adapters: ["/org/bluez/hci0": Self.adapter("hci0")]) == [.startDiscovery(Self.hci("hci0"))])
    }

    @Test("wanted again while StartDiscovery is still out: no second start, and its success is kept")
    func restartWhileStartingDiscovery() {
        var machine = Machine(adapterName: nil)
        _ = machine.start()
        #expect(machine.managedObjects(adapters: ["/org/bluez/hci0": Self.adapter("hci0")]) == [.startDiscovery(Self.hci("hci0"))])
        #expect(machine.stop() == [.forgetDevices(under: nil)])
        #expect(machine.start() == [.getManagedObjects])
        #expect(machine.managedObjects(adapters: ["/org/bluez/hci0": Self.adapter("hci0")]).isEmpty, "StartDiscovery is still out")
        #expect(machine.discoveryStarted(on: Self.hci("hci0"), .success(()), filterFailed: false).isEmpty)
        #expect(machine.state == .discovering(Self.hci("hci0")))
    }

    @Test("a retry that comes due after discovery started on an added adapter starts no second one, and stop leaves none")
    func lateRetryAfterAdapterAdded() {
        var machine = Machine(adapterName: nil)
        var bluetoothd = Sessions()
        bluetoothd.carryOut(machine.start(), &machine)
        let slow = DBusCallError(name: "org.freedesktop.DBus.Error.NoReply", message: "timeout")
        bluetoothd.carryOut(machine.managedObjectsFailed(slow), &machine)
        #expect(bluetoothd.retriesScheduled == 1)
        bluetoothd.carryOut(machine.adapterAdded("/org/bluez/hci1", Self.adapter("hci1")), &machine)
        bluetoothd.carryOut(machine.adapterAdded("/org/bluez/hci0", Self.adapter("hci0")), &machine)
        #expect(machine.state == .discovering(Self.hci("hci1")))
        #expect(bluetoothd.open == ["/org/bluez/hci1"])
        let asked = bluetoothd.objectsAsked
        bluetoothd.carryOut(machine.refreshDue(), &machine) // the retry timer fires
        if bluetoothd.objectsAsked > asked {
            let objects = ["/org/bluez/hci0": Self.adapter("hci0"), "/org/bluez/hci1": Self.adapter("hci1", discovering: true)]
            bluetoothd.carryOut(machine.managedObjects(adapters: objects), &machine)
        }
        #expect(bluetoothd.open == ["/org/bluez/hci1"], "one session, on the adapter already discovering")
        #expect(machine.state == .discovering(Self.hci("hci1")))
        bluetoothd.carryOut(machine.stop(), &machine)
        #expect(bluetoothd.open.isEmpty, "stop leaves no adapter discovering")
    }

    @Test("bluetoothd's objects listing a lower adapter keep discovery where it runs while that adapter is there and powered")
    func keepsTheDiscoveringAdapter() {
        var machine = Machine(adapterName: nil)
        _ = machine.start()
        _ = machine.managedObjects(adapters: ["/org/bluez/hci1": Self.adapter("hci1")])
        _ = machine.discoveryStarted(on: Self.hci("hci1"), .success(()), filterFailed: false)
        let both = ["/org/bluez/hci0": Self.adapter("hci0"), "/org/bluez/hci1": Self.adapter("hci1", discovering: true)]
        #expect(machine.managedObjects(adapters: both).isEmpty)
        #expect(machine.state == .discovering(Self.hci("hci1")))
        #expect(
            machine.managedObjects(adapters: ["/org/bluez/hci0": Self.adapter("hci0"), "/org/bluez/hci1": Self.adapter("hci1", powered: false)])
                == [.startDiscovery(Self.hci("hci0"))], "hci1 powered off: bluetoothd dropped its sessions")
    }

    @Test("a retry that comes due while discovering is stale: bluetoothd is not asked again")
    func staleRetry() {
        var machine = Self.discovering()
        #expect(machine.refreshDue().isEmpty)
        #expect(machine.isDiscovering)
    }
}
