import BeaconKit
import Fleet
import Foundation
import Testing

@Suite("reading publisher")
struct ReadingPublisherTests {
    let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    func sighting(major: UInt16 = 1, minor: UInt16 = 2, rssi: Int8? = -65, power: Int8 = -59, at seconds: Double) -> BeaconObservation {
        BeaconObservation(
            frame: BeaconFrame(identity: BeaconIdentity(uuid: uuid, major: major, minor: minor), measuredPower: power),
            rssi: rssi, address: BluetoothAddress(rawValue: 0xC1D2E3F4A5B6), addressType: 0,
            timestamp: Timestamp(microsecondsSinceEpoch: Int64(seconds * 1_000_000)))
    }

    @Test func theFirstSightingGoesOutAtOnceThenOnePerInterval() {
        var publisher = ReadingPublisher(constraints: nil, interval: .seconds(1), rssiOffset: 0)
        // A 10 Hz beacon for 3 s: readings at 0, 1.0, 2.0 (the first sighting at or after each interval).
        var published: [Double] = []
        for tick in 0..<30 {
            let time = Double(tick) / 10
            if publisher.observe(sighting(at: time)) != nil { published.append(time) }
        }
        #expect(published == [0, 1.0, 2.0])
    }

    @Test func aReadingCarriesWhatESPresensesDoes() throws {
        var publisher = ReadingPublisher(
            constraints: nil, interval: .seconds(1), rssiOffset: 6,
            ranging: RangingConfiguration(filter: .latest))
        _ = publisher.observe(sighting(rssi: -70, at: 0))
        _ = publisher.observe(sighting(rssi: -70, at: 0.5))
        let published = publisher.observe(sighting(rssi: -65, at: 1.0))
        let reading = try #require(published)
        #expect(reading.id == "iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2")
        #expect(reading.mac == "c1d2e3f4a5b6")
        #expect(reading.rssiAtOneMetre == -59)
        #expect(reading.rssi == -59) // -65 plus the 6 dB offset
        #expect(reading.receiverAdjustment == 6)
        #expect(reading.interval == 500) // three sightings over one second
        let expected = RangingConfiguration().distanceModel.accuracy(rssi: -59, measuredPower: -59)
        #expect(reading.distance == expected)
    }

    @Test func onlyTheChosenBeaconsWithAnRSSIArePublished() throws {
        let constraint = try BeaconIdentityConstraint(uuid: uuid, major: 1)
        var publisher = ReadingPublisher(constraints: [constraint], interval: .seconds(1), rssiOffset: 0)
        #expect(publisher.observe(sighting(major: 2, at: 0)) == nil)
        #expect(publisher.observe(sighting(major: 1, rssi: nil, at: 0)) == nil)
        #expect(publisher.observe(sighting(major: 1, at: 0)) != nil)
        var none = ReadingPublisher(constraints: [], interval: .seconds(1), rssiOffset: 0)
        #expect(none.observe(sighting(at: 0)) == nil)
    }

    @Test func aSightingWithNoDistanceWaitsForOneWithADistance() {
        var publisher = ReadingPublisher(constraints: nil, interval: .seconds(1), rssiOffset: 0, ranging: RangingConfiguration(filter: .latest))
        #expect(publisher.observe(sighting(power: 0, at: 0)) == nil) // measured power 0: no distance
        // An odd beacon (measured power -20 heard at -127) is 159 km off: other nodes refuse that, so it
        // is not sent (issue 21).
        #expect(publisher.observe(sighting(rssi: -127, power: -20, at: 0)) == nil)
        #expect(publisher.observe(sighting(at: 0.1)) != nil) // not held back by the interval
    }

    @Test func aFloodOfIdentitiesIsBounded() {
        var publisher = ReadingPublisher(constraints: nil, interval: .seconds(1), rssiOffset: 0, capacity: 100)
        for minor in 0..<1000 { _ = publisher.observe(sighting(minor: UInt16(minor), at: Double(minor) / 1000)) }
        #expect(publisher.trackedCount == 100)
        // The newest are kept: the last beacon is still rate limited, the first is new again.
        #expect(publisher.observe(sighting(minor: 999, at: 1.0)) == nil)
        #expect(publisher.observe(sighting(minor: 0, at: 1.0)) != nil)
    }
}
