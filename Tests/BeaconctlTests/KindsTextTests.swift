import BeacondAPI
import BeaconctlKit
import DBus
import Testing

@Suite("beaconctl prints every beacon kind in its text form")
struct KindsTextTests {
    @Test func regionsAndBeacons() {
        let alt: VarDict = [
            BeacondKey.kind: .string("AltBeacon"), BeacondKey.uuid: .string("2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6"),
            BeacondKey.major: .uint16(1),
        ]
        #expect(RegionText.constraint(alt) == "altbeacon:2F234454-CF6D-4A0F-ADF2-F4911BA9FFA6:1")
        let eddystone: VarDict = [
            BeacondKey.kind: .string("Eddystone"), BeacondKey.namespace: .string("edd1ebeac04e5defa017"),
            BeacondKey.instance: .string("0123456789ab"), BeacondKey.identifier: .string("shelf"),
        ]
        #expect(RegionText.region(eddystone) == "shelf (eddystone:edd1ebeac04e5defa017:0123456789ab)")
        let device: VarDict = [BeacondKey.kind: .string("PrivateDevice"), BeacondKey.device: .string("alice-phone")]
        #expect(RegionText.constraint(device) == "device:alice-phone")
        #expect(RegionText.beacon(device) == "device:alice-phone")
        let iBeacon: VarDict = [BeacondKey.uuid: .string("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"), BeacondKey.major: .uint16(1)]
        #expect(RegionText.constraint(iBeacon) == "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1")
        var ranged = eddystone
        ranged[BeacondKey.rssi] = .int16(-60)
        ranged[BeacondKey.accuracy] = .double(1.5)
        ranged[BeacondKey.proximity] = .string("near")
        ranged[BeacondKey.batteryMillivolts] = .uint16(2950)
        ranged[BeacondKey.temperature] = .double(21.5)
        #expect(EventText.beaconSummary(ranged) == "-60 dBm 1.50 m near battery 2950 mV 21.5 °C")
    }
}
