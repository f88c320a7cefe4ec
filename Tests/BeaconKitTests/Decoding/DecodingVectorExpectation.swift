import BeaconKit
import Foundation

/// Reads the free-text `expected` column of the corpus vector files into checkable values.
///
/// The files come from six projects and spell the same facts differently (`major=1`,
/// `major=0x6c66(27750)`, `major=294c(hex)=10572`, `rssi(measured power)=Int8(0xb3)=-77`,
/// `txPower="116dBm"`, `deviceIds=["…/0123/4567"]`). Every spelling found is collected and every
/// one is checked, so a line stating a value twice (derived and upstream) is checked twice.
/// Anything the parser cannot make sense of is returned as a problem, never skipped.
enum DecodingVectorExpectation {
    /// What the hex column holds.
    enum Kind: Hashable {
        /// H4 packet: `04` then an HCI event.
        case h4Event
        /// HCI event without the H4 type byte (`3e …`).
        case hciEvent
        /// beacontools' synthetic raw-socket buffer `41 3e 41 …` (see the corpus test).
        case beacontoolsSocketBuffer
        /// HCI_LE_Set_Advertising_Data parameters: significant length, then 31 bytes.
        case setAdvertisingDataParameters
        /// Advertising-channel PDU: 2-byte header, AdvA, AdvData; no access address, no CRC.
        case linkLayerPDU
        /// Manufacturer data whose company id is 0x0015 (21); the hex omits it, so `15 00` is prepended.
        case manufacturerDataOfCompany0x0015
        /// Apple manufacturer data after the company id (`02 15 …`).
        case appleManufacturerPayload
        /// Manufacturer data starting with the little-endian company id.
        case manufacturerData
        /// A run of AD structures.
        case advertisingData
    }

    /// The `kind=` prefixes as the files spell them, longest first where one prefixes another.
    private static let kindPrefixes: [(String, Kind)] = [
        ("HCI H4 event", .h4Event),
        ("HCI event without H4 byte", .hciEvent),
        ("hci_le_adv_report(beacontools raw socket buffer", .beacontoolsSocketBuffer),
        ("HCI_LE_Set_Advertising_Data command parameters", .setAdvertisingDataParameters),
        ("LL_adv_PDU", .linkLayerPDU),
        ("mfr_data with company id 21 (0x0015, not Apple)", .manufacturerDataOfCompany0x0015),
        ("apple_mfr_data", .appleManufacturerPayload),
        ("mfr_data", .manufacturerData),
        ("adv_data", .advertisingData),
    ]

    /// nil for a kind this test does not know: the caller must fail, not skip.
    static func kind(of expected: String) -> Kind? {
        if let marker = expected.range(of: "kind=") {
            let text = expected[marker.upperBound...]
            return kindPrefixes.first { text.hasPrefix($0.0) }?.1
        }
        // The ble_monitor files have no `kind=`: their header says every hex is an H4 event, and
        // `derived_hci` names the subevent.
        if expected.hasPrefix("derived_hci: LE_ADV_REPORT ") || expected.hasPrefix("derived_hci: LE_EXT_ADV_REPORT ") {
            return .h4Event
        }
        return nil
    }

    // MARK: iBeacon

    /// The iBeacon a line promises, each field with every value the line states for it.
    struct IBeacon: Equatable {
        var uuids: [UUID] = []
        var majors: [UInt16] = []
        var minors: [UInt16] = []
        var measuredPowers: [Int8] = []
    }

    /// `.none` for NEGATIVE / NONE lines, the promised frame otherwise; nil plus problems when
    /// the line says neither or both.
    static func iBeacon(in expected: String, kind: Kind) -> (IBeacon?, [String]) {
        let negative =
            expected.contains("NEGATIVE") || expected.contains("derived_ibeacon: NONE")
            || expected.contains("expect=None")
        var problems: [String] = []
        var beacon = IBeacon()
        // Where a line has a `derived_ibeacon:` section, that section is the oracle. ble_monitor's
        // `upstream_asserts` describe its own parser's output, which also reads AltBeacon frames
        // (uuid/major/minor on a line whose iBeacon is NONE) and sensors (`power=160.0` watts).
        let text =
            expected.firstRange(of: "derived_ibeacon:").map { start in
                expected[start.lowerBound...].prefix { $0 != "|" }
            }.map(String.init) ?? expected

        for match in text.matches(of: /uuid=['"]?([0-9a-fA-F-]+)/) {
            if let uuid = uuid(hex: match.1) { beacon.uuids.append(uuid) } else { problems.append("bad uuid \(match.0)") }
        }
        // reelyactive's form: deviceIds=["<uuid>/<major hex>/<minor hex>"].
        for match in text.matches(of: /deviceIds=\["([0-9a-fA-F]{32})\/([0-9a-fA-F]{4})\/([0-9a-fA-F]{4})"\]/) {
            if let uuid = uuid(hex: match.1), let major = UInt16(match.2, radix: 16), let minor = UInt16(match.3, radix: 16) {
                beacon.uuids.append(uuid)
                beacon.majors.append(major)
                beacon.minors.append(minor)
            }
        }
        for match in text.matches(of: /(major|minor)=(0x)?([0-9a-fA-F]+)(\(hex\))?(?:\((\d+)\)|=(\d+))?/) {
            let isHex = match.2 != nil || match.4 != nil
            guard let value = UInt16(match.3, radix: isHex ? 16 : 10) else {
                problems.append("bad value \(match.0)")
                continue
            }
            // `0x6c66(27750)` and `294c(hex)=10572` state the value twice; both must agree.
            if let decimal = match.5 ?? match.6, UInt16(decimal) != value {
                problems.append("\(match.0) disagrees with itself")
            }
            if match.1 == "major" { beacon.majors.append(value) } else { beacon.minors.append(value) }
        }
        for match in measuredPowerSpelledUniformly(text, kind: kind).matches(of: /MP=(?:Int8\(0x([0-9a-fA-F]{2})\)=|Int8 |")?(-?\d+)/) {
            guard let value = Int8(match.2) else { problems.append("bad measured power \(match.0)"); continue }
            if let hex = match.1, let byte = UInt8(hex, radix: 16), Int8(bitPattern: byte) != value {
                problems.append("\(match.0) disagrees with itself")
            }
            beacon.measuredPowers.append(value)
        }

        let statesFrame = !beacon.uuids.isEmpty
        switch (negative, statesFrame) {
        case (true, false):
            return (nil, problems)
        case (false, true):
            if beacon.majors.isEmpty || beacon.minors.isEmpty || beacon.measuredPowers.isEmpty {
                problems.append("iBeacon expectation lacks major, minor or measured power")
            }
            return (beacon, problems)
        case (true, true):
            return (nil, problems + ["line is both NEGATIVE and states an iBeacon"])
        case (false, false):
            return (nil, problems + ["line states neither an iBeacon nor NEGATIVE/NONE"])
        }
    }

    /// Rewrites the measured-power spellings to one key, `MP=`. Longest spellings go first so
    /// the bare `power=` (ibeacon-ble) is only what is left. PureSwift names the frame's measured
    /// power `rssi`; in its Set Advertising Data line that is the only `rssi`, so it is one too.
    private static func measuredPowerSpelledUniformly(_ expected: String, kind: Kind) -> String {
        var text = expected
        for spelling in ["rssi(measured power)=", "measured power=", "tx_power=", "txPower=", "power="] {
            text = text.replacingOccurrences(of: spelling, with: "MP=")
        }
        if kind == .setAdvertisingDataParameters {
            text = text.replacingOccurrences(of: "rssi=", with: "MP=")
        }
        return text
    }

    private static func uuid(hex: Substring) -> UUID? {
        let digits = hex.filter { $0 != "-" }
        guard digits.count == 32, let bytes = DecodingVectorCorpus.bytes(hex: digits) else { return nil }
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }

    // MARK: HCI report fields

    /// The report fields an HCI line states; each list holds every value stated for that field.
    struct HCIReport: Equatable {
        var source: AdvertisingReport.Source = .legacy
        var reportCount = 1
        /// As decoded: for extended reports the stated raw value with reserved bits 7–15 cleared.
        var eventTypes: [UInt16] = []
        var addressTypes: [UInt8] = []
        var addresses: [BluetoothAddress] = []
        var rssis: [Int8] = []
        var dataLengths: [Int] = []
    }

    /// Fields of an H4 / HCI event line (ble_monitor's `derived_hci` / `upstream_asserts`, or
    /// PureSwift's prose). Problems list what a line fails to state or states badly.
    static func hciReport(in expected: String) -> (HCIReport, [String]) {
        expected.hasPrefix("derived_hci: ") ? bleMonitorReport(expected) : pureSwiftReport(expected)
    }

    /// ble_monitor: `derived_hci: <SUBEVENT> evt_type= addr_type= addr= rssi= adlen=; | … |
    /// upstream_asserts: …; rssi=…`.
    private static func bleMonitorReport(_ expected: String) -> (HCIReport, [String]) {
        var report = HCIReport()
        var problems: [String] = []
        let sections = expected.split(separator: "|")
        let derived = sections.first ?? ""
        let upstream = sections.first { $0.hasPrefix(" upstream_asserts:") } ?? ""
        report.source = derived.hasPrefix("derived_hci: LE_EXT_ADV_REPORT") ? .extended : .legacy

        if let value = derived.firstMatch(of: /evt_type=(\d+)/).flatMap({ UInt16($0.1) }) {
            // LE_EXT_ADV_REPORT: the collector wrote the raw 16-bit event type. The decoder clears the
            // reserved bits 7–15, so the comparison is against `raw & 0x7F` (all nine are 0x12/0x13,
            // legacy-PDU reports with no reserved bit set, so masking leaves them unchanged).
            report.eventTypes.append(report.source == .extended ? value & 0x007F : value)
        }
        if let value = derived.firstMatch(of: /addr_type=(\d+)/).flatMap({ UInt8($0.1) }) { report.addressTypes.append(value) }
        if let match = derived.firstMatch(of: /\saddr=([0-9A-Fa-f:]{17})/), let address = BluetoothAddress(String(match.1)) {
            report.addresses.append(address)
        }
        if let value = derived.firstMatch(of: /adlen=(\d+)/).flatMap({ Int($0.1) }) { report.dataLengths.append(value) }
        // The collector's derived rssi for LE_EXT_ADV_REPORT is 0 in all nine lines, while the byte
        // at the RSSI offset (Core Spec Vol 4 Part E 7.7.65.13: after event type, address type,
        // address, PHYs, SID, Tx power) and ble_monitor's own assertion agree on the real value
        // (e.g. 0xB1 = -79). So for extended reports only the upstream rssi is an oracle.
        if report.source == .legacy, let value = derived.firstMatch(of: /rssi=(-?\d+)/).flatMap({ Int8($0.1) }) {
            report.rssis.append(value)
        }
        if let value = upstream.firstMatch(of: /[\s;]rssi=(-?\d+)/).flatMap({ Int8($0.1) }) { report.rssis.append(value) }
        // upstream `mac` is not an oracle for the HCI address: for some sensors ble_monitor reports
        // the MAC carried in the payload (all-hci lines 122, 218, 219 differ from the HCI address).
        if report.eventTypes.isEmpty || report.addressTypes.isEmpty || report.addresses.isEmpty
            || report.rssis.isEmpty || report.dataLengths.isEmpty
        {
            problems.append("derived_hci lacks evt_type, addr_type, addr, rssi or adlen")
        }
        return (report, problems)
    }

    /// PureSwift: prose such as `reports=1 event_type=0xA613 … addr_type=public addr=… rssi=-37 …
    /// data_len=31`, `address=… (collector: rssi=0xba=-70)`, or `ADV_IND public 58:E2:… rssi=-45`.
    private static func pureSwiftReport(_ expected: String) -> (HCIReport, [String]) {
        var report = HCIReport()
        var problems: [String] = []
        report.source = expected.contains("Extended Advertising Report") ? .extended : .legacy
        if let value = expected.firstMatch(of: /reports=(\d+)/).flatMap({ Int($0.1) }) { report.reportCount = value }
        if let value = expected.firstMatch(of: /event_type=0x([0-9a-fA-F]{1,4})/).flatMap({ UInt16($0.1, radix: 16) }) {
            // 0xA613 from a macOS capture: reserved bits set; decoded, they are cleared (0x13).
            report.eventTypes.append(value & 0x007F)
        }
        let legacyTypes: [Substring: UInt16] = ["ADV_IND": 0, "ADV_DIRECT_IND": 1, "ADV_SCAN_IND": 2, "ADV_NONCONN_IND": 3, "SCAN_RSP": 4]
        if let match = expected.firstMatch(of: /(ADV_IND|ADV_DIRECT_IND|ADV_SCAN_IND|ADV_NONCONN_IND|SCAN_RSP) (public|random)/),
            let type = legacyTypes[match.1]
        {
            report.eventTypes.append(type)
            report.addressTypes.append(match.2 == "public" ? 0 : 1)
        }
        if let match = expected.firstMatch(of: /addr_type=(public|random)/) { report.addressTypes.append(match.1 == "public" ? 0 : 1) }
        // The sender's address, keyed `addr=`/`address=` or bare; `direct_addr=` is not it.
        for match in expected.matches(of: /(?:^|\s)(?:addr=|address=)?([0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2}){5})/) {
            if let address = BluetoothAddress(String(match.1)) { report.addresses.append(address) }
        }
        for match in expected.matches(of: /(?:^|\s)rssi=(?:0x([0-9a-fA-F]{2})=)?(-?\d+)/) {
            guard let value = Int8(match.2) else { problems.append("bad rssi \(match.0)"); continue }
            if let hex = match.1, let byte = UInt8(hex, radix: 16), Int8(bitPattern: byte) != value {
                problems.append("\(match.0) disagrees with itself")
            }
            report.rssis.append(value)
        }
        if let value = expected.firstMatch(of: /data_len=(\d+)/).flatMap({ Int($0.1) }) { report.dataLengths.append(value) }
        if report.addresses.isEmpty || report.rssis.isEmpty {
            problems.append("HCI line states no address or rssi")
        }
        return (report, problems)
    }
}
