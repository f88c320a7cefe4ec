import BeaconKit

/// Reads pcapng (draft-ietf-opsawg-pcapng): blocks of type, total length, body, total length again.
/// A Section Header Block starts each section and fixes its byte order; Interface Description
/// Blocks give each interface its link type and timestamp resolution; packets come in Enhanced,
/// Simple or (obsolete) Packet Blocks. Every other block is skipped by its length.
enum PcapngReader {
    static let sectionHeaderMagic: [UInt8] = [0x0A, 0x0D, 0x0D, 0x0A]
    static let byteOrderMagic: UInt32 = 0x1A2B_3C4D
    static let interfaceDescriptionType: UInt32 = 1
    static let obsoletePacketType: UInt32 = 2
    static let simplePacketType: UInt32 = 3
    static let enhancedPacketType: UInt32 = 6
    /// Type, total length, byte-order magic, version (2+2), section length (8), trailing length.
    static let minimumSectionHeaderLength = 28
    /// Type, total length and trailing length: the smallest possible block.
    static let minimumBlockLength = 12

    /// Per-section reading state.
    struct Section {
        var order: ByteOrder
        var interfaces: [PcapngInterface] = []
    }

    /// Frames pcapng blocks as they arrive: the section, its interfaces and the packet count carry across calls.
    struct Framer {
        var section: Section
        /// Every interface link type seen, to refuse a file none of whose interfaces is Bluetooth.
        var linkTypes: [UInt32] = []
        var packetNumber = 0

        /// The first section header must be sound, or nothing after it can be framed (an error, not a malformed block).
        init(firstSection bytes: Span<UInt8>) throws(CaptureError.Reason) {
            guard bytes.count >= minimumSectionHeaderLength else {
                throw .truncatedHeader(header: "pcapng file", needed: minimumSectionHeaderLength, available: bytes.count)
            }
            section = try sectionHeader(bytes, at: 0)
        }

        /// Frames the complete blocks of `bytes` from `offset` (`base`: the file offset of `bytes`, for labels);
        /// at the end (`atEnd`) the rest too. As `FixedHeaderRecords.frame`.
        mutating func frame(
            _ bytes: Span<UInt8>, from offset: Int, base: Int, atEnd: Bool, bytesLeft: (Int) -> Int?,
            into builder: inout RecordBuilder
        ) -> (next: Int, finished: Bool) {
            var offset = offset
            while offset < bytes.count {
                let remaining = bytes.count - offset
                let label = "block at byte \(base + offset)"
                guard remaining >= minimumBlockLength else {
                    guard atEnd else { return (offset, false) }
                    builder.reject(label, "file ends inside the block header (\(remaining) bytes left)")
                    return (bytes.count, true)
                }
                if bytes.hasBytes(sectionHeaderMagic, at: offset) {
                    guard remaining >= minimumSectionHeaderLength || atEnd else { return (offset, false) }
                    do throws(CaptureError.Reason) {
                        section = try sectionHeader(bytes, at: offset)
                    } catch {
                        builder.reject(label, "\(error)")
                        return (bytes.count, true)
                    }
                }
                let type = section.order.uint32(bytes, at: offset)
                let length = Int(section.order.uint32(bytes, at: offset + 4))
                guard length >= minimumBlockLength, length % 4 == 0 else {
                    builder.reject(label, "invalid block length \(length)")
                    return (bytes.count, true)
                }
                if length > remaining, let left = atEnd ? remaining : bytesLeft(offset), length > left {
                    builder.reject(label, "block length \(length) runs past the end of the file (\(left) bytes left)")
                    return (bytes.count, true)
                }
                // The same limit whether the block came whole or in pieces.
                guard length <= CaptureFramer.largestRecord else {
                    builder.reject(
                        label,
                        "block length \(length) is more than the largest block beacond reads "
                            + "(\(CaptureFramer.largestRecord) bytes)")
                    return (bytes.count, true)
                }
                guard length <= remaining else { return (offset, false) }
                guard Int(section.order.uint32(bytes, at: offset + length - 4)) == length else {
                    builder.reject(label, "trailing block length disagrees with the leading \(length)")
                    return (bytes.count, true)
                }
                let body = (offset + 8)..<(offset + length - 4)
                offset += length
                switch type {
                case interfaceDescriptionType:
                    guard let interface = PcapngInterface(bytes, body: body, order: section.order) else {
                        builder.reject(label, "interface description block too short")
                        section.interfaces.append(.undescribed)
                        continue
                    }
                    section.interfaces.append(interface)
                    if !linkTypes.contains(interface.linkType) { linkTypes.append(interface.linkType) }
                case enhancedPacketType, obsoletePacketType, simplePacketType:
                    packetNumber += 1
                    let packet = PcapngPacket(bytes, type: type, body: body, section: section)
                    appendPacket(packet, bytes, number: packetNumber, section: section, to: &builder)
                default:
                    continue
                }
            }
            return (offset, false)
        }

        /// At the end: a file that described interfaces, none of them Bluetooth, is not a capture beacond reads.
        func finish() throws(CaptureError.Reason) {
            if !linkTypes.isEmpty, !linkTypes.contains(where: { PacketEncoding(linkType: $0) != nil }) {
                throw .unsupportedLinkType(kind: "pcapng link type", found: linkTypes, supported: PacketEncoding.supportedLinkTypes)
            }
        }
    }

    /// Reads the byte order and version of the section header at `offset`.
    static func sectionHeader(_ bytes: Span<UInt8>, at offset: Int) throws(CaptureError.Reason) -> Section {
        guard bytes.count - offset >= minimumSectionHeaderLength else {
            throw .truncatedHeader(
                header: "pcapng section", needed: minimumSectionHeaderLength,
                available: bytes.count - offset)
        }
        let order: ByteOrder
        switch ByteOrder.bigEndian.uint32(bytes, at: offset + 8) {
        case byteOrderMagic: order = .bigEndian
        case byteOrderMagic.byteSwapped: order = .littleEndian
        case let other:
            throw .corruptHeader(
                format: "pcapng",
                detail: "byte-order magic \(CaptureError.Reason.hex(bytesOf(other))), "
                    + "expected 1A 2B 3C 4D in either byte order")
        }
        let major = order.uint16(bytes, at: offset + 12)
        guard major == 1 else {
            throw .unsupportedVersion(format: "pcapng", version: "\(major).\(order.uint16(bytes, at: offset + 14))")
        }
        return Section(order: order)
    }

    static func bytesOf(_ value: UInt32) -> [UInt8] {
        [
            UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8),
            UInt8(truncatingIfNeeded: value),
        ]
    }

    static func appendPacket(
        _ packet: PcapngPacket, _ bytes: Span<UInt8>, number: Int, section: Section,
        to builder: inout RecordBuilder
    ) {
        let label = "packet \(number)"
        switch packet {
        case .malformed(let why):
            builder.reject(label, why)
        case .packet(let interfaceID, let ticks, let data, let originalLength):
            guard interfaceID < section.interfaces.count else {
                builder.reject(label, "interface \(interfaceID) was never described")
                return
            }
            let interface = section.interfaces[interfaceID]
            guard interface.readable else {
                builder.reject(label, "interface \(interfaceID)'s description block was too short to read")
                return
            }
            guard data.count <= originalLength else {
                builder.reject(label, "captured length \(data.count) exceeds original length \(originalLength)")
                return
            }
            let classified: PacketEncoding.Classified =
                interface.encoding.map {
                    $0.classify(bytes, data, flags: 0, complete: data.count == originalLength)
                } ?? .packet(.other, data)
            builder.append(number: number, timestamp: ticks.flatMap(interface.timestamp(ticks:)), classified, label: label)
        }
    }
}
