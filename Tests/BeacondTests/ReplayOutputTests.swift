@testable import beacond
import BeaconKit
import Foundation
import TestKit
import Testing

/// Replay's byte-level formatting against the String formatting it replaced (written out here as the reference),
/// on random observations and on the edges: no RSSI, no time, the widest numbers, times far from today.
@Suite("replay output formatting")
struct ReplayOutputTests {
    static func referenceJSON(_ observation: BeaconObservation, hasTime: Bool) -> String {
        let identity = observation.identity
        let time = hasTime ? observation.timestamp.iso8601 : nil
        let rssi = observation.rssi.map { String($0) } ?? "null"
        return "{\"time\": \(time.map { "\"\($0)\"" } ?? "null"), \"address\": \"\(observation.address)\", "
            + "\"uuid\": \"\(identity.uuid.uuidString)\", \"major\": \(identity.major), \"minor\": \(identity.minor), "
            + "\"txPower\": \(observation.frame.measuredPower), \"rssi\": \(rssi)}"
    }

    static func referenceTable(_ observation: BeaconObservation, hasTime: Bool) -> String {
        func pad(_ text: String, _ width: Int) -> String {
            text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
        }
        func padLeft(_ text: String, _ width: Int) -> String {
            text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
        }
        let identity = observation.identity
        let rssi = observation.rssi.map { String($0) } ?? "n/a"
        return pad(hasTime ? observation.timestamp.iso8601 : "-", 28) + " iBeacon  " + pad(observation.address.description, 18)
            + " " + identity.uuid.uuidString + " " + padLeft(String(identity.major), 5) + " "
            + padLeft(String(identity.minor), 6) + " " + padLeft(String(observation.frame.measuredPower), 4) + " "
            + padLeft(rssi, 5)
    }

    static func observation(_ generator: inout SplitMix64, time: Int64) -> BeaconObservation {
        let uuid = UUID(
            uuid: (
                UInt8.random(in: 0...255, using: &generator), 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, UInt8.random(in: 0...255, using: &generator)
            ))
        let identity = BeaconIdentity(
            uuid: uuid, major: UInt16.random(in: 0...UInt16.max, using: &generator),
            minor: [0, 9, 10, 34_463, 65_535].randomElement(using: &generator)!)
        let rssi: Int8? = Bool.random(using: &generator) ? nil : Int8.random(in: .min ... .max, using: &generator)
        return BeaconObservation(
            frame: BeaconFrame(identity: identity, measuredPower: Int8.random(in: .min ... .max, using: &generator)),
            rssi: rssi, address: BluetoothAddress(rawValue: UInt64.random(in: 0...UInt64.max, using: &generator)),
            addressType: 0, timestamp: Timestamp(microsecondsSinceEpoch: time))
    }

    @Test("JSON and table lines are byte for byte the String formatting's")
    func matchesTheReference() {
        var generator = SplitMix64(state: 0x0B5E_7A71)
        var output = ReplayOutput(descriptor: -1)
        var expected: [UInt8] = []
        // Times: today, across midnight, before 1970, year 1, far future (year > 9999), the extremes.
        let times: [Int64] = [
            1_764_000_000_123_456, 1_764_028_799_999_999, 1_764_028_800_000_000, -1, -86_400_000_001,
            -62_135_596_800_000_000, 253_402_300_800_000_000, .max, .min,
        ]
        for round in 0..<2_000 {
            let time = round < times.count ? times[round] : Int64.random(in: -4_000_000_000_000_000...4_000_000_000_000_000, using: &generator)
            let observation = Self.observation(&generator, time: time)
            let hasTime = round % 7 != 3
            output.observationJSON(observation, hasTime: hasTime)
            output.observationTable(observation, hasTime: hasTime)
            expected += Array((Self.referenceJSON(observation, hasTime: hasTime) + "\n").utf8)
            expected += Array((Self.referenceTable(observation, hasTime: hasTime) + "\n").utf8)
        }
        #expect(output.buffer == expected)
    }
}
