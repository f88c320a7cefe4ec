import BeaconKit
import Foundation

/// The multi-kind frame parser against a model written from the specifications in another shape (structures found
/// by `ADStructures.forEach`, fields read by position), and every frame it finds advertised again.
public enum KindsChecks {
    public static func check(advertisingData data: Span<UInt8>) {
        let content = BeaconFrameParser.parse(advertisingData: data)
        var model = AdvertisementContent()
        ADStructures.forEach(in: data) { type, range in
            let payload = data.extracting(range).array
            switch type {
            case 0xFF where payload.count >= 25 && model.beacon == nil:
                model.beacon = manufacturerModel(payload)
            case 0x16 where payload.count >= 3 && payload[0] == 0xAA && payload[1] == 0xFE:
                let frame = Array(payload[2...])
                if model.beacon == nil, frame.count >= 18, frame[0] == 0x00 {
                    let tx = Int(Int8(bitPattern: frame[1]))
                    model.beacon = BeaconFrame(
                        identity: BeaconIdentity(kind: .eddystone, uuid: UUID(byteArray: Array(frame[2..<18])), major: 0, minor: 0),
                        measuredPower: Int8(clamping: tx - 41))
                } else if frame.count >= 14, frame[0] == 0x20, frame[1] == 0x00 {
                    let millivolts = UInt16(frame[2]) << 8 | UInt16(frame[3])
                    let raw = Int16(bitPattern: UInt16(frame[4]) << 8 | UInt16(frame[5]))
                    let words = [6, 10].map { at in frame[at..<(at + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } }
                    model.telemetry = EddystoneTelemetry(
                        batteryMillivolts: millivolts == 0 ? nil : millivolts, temperature: raw == Int16.min ? nil : Double(raw) / 256,
                        advertisingCount: words[0], uptimeTenths: words[1])
                }
            case 0x0A where payload.count == 1:
                model.txPowerLevel = Int8(bitPattern: payload[0])
            default:
                break
            }
        }
        require(content == model, "parse found \(content), the model \(model)")
        // The decoders' fast walk finds the same frame.
        let fast = BeaconFrameParser.beacon(advertisingData: data)
        require(fast == content.beacon, "beacon(advertisingData:) found \(String(describing: fast)), parse \(String(describing: content.beacon))")
        // Advertised again, alone, each frame parses to itself.
        if let beacon = content.beacon {
            let identity = beacon.identity
            let again: [UInt8]
            switch identity.kind {
            case .iBeacon: again = BeaconAdvertisingData.iBeacon(identity, measuredPower: beacon.measuredPower)
            case .altBeacon: again = BeaconAdvertisingData.altBeacon(identity, referenceRSSI: beacon.measuredPower)
            case .eddystone:
                // The power at 0 m is what was on the air; clamping at −128 loses what was below it.
                guard Int(beacon.measuredPower) + 41 <= 127, beacon.measuredPower > Int8.min else { return }
                again = BeaconAdvertisingData.eddystoneUID(identity, txPowerAtZero: Int8(Int(beacon.measuredPower) + 41))
            case .privateDevice:
                require(false, "a private device out of advertising data alone")
                return
            }
            require(BeaconFrameParser.beacon(advertisingData: again.span) == beacon, "\(beacon) advertised again parses otherwise")
        }
    }

    /// An iBeacon (Apple, 02 15) or an AltBeacon (BE AC after any company), by byte position.
    static func manufacturerModel(_ p: [UInt8]) -> BeaconFrame? {
        if p[0] == 0x4C, p[1] == 0x00, p[2] == 0x02, p[3] == 0x15 {
            return BeaconFrame(
                identity: BeaconIdentity(
                    uuid: UUID(byteArray: Array(p[4..<20])), major: UInt16(p[20]) << 8 | UInt16(p[21]),
                    minor: UInt16(p[22]) << 8 | UInt16(p[23])),
                measuredPower: Int8(bitPattern: p[24]))
        }
        guard p.count >= 26, p[2] == 0xBE, p[3] == 0xAC else { return nil }
        return BeaconFrame(
            identity: BeaconIdentity(
                kind: .altBeacon, uuid: UUID(byteArray: Array(p[4..<20])), major: UInt16(p[20]) << 8 | UInt16(p[21]),
                minor: UInt16(p[22]) << 8 | UInt16(p[23])),
            measuredPower: Int8(bitPattern: p[24]))
    }

    /// Key text: never a trap; a key that parses is 16 bytes, and written in each format it parses to itself.
    public static func check(keyText data: Span<UInt8>) {
        let text = String(decoding: data.array, as: UTF8.self)
        guard let key = try? IdentityResolvingKey(parsing: text) else { return }
        require(key.bytes.count == 16, "a key of \(key.bytes.count) bytes")
        let reversed = Array(key.bytes.reversed())
        for form in [key.espresenseID, "bluez:" + HexBytes.lowercase(reversed), Data(reversed).base64EncodedString()] {
            let again = try? IdentityResolvingKey(parsing: form)
            require(again?.bytes == key.bytes, "\(form) parses to \(String(describing: again)), not the key it was written from")
        }
        // A resolvable address the key makes resolves; the same address with a flipped hash bit does not.
        let prand: UInt32 = 0x40_0000 | UInt32(key.bytes[0]) << 8 | UInt32(key.bytes[1])
        let address = BluetoothAddress(rawValue: UInt64(prand) << 24 | UInt64(key.addressHash(prand: prand)))
        require(key.resolves(address), "the key does not resolve its own address \(address)")
        require(!key.resolves(BluetoothAddress(rawValue: address.rawValue ^ 1)), "the key resolves a wrong hash")
    }
}
