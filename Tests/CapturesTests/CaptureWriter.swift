/// Builds small capture files in every supported container, so each reader can be checked on a
/// file whose every byte the test chose.
struct TestPacket {
    var microseconds: Int64
    var data: [UInt8]
    /// btsnoop record flags; unused elsewhere.
    var flags: UInt32 = 0
}

/// Appends integers in one byte order.
struct ByteWriter {
    var bytes: [UInt8] = []
    var bigEndian: Bool

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u16(_ value: UInt16) { append(UInt64(value), size: 2) }
    mutating func u32(_ value: UInt32) { append(UInt64(value), size: 4) }
    mutating func u64(_ value: UInt64) { append(value, size: 8) }
    mutating func raw(_ data: [UInt8]) { bytes += data }
    mutating func pad() { while bytes.count % 4 != 0 { bytes.append(0) } }

    private mutating func append(_ value: UInt64, size: Int) {
        let order = bigEndian ? Array((0..<size).reversed()) : Array(0..<size)
        for index in order { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))) }
    }
}

enum CaptureWriter {
    static let btsnoopEpochOffset: Int64 = 0x00DC_DDB3_0F2F_8000

    static func btsnoop(datalink: UInt32, _ packets: [TestPacket]) -> [UInt8] {
        var out = ByteWriter(bigEndian: true)
        out.raw(Array("btsnoop\0".utf8))
        out.u32(1)
        out.u32(datalink)
        for packet in packets {
            out.u32(UInt32(packet.data.count))
            out.u32(UInt32(packet.data.count))
            out.u32(packet.flags)
            out.u32(0)
            out.u64(UInt64(packet.microseconds + btsnoopEpochOffset))
            out.raw(packet.data)
        }
        return out.bytes
    }

    static func pcap(linkType: UInt32, nanoseconds: Bool, bigEndian: Bool, _ packets: [TestPacket]) -> [UInt8] {
        var out = ByteWriter(bigEndian: bigEndian)
        out.u32(nanoseconds ? 0xA1B2_3C4D : 0xA1B2_C3D4)
        out.u16(2)
        out.u16(4)
        out.u32(0) // thiszone
        out.u32(0) // sigfigs
        out.u32(65535)
        out.u32(linkType)
        for packet in packets {
            out.u32(UInt32(packet.microseconds / 1_000_000))
            let fraction = packet.microseconds % 1_000_000
            out.u32(UInt32(nanoseconds ? fraction * 1000 : fraction))
            out.u32(UInt32(packet.data.count))
            out.u32(UInt32(packet.data.count))
            out.raw(packet.data)
        }
        return out.bytes
    }

    /// One section: header, an unknown block (to be skipped), one interface, then the packets as
    /// Enhanced Packet Blocks, except the last as a Simple Packet Block and, when asked, one as
    /// an obsolete Packet Block. `resolution` is `if_tsresol`; ticks are derived from it.
    static func pcapngSection(
        linkType: UInt16, bigEndian: Bool, resolution: UInt8?, obsoleteFirst: Bool = false,
        _ packets: [TestPacket]
    ) -> [UInt8] {
        var out = ByteWriter(bigEndian: bigEndian)
        block(&out, type: 0x0A0D_0D0A) { body in
            body.u32(0x1A2B_3C4D)
            body.u16(1)
            body.u16(0)
            body.u64(UInt64.max) // section length unknown
        }
        block(&out, type: 0x0000_0BAD) { body in body.raw([1, 2, 3, 4, 5, 6, 7, 8]) }
        block(&out, type: 1) { body in
            body.u16(linkType)
            body.u16(0)
            body.u32(0)
            body.u16(2) // if_name, to be skipped
            body.u16(3)
            body.raw(Array("hci".utf8))
            body.pad()
            if let resolution {
                body.u16(9)
                body.u16(1)
                body.u8(resolution)
                body.pad()
            }
            body.u16(0)
            body.u16(0)
        }
        for (index, packet) in packets.enumerated() {
            let ticks = self.ticks(microseconds: packet.microseconds, resolution: resolution ?? 6)
            if index == packets.count - 1, index > 0 {
                block(&out, type: 3) { body in
                    body.u32(UInt32(packet.data.count))
                    body.raw(packet.data)
                    body.pad()
                }
            } else {
                let obsolete = obsoleteFirst && index == 0
                block(&out, type: obsolete ? 2 : 6) { body in
                    if obsolete { body.u16(0); body.u16(0) } else { body.u32(0) }
                    body.u32(UInt32(ticks >> 32))
                    body.u32(UInt32(truncatingIfNeeded: ticks))
                    body.u32(UInt32(packet.data.count))
                    body.u32(UInt32(packet.data.count))
                    body.raw(packet.data)
                    body.pad()
                }
            }
        }
        return out.bytes
    }

    static func ticks(microseconds: Int64, resolution: UInt8) -> UInt64 {
        let exponent = Int(resolution & 0x7F)
        if resolution & 0x80 != 0 {
            return UInt64(microseconds) * (1 << UInt64(exponent)) / 1_000_000
        }
        var ticks = UInt64(microseconds)
        if exponent >= 6 {
            for _ in 6..<exponent { ticks *= 10 }
        } else {
            for _ in exponent..<6 { ticks /= 10 }
        }
        return ticks
    }

    private static func block(_ out: inout ByteWriter, type: UInt32, _ fill: (inout ByteWriter) -> Void) {
        var body = ByteWriter(bigEndian: out.bigEndian)
        fill(&body)
        body.pad()
        let length = UInt32(12 + body.bytes.count)
        out.u32(type)
        out.u32(length)
        out.raw(body.bytes)
        out.u32(length)
    }
}
