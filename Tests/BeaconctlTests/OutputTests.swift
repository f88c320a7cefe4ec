import BeaconKit
import BeaconctlKit
import BeacondAPI
import DBus
import Testing

@Suite("beaconctl output: JSON, tables, times")
struct OutputTests {
    @Test func jsonWriterIsDeterministicAndEscapes() {
        let value = JSON.object([
            "b": .int(-3), "a": .string("quote\" back\\ nl\n tab\t bell\u{07} é"),
            "c": .array([.bool(true), .null, .double(1.5), .double(-1), .double(.nan), .uint(UInt64.max)]),
        ])
        #expect(value.text == #"{"a":"quote\" back\\ nl\n tab\t bell\u0007 é","b":-3,"c":[true,null,1.5,-1,null,18446744073709551615]}"#)
    }

    @Test func dbusValuesBecomeJSONWithISOTimestamps() {
        let micros: UInt64 = 1_714_564_800_123_456
        let dictionary: VarDict = [
            BeacondKey.major: .uint16(7), BeacondKey.rssi: .int16(-61), BeacondKey.accuracy: .double(0.75),
            BeacondRegionStatusKey.client: .objectPath("/org/beacond/client/3"),
            BeacondKey.timestamp: .uint64(micros), BeacondRegionStatusKey.lastSeen: .uint64(0),
            "Nested": .vardict(["Inner": .variant(.boolean(false))]),
            "Pair": .structure([.string("x"), .int32(1)]),
            "ByNumber": .dictionary(
                keySignature: "u", valueSignature: "s",
                [DBusDictionaryEntry(key: .uint32(5), value: .string("five"))]),
        ]
        let json = JSON(dictionary)
        guard case .object(let members) = json else { Issue.record("not an object: \(json)"); return }
        #expect(members["Major"] == .int(7))
        #expect(members["RSSI"] == .int(-61))
        #expect(members["Accuracy"] == .double(0.75))
        #expect(members["Client"] == .string("/org/beacond/client/3"))
        #expect(members["Timestamp"] == .uint(micros))
        #expect(members["TimestampISO8601"] == .string("2024-05-01T12:00:00.123456Z"))
        #expect(members["LastSeenISO8601"] == .null, "0 means never")
        #expect(members["Nested"] == .object(["Inner": .bool(false)]))
        #expect(members["Pair"] == .array([.string("x"), .int(1)]))
        #expect(members["ByNumber"] == .object(["5": .string("five")]))
    }

    @Test func tableAlignsWordsLeftAndNumbersRight() {
        let table = TextTable(
            columns: [.init("APP"), .init("N", alignRight: true), .init("NOTE")],
            rows: [["door", "7", ""], ["a", "1234", "x"]])
        #expect(table.lines() == ["APP      N  NOTE", "door     7", "a     1234  x"])
    }

    /// Seconds before `Samples.now` (nil: the API's 0, "never") and the words for it.
    static let relativeCases: [(Int64?, String)] = [
        (nil, "never"), (0, "just now"), (-5, "just now"), (12, "12 s ago"), (300, "5 min ago"),
        (3 * 3600, "3 h ago"), (3 * 86_400, "3 d ago"),
    ]

    @Test(arguments: relativeCases)
    func relativeTimes(secondsAgo: Int64?, expected: String) {
        let micros = secondsAgo.map { Samples.now.microsecondsSinceEpoch - $0 * 1_000_000 - 400_000 } ?? 0
        #expect(TimeText.relative(micros, now: Samples.now) == expected)
    }

    @Test func clockTimeHonoursTheOffset() {
        let time = Timestamp(microsecondsSinceEpoch: 1_714_564_801_250_999) // 12:00:01.250999Z
        #expect(TimeText.clock(time, utcOffset: 0) == "12:00:01.250")
        #expect(TimeText.clock(time, utcOffset: 2 * 3600) == "14:00:01.250")
        #expect(TimeText.clock(time, utcOffset: -13 * 3600) == "23:00:01.250")
        #expect(TimeText.duration(seconds: 7500) == "2 h 5 min")
    }

    @Test func statusForPeopleShowsEverySection() {
        let lines = StatusText.status(Samples.status(pending: BeacondRequestKind.always), now: Samples.now)
        let text = lines.joined(separator: "\n")
        #expect(lines.first == "beacond 0.2.0, up 2 h 5 min (since 2024-05-01T09:55:00.000000Z)")
        #expect(lines.contains("location services  on"))
        #expect(lines.contains("prompt policy      admin"))
        #expect(lines.contains("scanner            fifo:/run/beacond/fifo (scanning)"))
        #expect(lines.contains("adapters           none"))
        #expect(text.contains("clients: 1"))
        #expect(text.contains("/org/beacond/client/1  com.example.door  1000  4242  authorizedAlways"))
        #expect(text.contains("regions: 2"))
        let lobby = lines.first { $0.contains("lobby") }
        #expect(lobby?.contains("\(Samples.uuid):1") == true)
        #expect(lobby?.contains("inside") == true)
        #expect(lobby?.contains("5 min ago") == true)
        #expect(lines.first { $0.contains("garage") }?.contains("never") == true)
        #expect(text.contains("pending requests: 1"))
        #expect(text.contains("Opens the door when you arrive."))
        #expect(text.contains("configuration warnings: 1"))
        #expect(text.contains("  apps.d/old.toml:3: unknown key 'colour'"))
    }

    /// The scanner's detail, a rejected reload and a state error each get a line of their own under their fact;
    /// no line holds a line break (the printer escapes those, which once glued the detail onto the scanner line).
    @Test func statusDetailsAreLinesOfTheirOwn() {
        var status = Samples.status()
        status = Samples.with(status, BeacondStatusKey.scannerDetail, .string("hci (auto: CAP_NET_RAW present): hci0"))
        status = Samples.with(status, BeacondStatusKey.configurationError, .string("beacond.toml:3: bad"))
        status = Samples.with(status, BeacondStatusKey.stateError, .string("read-only"))
        let lines = StatusText.status(status, now: Samples.now)
        #expect(lines.allSatisfy { !$0.contains("\n") })
        let pad = String(repeating: " ", count: 19)
        let scanner = lines.firstIndex(of: "scanner            fifo:/run/beacond/fifo (scanning)")
        #expect(scanner.map { lines[$0 + 1] } == pad + "hci (auto: CAP_NET_RAW present): hci0")
        let config = lines.firstIndex { $0.hasPrefix("config  ") }
        #expect(
            config.map { lines[$0 + 1] } == pad
                + "REJECTED at the last reload (the previous configuration stays in force): beacond.toml:3: bad")
        let state = lines.firstIndex { $0.hasPrefix("state  ") }
        #expect(state.map { lines[$0 + 1] } == pad + "NOT SAVING: read-only")
    }

    /// Other receivers come from ListReceivers (GetStatus has their counts): the first ones shown, with how many more
    /// there are and where to see them; evictions from the full table are said under mqtt.
    @Test func statusShowsTheFirstReceiversAndHowManyMore() {
        var status = Samples.status()
        for (key, value) in [
            (BeacondStatusKey.mqttBroker, DBusValue.string("mqtt://192.0.2.10:1883")), (BeacondStatusKey.mqttState, .string("connected")),
            (BeacondStatusKey.mqttRoom, .string("hall")), (BeacondStatusKey.mqttReceiverCount, .uint32(1000)),
            (BeacondStatusKey.mqttReceiversOnline, .uint32(999)), (BeacondStatusKey.mqttReceiversEvicted, .uint64(200)),
        ] {
            status = Samples.with(status, key, value)
        }
        let receivers: [DBusValue] = (0..<StatusText.receiversShown).map { index in
            .vardict([
                BeacondReceiverKey.room: .string("room\(index)"), BeacondReceiverKey.online: .boolean(index != 0),
                BeacondReceiverKey.lastReading: .uint64(0), BeacondReceiverKey.readings: .uint64(UInt64(index)),
            ])
        }
        status = Samples.with(status, StatusListKey.receivers, .array(elementSignature: "a{sv}", receivers))
        let lines = StatusText.status(status, now: Samples.now)
        #expect(lines.contains("other receivers: 1000"))
        #expect(lines.contains { $0.hasPrefix("  room0 ") && $0.contains("OFFLINE") && $0.contains("never") })
        #expect(lines.contains("  … and 950 more: beaconctl status --json lists every one"))
        #expect(lines.contains { $0.contains("200 receivers forgotten to make room for new ones") })
    }

    @Test func statusJSONKeepsTheAPIKeys() throws {
        let json = JSON(Samples.status()).text
        for key in [
            "\"Version\":\"0.2.0\"", "\"LocationServicesEnabled\":true", "\"Prompt\":\"admin\"",
            "\"StartedAtISO8601\":\"2024-05-01T09:55:00.000000Z\"", "\"LastSeenISO8601\":\"2024-05-01T11:55:00.000000Z\"",
            "\"LastSeenISO8601\":null", "\"Warnings\":[\"apps.d/old.toml:3: unknown key 'colour'\"]",
        ] {
            #expect(json.contains(key), "missing \(key) in \(json)")
        }
    }

    @Test func authListNamesTheCommandThatDecides() {
        let status = Samples.status(appStatus: BeacondStatus.notDetermined, pending: BeacondRequestKind.always)
        let lines = StatusText.authorizations(
            apps: status.dictionaries(StatusListKey.apps),
            pending: status.dictionaries(StatusListKey.pendingRequests))
        #expect(lines.contains { $0.contains("com.example.door") && $0.contains("notDetermined") && $0.contains("always") })
        #expect(lines.last == "decide with: beaconctl auth grant com.example.door always   or   beaconctl auth deny com.example.door")
        #expect(StatusText.authorizations(apps: [], pending: []).first?.contains("none declared") == true)
    }

    @Test func clientsTable() {
        let table = StatusText.clients([
            Samples.client(
                path: "/org/beacond/client/2", status: BeacondStatus.authorizedWhenInUse,
                connected: false, inUse: false, regions: 0, ranging: 2)
        ])
        #expect(
            table.lines() == [
                "CLIENT                 APP                UID   PID  STATUS               IN USE  CONNECTED  REGIONS  RANGING",
                "/org/beacond/client/2  com.example.door  1000  4242  authorizedWhenInUse  no      no               0        2",
            ])
    }

    @Test func accuracyText() {
        #expect(RegionText.accuracy(-1) == "unknown")
        #expect(RegionText.accuracy(nil) == "unknown")
        #expect(RegionText.accuracy(0.5) == "0.50")
        #expect(RegionText.accuracy(12.345) == "12.35")
        #expect(RegionText.accuracy(1.0) == "1.00")
    }
}

@Suite("what an authorization change did, and untrusted text")
struct AuthorizationChangeTextTests {
    @Test func aDeniedUpgradeIsReportedAsDeclined() {
        let line = AppAuthorization.change(
            app: "org.x", before: AppAuthorization(status: "authorizedWhenInUse", pendingRequest: "always"),
            after: AppAuthorization(status: "authorizedWhenInUse", pendingRequest: ""))
        #expect(line == "org.x: declined its request for Always; it stays authorizedWhenInUse")
    }

    @Test func changesSayTheOldStatusAndTheRequestTheyAnswer() {
        #expect(
            AppAuthorization.change(
                app: "a", before: AppAuthorization(status: "notDetermined", pendingRequest: "whenInUse"),
                after: AppAuthorization(status: "authorizedWhenInUse", pendingRequest: ""))
                == "a: authorizedWhenInUse (was notDetermined), answering its request for WhenInUse")
        #expect(
            AppAuthorization.change(
                app: "a", before: AppAuthorization(status: "denied", pendingRequest: ""),
                after: AppAuthorization(status: "denied", pendingRequest: ""))
                == "a: already denied; nothing changed")
    }

    @Test func controlCharactersAreWrittenOut() {
        #expect(UntrustedText.escaped("plain text ✓") == "plain text ✓")
        #expect(UntrustedText.escaped("a\u{1B}[31mb\u{9B}2J\nc\u{7F}") == "a\\u{1B}[31mb\\u{9B}2J\\nc\\u{7F}")
        #expect(JSON.string("a\u{9B}b\u{7F}").text == "\"a\\u009bb\\u007f\"")
    }

    /// A right-to-left override makes `moc.elpmaxe` show as `example.com`: bidirectional controls are written out too.
    @Test func bidirectionalControlsAreWrittenOut() {
        let bidi: [Unicode.Scalar] = [
            "\u{202A}", "\u{202B}", "\u{202C}", "\u{202D}", "\u{202E}", "\u{2066}", "\u{2067}",
            "\u{2068}", "\u{2069}", "\u{200E}", "\u{200F}", "\u{061C}",
        ]
        for scalar in bidi {
            let code = String(scalar.value, radix: 16, uppercase: true)
            #expect(UntrustedText.escaped("a\(Character(scalar))b") == "a\\u{\(code)}b")
            let hex = String(scalar.value, radix: 16)
            #expect(
                JSON.string("a\(Character(scalar))b").text
                    == "\"a\\u" + String(repeating: "0", count: 4 - hex.count) + hex + "b\"")
        }
        #expect(UntrustedText.escaped("lobby\u{202E}moc.elpmaxe", quote: "'") == "lobby\\u{202E}moc.elpmaxe")
        // Letters of right-to-left scripts stay as they are: only the invisible controls are escaped.
        #expect(UntrustedText.escaped("غرفة שלום") == "غرفة שלום")
    }

    /// Line and paragraph separators, format characters (soft hyphen, zero-width joiner, BOM, tags, interlinear
    /// annotations), private use and Hangul fillers show as nothing or break a line: an app's identifier made of them
    /// looks like another's, or fakes a line in `regions`. Written out in text and in JSON (UTF-16 pairs past U+FFFF).
    @Test func invisibleAndFormatCharactersAreWrittenOut() {
        let invisible: [Unicode.Scalar] = [
            "\u{2028}", "\u{2029}", "\u{FEFF}", "\u{00AD}", "\u{200D}", "\u{200B}", "\u{3164}", "\u{115F}",
            "\u{1160}", "\u{FFA0}", "\u{E0001}", "\u{E0041}", "\u{E007F}", "\u{FFF9}", "\u{FFFA}", "\u{FFFB}",
            "\u{E000}", "\u{F8FF}", "\u{F0000}", "\u{10FFFD}",
        ]
        for scalar in invisible {
            let code = String(scalar.value, radix: 16, uppercase: true)
            #expect(UntrustedText.escaped("a\(Character(scalar))b") == "a\\u{\(code)}b", "U+\(code)")
            let json = JSON.string("a\(Character(scalar))b").text
            #expect(json.unicodeScalars.allSatisfy { $0.isASCII }, "U+\(code) in JSON: \(json)")
        }
        // Past U+FFFF, JSON escapes are a UTF-16 surrogate pair.
        #expect(JSON.string("\u{E0041}").text == "\"\\udb40\\udc41\"")
        // What stays: letters, marks, emoji, CJK, spaces.
        #expect(UntrustedText.escaped("café naïve 東京 ✓ 🚪 a b") == "café naïve 東京 ✓ 🚪 a b")
    }

    /// A table is laid out on the escaped text, so a cell with an escape does not push its row out of line.
    @Test func tableColumnsAreSizedByTheEscapedText() {
        let table = TextTable(
            columns: [.init("IDENTIFIER"), .init("STATE")], rows: [["door\u{1B}[2J", "inside"], ["hall", "outside"]])
        let lines = table.lines()
        #expect(lines[1] == "door\\u{1B}[2J  inside", "\(lines)")
        #expect(lines[2] == "hall           outside", "\(lines)")
        #expect(lines.map { $0.count - ($0.split(separator: " ").last?.count ?? 0) }.allSatisfy { $0 == 15 }, "\(lines)")
    }
}
