import BeaconKit
import Testing

@Suite("iBeacon parser and AD structures")
struct IBeaconParserTests {
    typealias Builder = DecodingEventBuilder

    /// Apple manufacturer data (company id first) of an iBeacon with major 1, minor 2, power -59.
    static let appleManufacturerData: [UInt8] = [0x4C, 0x00] + Builder.applePayload(major: 1, minor: 2, power: -59)

    @Test func fieldsAreBigEndianAndPowerIsSigned() {
        let payload = Builder.applePayload(major: 0x6C66, minor: 0x0102, power: -61)
        let frame = DecodingHarness.iBeacon(appleManufacturerPayload: payload)
        #expect(frame?.identity.uuid.uuidString == "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")
        #expect(frame?.identity.major == 27750)
        #expect(frame?.identity.minor == 258)
        #expect(frame?.measuredPower == -61)
    }

    @Test(arguments: [(UInt8(0x74), Int8(116)), (0x00, 0), (0x80, -128), (0x7F, 127), (0xC5, -59)])
    func measuredPowerIsTheInt8BitPattern(byte: UInt8, power: Int8) {
        var payload = Builder.applePayload(major: 1, minor: 1, power: 0)
        payload[22] = byte
        #expect(DecodingHarness.iBeacon(appleManufacturerPayload: payload)?.measuredPower == power)
    }

    @Test func zeroLengthStructureEndsTheData() {
        // Flags, then a zero length byte: what follows is padding, even if it looks like an iBeacon.
        let data = Builder.flags + [0x00] + DecodingHarness.manufacturerADStructure(Self.appleManufacturerData)
        #expect(DecodingHarness.iBeacon(advertisingData: data) == nil)
        let walk = DecodingHarness.adStructures(data)
        #expect(walk.end == .complete)
        #expect(walk.structures.map(\.0) == [0x01])
        // Zero padding after an iBeacon (Set Advertising Data's fixed 31 bytes) changes nothing.
        let padded = Builder.iBeaconAdvertisingData(major: 1, minor: 2) + [0x00]
        #expect(DecodingHarness.iBeacon(advertisingData: padded) == Builder.frame(major: 1, minor: 2))
    }

    @Test func structureOverrunningTheDataIsNotTrusted() {
        // The iBeacon structure claims one byte more than present.
        var data = Builder.iBeaconAdvertisingData(major: 1, minor: 2)
        data[3] = 0x1B
        #expect(DecodingHarness.iBeacon(advertisingData: data) == nil)
        let walk = DecodingHarness.adStructures(data)
        #expect(walk.end == .overrun(at: 3))
        #expect(walk.structures.count == 1)
        // An overrun after the iBeacon leaves the intact iBeacon structure found.
        let trailing = Builder.iBeaconAdvertisingData(major: 1, minor: 2) + [0x05, 0xFF, 0x4C]
        #expect(DecodingHarness.iBeacon(advertisingData: trailing) == Builder.frame(major: 1, minor: 2))
        #expect(DecodingHarness.adStructures(trailing).end == .overrun(at: 30))
        // A length byte with no type byte after it.
        #expect(DecodingHarness.adStructures([0x02, 0x01, 0x06, 0x01]).end == .overrun(at: 3))
    }

    @Test func extraTrailingBytesAreIgnored() {
        // Jaalee JHT: manufacturer structure of length 0x1B (26 payload bytes), one more than iBeacon's 25.
        let data = Builder.flags + DecodingHarness.manufacturerADStructure(Self.appleManufacturerData + [0x64])
        #expect(data[3] == 0x1B)
        #expect(DecodingHarness.iBeacon(advertisingData: data) == Builder.frame(major: 1, minor: 2))
        #expect(DecodingHarness.iBeacon(manufacturerData: Self.appleManufacturerData + [0x64, 0x65]) == Builder.frame(major: 1, minor: 2))
    }

    @Test func tooShortManufacturerDataIsNotAnIBeacon() {
        let short = Array(Self.appleManufacturerData.dropLast())
        #expect(DecodingHarness.iBeacon(manufacturerData: short) == nil)
        #expect(DecodingHarness.iBeacon(appleManufacturerPayload: Array(short.dropFirst(2))) == nil)
        #expect(DecodingHarness.iBeacon(advertisingData: Builder.flags + DecodingHarness.manufacturerADStructure(short)) == nil)
        #expect(DecodingHarness.iBeacon(manufacturerData: [0x4C]) == nil)
        #expect(DecodingHarness.iBeacon(manufacturerData: []) == nil)
        #expect(DecodingHarness.iBeacon(appleManufacturerPayload: []) == nil)
        #expect(DecodingHarness.iBeacon(advertisingData: []) == nil)
    }

    @Test func wrongCompanyOrTypeIsNotAnIBeacon() {
        var other = Self.appleManufacturerData
        other[0] = 0x4D
        #expect(DecodingHarness.iBeacon(manufacturerData: other) == nil)
        // Company id written big-endian.
        #expect(DecodingHarness.iBeacon(manufacturerData: [0x00, 0x4C] + Self.appleManufacturerData.dropFirst(2)) == nil)
        // Apple type 0x02 with a length other than 0x15, and another Apple type with length 0x15.
        var length = Self.appleManufacturerData
        length[3] = 0x16
        #expect(DecodingHarness.iBeacon(manufacturerData: length) == nil)
        var type = Self.appleManufacturerData
        type[2] = 0x10
        #expect(DecodingHarness.iBeacon(manufacturerData: type) == nil)
        // The right bytes under another AD type (service data 0x16) are not manufacturer data.
        var serviceData = Builder.iBeaconAdvertisingData(major: 1, minor: 2)
        serviceData[4] = 0x16
        #expect(DecodingHarness.iBeacon(advertisingData: serviceData) == nil)
    }

    @Test func iBeaconAfterAnotherAppleStructureIsFound() {
        // Apple Nearby manufacturer data first, then the iBeacon: the first iBeacon wins.
        let data =
            Builder.flags + [0x07, 0xFF, 0x4C, 0x00, 0x10, 0x02, 0x0B, 0x00]
            + DecodingHarness.manufacturerADStructure(Self.appleManufacturerData)
            + DecodingHarness.manufacturerADStructure([0x4C, 0x00] + Builder.applePayload(major: 9, minor: 9, power: -1))
        #expect(DecodingHarness.iBeacon(advertisingData: data) == Builder.frame(major: 1, minor: 2))
    }

    @Test func adStructuresWalkReportsTypesAndPayloads() {
        let data: [UInt8] = [0x02, 0x01, 0x06, 0x03, 0x03, 0xAA, 0xFE, 0x01, 0x09]
        let walk = DecodingHarness.adStructures(data)
        #expect(walk.end == .complete)
        #expect(walk.structures.map(\.0) == [0x01, 0x03, 0x09])
        #expect(walk.structures.map(\.1) == [[0x06], [0xAA, 0xFE], []])
        #expect(DecodingHarness.adStructures([]).structures.isEmpty)
        #expect(DecodingHarness.adStructures([]).end == .complete)
    }
}
