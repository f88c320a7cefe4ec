import BeaconKit
@testable import BlueZ
import DBus
import MainLoopKit
import Foundation
import TestKit
import Testing

/// `BlueZDiscovery` against a fake bluetoothd on a real private bus: the discovery session it asks for, the
/// sightings it reports, and how it follows the adapter and bluetoothd as they go and come back.
@Suite("BlueZ discovery against a fake bluetoothd")
struct BlueZDiscoveryTests {
    /// An iBeacon payload after Apple's company id: 02 15, UUID, major 1, minor 2, measured power -59.
    static let payload: [UInt8] = [
        0x02, 0x15, 0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2, 0xB0, 0x60, 0xD0, 0xF5,
        0xA7, 0x10, 0x96, 0xE0, 0x00, 0x01, 0x00, 0x02, 0xC5,
    ]

    final class Observer: @unchecked Sendable {
        let loop: MainLoop
        let server: DBusObjectServer
        let discovery: BlueZDiscovery
        let states = Locked<[String]>([])
        let sightings = Locked<[String]>([])

        init(bus: PrivateBus) throws {
            loop = try MainLoop()
            server = try DBusObjectServer(connection: try DBusConnection(.address(bus.address)), loop: loop)
            discovery = BlueZDiscovery(server: server, loop: loop, adapterName: nil, reportsAdvertisements: true)
            let states = self.states
            let sightings = self.sightings
            discovery.stateChanged = { state in
                let text: String =
                    switch state {
                    case .stopped: "stopped"
                    case .discovering(let adapter): "discovering \(adapter.name)"
                    case .waiting(let reason): "waiting: \(reason)"
                    }
                states.withLock { $0.append(text) }
            }
            discovery.advertisement = { sighting in
                // Devices without a beacon frame are reported too (private devices are recognised later).
                guard let frame = sighting.content.beacon else { return }
                sightings.withLock { $0.append("\(frame.identity) \(sighting.rssi.map(String.init) ?? "nil")") }
            }
            try discovery.start()
            try loop.startThread()
        }

        var lastState: String { states.withLock { $0.last ?? "" } }

        func stopDiscovery() {
            let discovery = UncheckedBox(self.discovery)
            loop.execute { discovery.value.stop() }
        }
    }

    @Test func asksForLEDiscoveryAndReportsSightings() throws {
        let bus = try PrivateBus()
        let bluetoothd = try FakeBluetoothd(bus: bus)
        defer { bluetoothd.stop() }
        let observer = try Observer(bus: bus)
        defer { observer.loop.stopAndWait() }
        #expect(eventually { observer.lastState == "discovering hci0" }, "\(observer.states.withLock { $0 })")
        #expect(
            bluetoothd.calls.withLock { $0 }.contains(#"SetDiscoveryFilter string("le") boolean(true) int16(-127)"#),
            "\(bluetoothd.calls.withLock { $0 })")
        bluetoothd.advertise(device: "dev_C4_7C_8D_6A_5B_4C", payload: Self.payload, rssi: -61, first: true)
        bluetoothd.advertise(device: "dev_C4_7C_8D_6A_5B_4C", payload: Self.payload, rssi: -63, first: false)
        #expect(eventually { observer.sightings.withLock { $0.count } == 2 })
        #expect(
            observer.sightings.withLock { $0 } == [
                "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2 -61",
                "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2 -63",
            ])
        observer.stopDiscovery()
        #expect(eventually { bluetoothd.calls.withLock { $0.last } == "StopDiscovery" })
    }

    /// Powered off: waiting, with the fix; powered on again: discovery resumes by itself.
    @Test func followsTheAdapterPower() throws {
        let bus = try PrivateBus()
        let bluetoothd = try FakeBluetoothd(bus: bus)
        defer { bluetoothd.stop() }
        let observer = try Observer(bus: bus)
        defer { observer.loop.stopAndWait() }
        #expect(eventually { observer.lastState == "discovering hci0" })
        bluetoothd.setPowered(false)
        #expect(eventually { observer.lastState.hasPrefix("waiting: adapter hci0 was powered off") }, "\(observer.lastState)")
        bluetoothd.setPowered(true)
        #expect(eventually { observer.lastState == "discovering hci0" }, "\(observer.states.withLock { $0 })")
        #expect(bluetoothd.calls.withLock { $0.filter { $0 == "StartDiscovery" }.count } == 2)
    }

    /// bluetoothd stops: waiting; a new bluetoothd appears: discovery resumes on it without anyone's help.
    @Test func followsBluetoothdRestarting() throws {
        let bus = try PrivateBus()
        var bluetoothd: FakeBluetoothd? = try FakeBluetoothd(bus: bus)
        let observer = try Observer(bus: bus)
        defer { observer.loop.stopAndWait() }
        #expect(eventually { observer.lastState == "discovering hci0" })
        bluetoothd?.stop()
        bluetoothd = nil
        #expect(eventually { observer.lastState.hasPrefix("waiting: bluetoothd stopped") }, "\(observer.lastState)")
        let restarted = try FakeBluetoothd(bus: bus)
        defer { restarted.stop() }
        #expect(eventually { observer.lastState == "discovering hci0" }, "\(observer.states.withLock { $0 })")
    }

    /// No bluetoothd at all: waiting with the command that fixes it, not an error.
    @Test func waitsForAMissingBluetoothd() throws {
        let bus = try PrivateBus()
        let observer = try Observer(bus: bus)
        defer { observer.loop.stopAndWait() }
        #expect(eventually { observer.lastState.contains("bluetoothd is not running") }, "\(observer.lastState)")
        #expect(observer.lastState.contains("systemctl start bluetooth"))
        let bluetoothd = try FakeBluetoothd(bus: bus)
        defer { bluetoothd.stop() }
        #expect(eventually { observer.lastState == "discovering hci0" }, "\(observer.states.withLock { $0 })")
    }

    @Test func readsAppleManufacturerData() {
        let data = DBusValue.dictionary(
            keySignature: "q", valueSignature: "v",
            [
                DBusDictionaryEntry(key: .uint16(0x0075), value: .variant(.array(elementSignature: "y", [.byte(1)]))),
                DBusDictionaryEntry(key: .uint16(0x004C), value: .variant(.array(elementSignature: "y", Self.payload.map { .byte($0) }))),
            ])
        #expect(BlueZDiscovery.applePayload(data) == Self.payload)
        #expect(BlueZDiscovery.applePayload(.string("x")) == nil)
    }
}
