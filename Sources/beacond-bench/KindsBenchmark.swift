import ArgumentParser
import BeaconKit
import Foundation
import TestKit

/// `beacond-bench kinds`: what the other beacon kinds cost.
/// - decode: one HCI LE Advertising Report per kind (iBeacon, AltBeacon, Eddystone-UID, Eddystone-TLM), each with
///   flags as real beacons send, decoded by `HCIEventDecoder` (which runs `BeaconFrameParser`); the target is
///   AltBeacon and Eddystone within 1.5× of iBeacon per report (docs/performance.md).
/// - IRK resolution: one simulated minute at 2,700 adverts/s (162,000 reports) from 10,000 rotating resolvable
///   private addresses, 100 of them made by the 100 declared keys, through the whole pipeline (decode, resolve,
///   monitor 100 private-device regions); its time over 60 s is the CPU share of one core.
struct KindsBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kinds", abstract: "Decode cost per beacon kind and IRK resolution load (run with -c release).")

    @Option(help: "Time budget per measurement, in seconds (at least 5 rounds run regardless).")
    var seconds = 2.0
    @Option(help: "Declared Identity Resolving Keys.") var keys = 100
    @Option(help: "Distinct resolvable private addresses heard in the simulated minute.") var addresses = 10_000
    @Option(help: "Advertisements per second.") var rate = 2_700

    func validate() throws {
        guard seconds > 0, keys > 0, addresses >= keys, rate > 0 else {
            throw ValidationError("--seconds, --keys and --rate must be positive, --addresses at least --keys")
        }
    }

    func run() throws {
        let timer = RoundTimer(budget: .milliseconds(Int(seconds * 1000)))
        print("decode, one legacy report per event (ns/report, median of rounds; ratio to iBeacon):")
        let uuid = UUID(uuidString: "2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6")!
        let eddystone = BeaconIdentity.eddystone(
            namespace: EddystoneNamespace(hex: "edd1ebeac04e5defa017")!, instance: EddystoneInstance(hex: "0123456789ab")!)
        let kinds: [(String, [UInt8])] = [
            ("iBeacon", BeaconAdvertisingData.iBeacon(BeaconIdentity(uuid: uuid, major: 1, minor: 2), measuredPower: -59)),
            ("AltBeacon", BeaconAdvertisingData.altBeacon(BeaconIdentity(kind: .altBeacon, uuid: uuid, major: 1, minor: 2), referenceRSSI: -59)),
            ("Eddystone-UID", BeaconAdvertisingData.eddystoneUID(eddystone, txPowerAtZero: -18)),
            (
                "Eddystone-TLM",
                BeaconAdvertisingData.eddystoneTLM(
                    EddystoneTelemetry(batteryMillivolts: 3000, temperature: 21.5, advertisingCount: 1, uptimeTenths: 1))
            ),
        ]
        var baseline = 0.0
        for (name, data) in kinds {
            let events = (0..<4096).map { Self.report(data, address: 0xC000_0000_0000 | UInt64($0), rssi: -60) }
            let buffer = EventBuffer(repeating: events, count: events.count)
            let times = timer.measure { _ = DecodeLoops.decodeAll(buffer, passes: 25) }
            let nanoseconds = times.median / Double(events.count * 25) * 1e9
            if name == "iBeacon" { baseline = nanoseconds }
            print(String(format: "  %-14@ %7.1f ns  %5.2f×", name as NSString, nanoseconds, nanoseconds / baseline))
        }

        // The corpus' AD data through the multi-kind parser and through the iBeacon-only one it replaced.
        let frames = try FrameCorpus.load(from: FrameCorpus.defaultDirectory)
        let buffer = EventBuffer(repeating: frames.events, count: 200_000)
        let ranges = DecodeLoops.advertisingDataRanges(buffer)
        let multi = timer.measure { _ = DecodeLoops.parseAll(buffer.bytes, advertisingData: ranges) }
        let single = timer.measure { _ = DecodeLoops.parseIBeaconsOnly(buffer.bytes, advertisingData: ranges) }
        print("the corpus' \(ranges.count) AD blocks (real beacons, phones and other devices), median:")
        print(String(format: "  BeaconFrameParser.beacon (every kind) %6.1f M AD/s", Double(ranges.count) / multi.median / 1e6))
        print(String(format: "  IBeaconParser.parse (iBeacon only)    %6.1f M AD/s", Double(ranges.count) / single.median / 1e6))

        // IRK resolution under load.
        var generator = SplitMix64(state: 26)
        let declared = (0..<keys).map { _ in
            IdentityResolvingKey(bytes: (0..<16).map { _ in UInt8(truncatingIfNeeded: generator.next()) })!
        }
        var pool: [UInt64] = []
        for index in 0..<addresses {
            let prand = UInt32(0x40_0000 | (generator.next() & 0x3F_FFFF))
            let hash: UInt32 =
                index % (addresses / keys) == 0
                ? declared[(index / (addresses / keys)) % keys].addressHash(prand: prand)
                : UInt32(truncatingIfNeeded: generator.next() & 0xFF_FFFF)
            pool.append(UInt64(prand) << 24 | UInt64(hash))
        }
        let reports = rate * 60
        // Each advert comes from one of the 500 addresses introduced last (phones and strangers interleaved).
        var order: [Int] = []
        order.reserveCapacity(reports)
        for n in 0..<reports {
            let introduced = n * addresses / reports + 1
            order.append(introduced - 1 - Int(generator.next() % UInt64(min(500, introduced))))
        }
        let phone = BeaconAdvertisingData.phone(txPowerLevel: 8)
        // In time order (EventBuffer would shuffle them).
        let events = order.map { Self.report(phone, address: pool[$0], rssi: -70) }
        var aesBlocks = 0
        var beacons = 0
        let times = timer.measure {
            var pipeline = BeaconPipeline<Int>(emitsObservations: false)
            pipeline.privateDevices.setKeys(declared)
            var sink: [BeaconPipeline<Int>.Event] = []
            for (index, key) in declared.enumerated() {
                pipeline.startMonitoring(
                    BeaconRegion(identifier: "phone\(index)", constraint: .privateDevice(fingerprint: key.fingerprint)), key: index,
                    at: .epoch, into: &sink)
            }
            for (index, event) in events.enumerated() {
                let time = Timestamp(microsecondsSinceEpoch: Int64(index) * 60_000_000 / Int64(reports))
                pipeline.ingest(hciEvent: event.span, at: time, into: &sink)
                sink.removeAll(keepingCapacity: true)
            }
            aesBlocks = pipeline.privateDevices.aesBlocks
            beacons = pipeline.counters.beacons
        }
        print(
            "IRK resolution: \(keys) keys, \(addresses) addresses/min, \(rate) adverts/s (\(reports) reports = 1 minute), "
                + "whole pipeline:")
        print(
            String(
                format: "  median %.3f s per simulated minute = %.2f%% of one core; %.0f ns/report; %d AES blocks; %d sightings",
                times.median, times.median / 60 * 100, times.median / Double(reports) * 1e9, aesBlocks, beacons))
    }

    /// An HCI LE Advertising Report event (no H4 byte) with one report from a random address.
    static func report(_ data: [UInt8], address: UInt64, rssi: Int8) -> [UInt8] {
        var bytes: [UInt8] = [0x3E, UInt8(12 + data.count), 0x02, 0x01, 0x03, 0x01]
        for shift in stride(from: 0, to: 48, by: 8) { bytes.append(UInt8(truncatingIfNeeded: address >> UInt64(shift))) }
        return bytes + [UInt8(data.count)] + data + [UInt8(bitPattern: rssi)]
    }
}
