import BeaconKit
import Foundation
import Testing

/// A phone known by its IRK through the whole pipeline: HCI reports from addresses that rotate every few seconds.
@Suite("Private devices in the pipeline")
struct PrivateDevicePipelineTests {
    typealias Pipeline = BeaconPipeline<String>
    static let key = try! IdentityResolvingKey(parsing: "ec0234a357c8ad05341010a60a397d9b")

    static func at(_ seconds: Double) -> Timestamp { Timestamp(secondsSinceEpoch: 1_000 + seconds) }

    /// A legacy LE Advertising Report (no H4 byte) from a random address with `data`.
    static func report(from address: BluetoothAddress, data: [UInt8], rssi: Int8, addressType: UInt8 = 1) -> [UInt8] {
        var addressBytes: [UInt8] = []
        for shift in stride(from: 0, to: 48, by: 8) { addressBytes.append(UInt8(truncatingIfNeeded: address.rawValue >> UInt64(shift))) }
        return [0x3E, UInt8(12 + data.count), 0x02, 0x01, 0x00, addressType] + addressBytes + [UInt8(data.count)] + data
            + [UInt8(bitPattern: rssi)]
    }

    static func rpa(_ random: UInt32) -> BluetoothAddress {
        let prand = 0x40_0000 | (random & 0x3F_FFFF)
        return BluetoothAddress(rawValue: UInt64(prand) << 24 | UInt64(key.addressHash(prand: prand)))
    }

    static func events(_ events: [Pipeline.Event]) -> [String] {
        events.compactMap { event in
            if case .monitoring(let monitoring) = event {
                return "\(monitoring.kind) at " + String(format: "%.1f", monitoring.timestamp.secondsSinceEpoch - 1_000)
            }
            return nil
        }
    }

    @Test func rotationsEveryFewSecondsAreNoExit() throws {
        var pipeline = Pipeline(monitoring: try MonitoringConfiguration(exitTimeout: .seconds(10)), emitsObservations: false)
        pipeline.privateDevices.setKeys([Self.key])
        var events: [Pipeline.Event] = []
        let region = BeaconRegion(identifier: "phone", constraint: .privateDevice(fingerprint: Self.key.fingerprint))
        pipeline.startMonitoring(region, key: "phone", at: Self.at(0), into: &events)
        pipeline.startRanging(.privateDevice(fingerprint: Self.key.fingerprint), key: "ranging", at: Self.at(0), into: &events)
        events.removeAll()
        // 120 s of a phone advertising 5 times a second, its address rotating every 3 s (40 addresses).
        var ranged = 0
        for tick in 0..<600 {
            let time = Double(tick) * 0.2
            let address = Self.rpa(UInt32(tick / 15) &* 7919 &+ 1)
            let data = BeaconAdvertisingData.phone(txPowerLevel: tick.isMultiple(of: 2) ? 8 : nil)
            pipeline.ingest(hciEvent: Self.report(from: address, data: data, rssi: -60).span, at: Self.at(time), into: &events)
        }
        for event in events {
            if case .ranging(let results, _) = event, results.first?.beacons.first?.identity.kind == .privateDevice { ranged += 1 }
        }
        #expect(Self.events(events) == ["didDetermineState(inside) at 0.0", "didEnterRegion at 0.0"])
        #expect(ranged >= 115, "ranged in \(ranged) of ~120 cycles")
        #expect(pipeline.counters.beacons == 600)
        // Silence: one exit, exit timeout after the last sighting.
        events.removeAll()
        pipeline.advance(to: Self.at(200), into: &events)
        #expect(Self.events(events) == ["didDetermineState(outside) at 129.8", "didExitRegion at 129.8"])
    }

    @Test func otherDevicesAndPublicAddressesAreNotThePhone() throws {
        var pipeline = Pipeline(monitoring: try MonitoringConfiguration(exitTimeout: .seconds(10)), emitsObservations: false)
        pipeline.privateDevices.setKeys([Self.key])
        var events: [Pipeline.Event] = []
        let region = BeaconRegion(identifier: "phone", constraint: .privateDevice(fingerprint: Self.key.fingerprint))
        pipeline.startMonitoring(region, key: "phone", at: Self.at(0), into: &events)
        events.removeAll()
        let stranger = try IdentityResolvingKey(parsing: String(repeating: "42", count: 16))
        let prand: UInt32 = 0x41_2345
        let strangersAddress = BluetoothAddress(rawValue: UInt64(prand) << 24 | UInt64(stranger.addressHash(prand: prand)))
        let data = BeaconAdvertisingData.phone(txPowerLevel: nil)
        pipeline.ingest(hciEvent: Self.report(from: strangersAddress, data: data, rssi: -50).span, at: Self.at(1), into: &events)
        // The phone's own address, but reported as a public address: not resolvable.
        pipeline.ingest(hciEvent: Self.report(from: Self.rpa(5), data: data, rssi: -50, addressType: 0).span, at: Self.at(2), into: &events)
        #expect(Self.events(events) == [])
        #expect(pipeline.counters.beacons == 0)
        pipeline.ingest(hciEvent: Self.report(from: Self.rpa(5), data: data, rssi: -50).span, at: Self.at(3), into: &events)
        #expect(Self.events(events) == ["didDetermineState(inside) at 3.0", "didEnterRegion at 3.0"])
    }

    /// A phone's real advertisement: an iPhone's Nearby Info with TX Power Level 12 dBm, from gl-inet/gl-ble-sdk's
    /// published scan log (Tests/Fixtures/corpus/vectors/vectors-gl-ble-sdk-scanlog.txt, line 13).
    static let iPhoneNearbyInfo: [UInt8] = [
        0x02, 0x01, 0x1A, 0x02, 0x0A, 0x0C, 0x0A, 0xFF, 0x4C, 0x00, 0x10, 0x05, 0x00, 0x18, 0xDC, 0xA0, 0x6A,
    ]

    /// The phone's ranged distance at `rssi`, as the pipeline estimates it (`overrides`: calibration.toml's).
    static func rangedDistance(rssi: Int8, overrides: [UUID: Int8] = [:]) throws -> Double {
        var pipeline = Pipeline(emitsObservations: false)
        pipeline.privateDevices.setKeys([key])
        pipeline.privateDeviceMeasuredPower = overrides
        var events: [Pipeline.Event] = []
        pipeline.startRanging(.privateDevice(fingerprint: key.fingerprint), key: "r", at: at(0), into: &events)
        for tick in 0..<10 {
            pipeline.ingest(hciEvent: report(from: rpa(7), data: iPhoneNearbyInfo, rssi: rssi).span, at: at(Double(tick) * 0.1), into: &events)
        }
        events.removeAll()
        pipeline.advance(to: at(1.5), into: &events)
        guard case .ranging(let results, _)? = events.last, let beacon = results.first?.beacons.first else {
            throw Failure("no ranged phone: \(events)")
        }
        return beacon.accuracy
    }

    struct Failure: Error, CustomStringConvertible { let description: String; init(_ d: String) { description = d } }

    /// An advertised TX Power Level is the radio's output, not a measured power at 0 m (Eddystone's rule, TX − 41,
    /// made an iPhone advertising 12 dBm "−29 dBm at 1 m", so −59 read as ~56 m). A phone at arm's length ranges
    /// near: its 1 m power is the phone default (−59 dBm) whatever it advertises, or calibration.toml's for it.
    @Test func aPhoneAtArmsLengthRangesNearWhateverItsTxPowerLevel() throws {
        #expect(BeaconFrameParser.parse(advertisingData: Self.iPhoneNearbyInfo.span).txPowerLevel == 12)
        let atOneMetre = try Self.rangedDistance(rssi: -59)
        #expect(atOneMetre > 0.5 && atOneMetre < 2, "\(atOneMetre) m")
        let armsLength = try Self.rangedDistance(rssi: -50)
        #expect(armsLength < 1, "\(armsLength) m")
        // calibration.toml's "device:NAME" = -70: this phone is weaker, so the same −59 is nearer.
        let calibrated = try Self.rangedDistance(rssi: -59, overrides: [Self.key.fingerprint: -70])
        #expect(calibrated < atOneMetre / 2, "\(calibrated) m with −70 at 1 m, \(atOneMetre) m without")
    }

    /// A phone known by its identity address (paired with this host, whose controller resolves it) is that address
    /// of its own type only: a random address equal to a phone's public one is another device (issue 38), and a
    /// static random identity address (`@random:`) is not matched by a public address.
    @Test func anIdentityAddressCountsOnlyWithItsAddressType() throws {
        let publicKey = try IdentityResolvingKey(parsing: "irk:ec0234a357c8ad05341010a60a397d9b@5C:F3:70:12:34:56")
        let staticKey = try IdentityResolvingKey(parsing: "irk:0c1d2e3f405162738495a6b7c8d9eafb@random:D5:F3:70:12:34:57")
        #expect(!publicKey.identityAddressIsRandom && staticKey.identityAddressIsRandom)
        var resolver = PrivateAddressResolver(keys: [publicKey, staticKey])
        let publicAddress = BluetoothAddress("5C:F3:70:12:34:56")!
        let staticAddress = BluetoothAddress("D5:F3:70:12:34:57")!
        // HCI address types: 0 public, 1 random, 2 public identity, 3 random (static) identity.
        #expect(resolver.resolve(publicAddress, addressType: 0, at: Self.at(0)) == publicKey.fingerprint)
        #expect(resolver.resolve(publicAddress, addressType: 2, at: Self.at(0)) == publicKey.fingerprint)
        #expect(resolver.resolve(publicAddress, addressType: 1, at: Self.at(0)) == nil, "a random address equal to the public one")
        #expect(resolver.resolve(staticAddress, addressType: 1, at: Self.at(0)) == staticKey.fingerprint)
        #expect(resolver.resolve(staticAddress, addressType: 3, at: Self.at(0)) == staticKey.fingerprint)
        #expect(resolver.resolve(staticAddress, addressType: 0, at: Self.at(0)) == nil, "a public address equal to the static one")
    }

    @Test func eddystoneTelemetryJoinsTheBeaconOfItsAddress() throws {
        var pipeline = Pipeline(emitsObservations: false)
        var events: [Pipeline.Event] = []
        let namespace = EddystoneNamespace(hex: "edd1ebeac04e5defa017")!
        let identity = BeaconIdentity.eddystone(namespace: namespace, instance: EddystoneInstance(hex: "0123456789ab")!)
        pipeline.startRanging(.eddystone(namespace: namespace), key: "r", at: Self.at(0), into: &events)
        let address = BluetoothAddress(rawValue: 0xC0_FF_EE_00_00_01)
        let telemetry = EddystoneTelemetry(batteryMillivolts: 2950, temperature: 21.25, advertisingCount: 10, uptimeTenths: 100)
        pipeline.ingest(
            hciEvent: Self.report(from: address, data: BeaconAdvertisingData.eddystoneTLM(telemetry), rssi: -70).span,
            at: Self.at(0.1), into: &events)
        pipeline.ingest(
            hciEvent: Self.report(from: address, data: BeaconAdvertisingData.eddystoneUID(identity, txPowerAtZero: -20), rssi: -70).span,
            at: Self.at(0.2), into: &events)
        events.removeAll()
        pipeline.advance(to: Self.at(1.5), into: &events)
        guard case .ranging(let results, _)? = events.last else {
            Issue.record("no ranging cycle: \(events)")
            return
        }
        let beacon = try #require(results.first?.beacons.first)
        #expect(beacon.identity == identity)
        #expect(beacon.telemetry == telemetry)
        #expect(beacon.measuredPower == -61)
    }
}
