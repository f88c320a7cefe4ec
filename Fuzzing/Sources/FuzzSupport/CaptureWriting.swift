/// Writes the records of a parsed capture back out, in btsnoop, pcap and hex lines, so the round
/// trip (write what was read, read it again) can be checked. Field layouts as the readers'
/// documentation gives them; every multi-byte field big-endian here except pcap's, written
/// little-endian so both byte orders get used.
enum CaptureWriting {
    static let btsnoopEpochOffset: Int64 = 0x00DC_DDB3_0F2F_8000

    /// btsnoop v1, datalink 1002 (H4): each event as `04` + event, flagged received event.
    static func btsnoopH4(events: [(microseconds: Int64?, event: [UInt8])]) -> [UInt8] {
        var out: [UInt8] = Array("btsnoop\0".utf8)
        bigEndian(1, 4, &out)
        bigEndian(1002, 4, &out)
        for (microseconds, event) in events {
            let length = UInt64(event.count + 1)
            bigEndian(length, 4, &out) // original
            bigEndian(length, 4, &out) // included
            bigEndian(0b11, 4, &out) // received, event
            bigEndian(0, 4, &out) // drops
            bigEndian(UInt64(bitPattern: (microseconds ?? 0) &+ btsnoopEpochOffset), 8, &out)
            out += [0x04] + event
        }
        return out
    }

    /// Little-endian microsecond pcap, LINKTYPE_BLUETOOTH_LE_LL_WITH_PHDR: RF pseudo-header
    /// (signal power marked valid when there is an RSSI, CRC not checked, LE 1M), advertising
    /// access address, the PDU, a 3-byte CRC.
    static func pcapLinkLayer(pdus: [(rssi: Int8?, pdu: [UInt8])]) -> [UInt8] {
        var out: [UInt8] = []
        littleEndian(0xA1B2_C3D4, 4, &out)
        littleEndian(2, 2, &out)
        littleEndian(4, 2, &out)
        littleEndian(0, 8, &out) // thiszone, sigfigs
        littleEndian(65535, 4, &out)
        littleEndian(256, 4, &out)
        for (index, (rssi, pdu)) in pdus.enumerated() {
            let length = UInt64(10 + 4 + pdu.count + 3)
            littleEndian(UInt64(index), 4, &out) // seconds
            littleEndian(0, 4, &out)
            littleEndian(length, 4, &out)
            littleEndian(length, 4, &out)
            out += [37, UInt8(bitPattern: rssi ?? 0), 0, 0, 0, 0, 0, 0]
            littleEndian(rssi == nil ? 0 : 0x0002, 2, &out)
            littleEndian(0x8E89_BED6, 4, &out)
            out += pdu + [0x55, 0x55, 0x55]
        }
        return out
    }

    /// One event per line, `04` first, bytes separated by spaces.
    static func hexLines(events: [[UInt8]]) -> [UInt8] {
        var text = "# written by the fuzz round trip\n"
        for event in events { text += "\(hex([0x04] + event))\tround trip\n" }
        return Array(text.utf8)
    }

    static func bigEndian(_ value: UInt64, _ size: Int, _ out: inout [UInt8]) {
        for index in (0..<size).reversed() { out.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))) }
    }

    static func littleEndian(_ value: UInt64, _ size: Int, _ out: inout [UInt8]) {
        for index in 0..<size { out.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))) }
    }
}
