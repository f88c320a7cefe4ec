import BeaconKit

/// What the AD-structure walker and the iBeacon parser must do with any bytes.
public enum ADChecks {
    public static func check(advertisingData data: Span<UInt8>) {
        // The walker: structures in order, inside the data, each after its length and type bytes.
        var structures: [(type: UInt8, payload: Range<Int>)] = []
        let end = ADStructures.forEach(in: data) { structures.append(($0, $1)) }
        var next = 0
        for structure in structures {
            let payload = structure.payload
            require(
                payload.lowerBound == next + 2 && payload.upperBound <= data.count,
                "structure payload \(payload) does not follow the previous one (ends \(next))")
            require(data[next] == payload.count + 1 && data[next + 1] == structure.type, "length or type byte mismatch at \(next)")
            next = payload.upperBound
        }
        switch end {
        case .complete:
            require(next == data.count || data[next] == 0, "walk ended early at \(next) without a zero length")
        case .overrun(let at):
            require(at == next && at + 1 + Int(data[at]) > data.count, "overrun reported at \(at) for a structure that fits")
        }

        // The parser finds exactly the first manufacturer structure that holds an Apple iBeacon.
        let frame = IBeaconParser.parse(advertisingData: data)
        var model: BeaconFrame?
        for structure in structures where model == nil && structure.type == 0xFF && structure.payload.count >= 25 {
            model = IBeaconParser.parse(manufacturerData: data.extracting(structure.payload))
        }
        require(frame == model, "parse found \(String(describing: frame)), the AD walk \(String(describing: model))")
        if let frame { checkRoundTrip(frame) }

        // The narrower entry points, on the raw bytes: a frame only where the layout says one is,
        // with fields read from the right bytes.
        if let found = IBeaconParser.parse(manufacturerData: data) {
            require(data.count >= 25 && data[0] == 0x4C && data[1] == 0x00, "frame outside Apple manufacturer data")
            checkFields(found, data.extracting(2...))
        }
        if let found = IBeaconParser.parse(appleManufacturerPayload: data) { checkFields(found, data) }
    }

    /// A frame read from `02 15 uuid major minor power`.
    static func checkFields(_ frame: BeaconFrame, _ payload: Span<UInt8>) {
        require(payload.count >= 23 && payload[0] == 0x02 && payload[1] == 0x15, "frame without the 02 15 iBeacon prefix")
        let expected = payload.extracting(2..<23).array
        let identity = frame.identity
        let actual =
            bytes(of: identity.uuid) + [
                UInt8(identity.major >> 8), UInt8(truncatingIfNeeded: identity.major),
                UInt8(identity.minor >> 8), UInt8(truncatingIfNeeded: identity.minor),
                UInt8(bitPattern: frame.measuredPower),
            ]
        require(actual == expected, "frame fields [\(hex(actual))] differ from the bytes [\(hex(expected))]")
    }

    /// The frame advertised again (alone, and after a Flags structure) parses to itself.
    static func checkRoundTrip(_ frame: BeaconFrame) {
        let structure = advertisingStructure(of: frame)
        for advert in [structure, [0x02, 0x01, 0x06] + structure] {
            let again = IBeaconParser.parse(advertisingData: advert.span)
            require(again == frame, "re-encoded frame parses as \(String(describing: again)): [\(hex(advert))]")
        }
    }
}
