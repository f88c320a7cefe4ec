import BeaconKit
import BeaconctlKit
import BeacondAPI
import DBus
import Testing

@Suite("beaconctl events: one line per event, JSON Lines")
struct EventTextTests {
    static func data(_ entries: [String: DBusValue]) -> VarDict {
        var data = entries
        data[BeacondEventKey.appID] = .string(Samples.app)
        data[BeacondEventKey.client] = .objectPath("/org/beacond/client/1")
        return DBusValue.vardict(data).vardictEntries ?? [:]
    }

    @Test(
        arguments: [
            (BeacondEventKind.clientRegistered, [:], "client=/org/beacond/client/1"),
            (
                BeacondEventKind.authorizationRequested,
                [
                    BeacondEventKey.request: DBusValue.string("always"),
                    BeacondEventKey.disposition: .string("pending"),
                ],
                "request=always disposition=pending"
            ),
            (BeacondEventKind.authorizationChanged, [BeacondEventKey.status: .string("authorizedAlways")], "status=authorizedAlways"),
            (
                BeacondEventKind.didEnterRegion, [BeacondEventKey.region: .vardict(Samples.region("lobby"))],
                "region=lobby (E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1)"
            ),
            (
                BeacondEventKind.didDetermineState,
                [
                    BeacondEventKey.state: .string("outside"),
                    BeacondEventKey.region: .vardict(Samples.region("garage", major: nil)),
                ],
                "state=outside region=garage (E2C56DB5-DFFB-48D2-B060-D0F5A71096E0)"
            ),
            (
                BeacondEventKind.monitoringDidFail,
                [
                    BeacondEventKey.region: .vardict(Samples.region("lobby")),
                    BeacondEventKey.error: .string("org.beacond.Error.NotAuthorized"),
                    BeacondEventKey.message: .string("needs always"),
                ],
                "region=lobby (E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1) error=org.beacond.Error.NotAuthorized message=needs always"
            ),
            (BeacondEventKind.locationServicesChanged, [BeacondEventKey.enabled: .boolean(false)], "enabled=off"),
            (BeacondEventKind.scanningChanged, [BeacondEventKey.scanning: .boolean(true)], "scanning=on"),
            (
                BeacondEventKind.configurationReloaded, [BeacondEventKey.warnings: .array(elementSignature: "s", [.string("w1")])],
                "warnings=1 warning=w1"
            ),
            (BeacondEventKind.configurationRejected, [BeacondEventKey.error: .string("beacond.toml:4: bad")], "error=beacond.toml:4: bad"),
            ("SomethingNew", ["Level": .uint32(3), "Name": .string("x")], "Client=/org/beacond/client/1 Level=3 Name=x"),
        ] as [(String, [String: DBusValue], String)])
    func summaries(kind: String, entries: [String: DBusValue], expected: String) {
        #expect(EventText.summary(kind: kind, data: Self.data(entries)) == expected)
    }

    @Test func rangingSummaryNamesTheNearestBeacon() {
        let data = Self.data([
            BeacondEventKey.beacons: Samples.dictionaries([
                Samples.beacon(minor: 2, rssi: -58, accuracy: 0.92, proximity: "near"),
                Samples.beacon(minor: 3, rssi: 0, accuracy: -1, proximity: "unknown"),
            ]),
            BeacondEventKey.constraint: .vardict([BeacondKey.uuid: .string(Samples.uuid)]),
        ])
        #expect(
            EventText.summary(kind: BeacondEventKind.didRangeBeacons, data: data)
                == "constraint=\(Samples.uuid) beacons=2 nearest=1:2 -58 dBm 0.92 m near")
    }

    @Test func lineAndJSONLine() {
        let data = Self.data([
            BeacondEventKey.status: .string("denied"),
            BeacondEventKey.timestamp: .uint64(UInt64(Samples.now.microsecondsSinceEpoch)),
        ])
        let time = EventText.time(of: data, received: Timestamp(microsecondsSinceEpoch: 1))
        #expect(time == Samples.now, "the event's own timestamp wins")
        #expect(
            EventText.line(kind: BeacondEventKind.authorizationChanged, data: data, time: time, utcOffset: 0)
                == "12:00:00.000  AuthorizationChanged  com.example.door  status=denied")
        #expect(
            EventText.json(kind: BeacondEventKind.authorizationChanged, data: data, time: time).text
                == #"{"Data":{"AppId":"com.example.door","Client":"/org/beacond/client/1","Status":"denied","#
                + #""Timestamp":1714564800000000,"TimestampISO8601":"2024-05-01T12:00:00.000000Z"},"#
                + #""Kind":"AuthorizationChanged","Time":1714564800000000,"TimeISO8601":"2024-05-01T12:00:00.000000Z"}"#)
        let untimed = EventText.time(of: Self.data([:]), received: Samples.now)
        #expect(untimed == Samples.now)
    }

    @Test func rangingTableKeepsTheLatestCyclePerClientAndConstraint() throws {
        func cycle(_ client: String, _ beacons: [[String: DBusValue]]) throws -> RangingTable.Cycle {
            var data: [String: DBusValue] = [
                BeacondEventKey.appID: .string(Samples.app), BeacondEventKey.client: .objectPath(client),
                BeacondEventKey.constraint: .vardict([BeacondKey.uuid: .string(Samples.uuid)]),
                BeacondEventKey.beacons: Samples.dictionaries(beacons),
            ]
            data[BeacondEventKey.timestamp] = .uint64(UInt64(Samples.now.microsecondsSinceEpoch))
            return try #require(
                RangingTable.Cycle(
                    kind: BeacondEventKind.didRangeBeacons,
                    data: DBusValue.vardict(data).vardictEntries ?? [:], received: Samples.now))
        }
        #expect(RangingTable.Cycle(kind: BeacondEventKind.didEnterRegion, data: [:], received: Samples.now) == nil)
        var table = RangingTable()
        table.update(try cycle("/org/beacond/client/1", [Samples.beacon(minor: 2, rssi: -70, accuracy: 3.5, proximity: "far")]))
        table.update(try cycle("/org/beacond/client/2", []))
        table.update(try cycle("/org/beacond/client/1", [Samples.beacon(minor: 2, rssi: -58, accuracy: 0.92, proximity: "near")]))
        #expect(table.cycles.count == 2)
        #expect(
            table.lines(now: Samples.now, utcOffset: 0) == [
                "beacons at 12:00:00.000 — 2 ranging requests",
                "UUID                                  MAJOR  MINOR  RSSI  ACCURACY m  PROXIMITY  APP               CLIENT",
                "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0      1      2   -58        0.92  near       com.example.door  /org/beacond/client/1",
            ])
        #expect(
            RangingTable.plainLines(table.cycles[0], utcOffset: 0)
                == ["12:00:00.000  com.example.door  \(Samples.uuid)  1:2 -58 dBm 0.92 m near"])
        #expect(
            RangingTable.plainLines(table.cycles[1], utcOffset: 0)
                == ["12:00:00.000  com.example.door  \(Samples.uuid)  (no beacons)"])
        // With [mqtt]: the beacon's room, in a column of its own.
        var beacon = Samples.beacon(minor: 2, rssi: -58, accuracy: 0.92, proximity: "near")
        beacon[BeacondKey.room] = .string("kitchen")
        table.update(try cycle("/org/beacond/client/1", [beacon]))
        #expect(
            table.lines(now: Samples.now, utcOffset: 0).dropFirst().first
                == "UUID                                  MAJOR  MINOR  RSSI  ACCURACY m  PROXIMITY  ROOM     APP               CLIENT")
        #expect(table.lines(now: Samples.now, utcOffset: 0).last?.contains("near       kitchen  com.example.door") == true)
        // And the receiver that measured it.
        beacon[BeacondKey.receiver] = .string("hall")
        table.update(try cycle("/org/beacond/client/1", [beacon]))
        #expect(
            table.lines(now: Samples.now, utcOffset: 0).dropFirst().first
                == "UUID                                  MAJOR  MINOR  RSSI  ACCURACY m  PROXIMITY  ROOM     RECEIVER  APP               CLIENT")
        #expect(table.lines(now: Samples.now, utcOffset: 0).last?.contains("near       kitchen  hall      com.example.door") == true)
        // With a floor plan: where it is, in X, Y, FLOOR and ± after ROOM and RECEIVER, and in the plain line.
        beacon[BeacondKey.position] = .vardict([
            BeacondPositionKey.x: .double(2.5), BeacondPositionKey.y: .double(4.25), BeacondPositionKey.z: .double(1),
            BeacondPositionKey.floor: .string("ground"), BeacondPositionKey.accuracy: .double(1.8), BeacondPositionKey.fixes: .uint32(4),
        ])
        table.update(try cycle("/org/beacond/client/1", [beacon]))
        let lines = table.lines(now: Samples.now, utcOffset: 0)
        #expect(lines.dropFirst().first?.contains("PROXIMITY  ROOM     RECEIVER   X m   Y m  FLOOR    ± m  APP") == true, "\(lines)")
        #expect(lines.last?.contains("near       kitchen  hall      2.50  4.25  ground  1.80  com.example.door") == true, "\(lines)")
        #expect(
            RangingTable.plainLines(table.cycles[0], utcOffset: 0)
                == ["12:00:00.000  com.example.door  \(Samples.uuid)  1:2 -58 dBm 0.92 m near at (2.50, 4.25) on ground ±1.80 m in kitchen"])
    }

    @Test func clientSignalsAreNamedLikeEvents() {
        let region = DBusValue.vardict(Samples.region("lobby"))
        #expect(
            IncomingSignal.namedArguments(member: BeacondMember.authorizationChanged, [.string("denied")])
                == [BeacondEventKey.status: .string("denied")])
        #expect(
            IncomingSignal.namedArguments(member: BeacondMember.didDetermineState, [.string("inside"), region])
                == [BeacondEventKey.state: .string("inside"), BeacondEventKey.region: region])
        #expect(
            IncomingSignal.namedArguments(
                member: BeacondMember.didRangeBeacons,
                [Samples.dictionaries([]), .vardict([:])])?.keys.sorted()
                == [BeacondEventKey.beacons, BeacondEventKey.constraint])
        #expect(
            IncomingSignal.namedArguments(
                member: BeacondMember.rangingDidFail,
                [.vardict([:]), .string("e"), .string("m")])?.keys.sorted()
                == [BeacondEventKey.constraint, BeacondEventKey.error, BeacondEventKey.message])
        // A signature that is not the contract's is not guessed at.
        #expect(IncomingSignal.namedArguments(member: BeacondMember.didEnterRegion, [.string("lobby")]) == nil)
        #expect(IncomingSignal.namedArguments(member: "Unknown", []) == nil)
    }

    @Test("a late region event prints its own time and says it is late, with the drop count")
    func lateEvents() throws {
        let region = DBusValue.vardict(Samples.region("lobby"))
        let event = DBusValue.vardict([
            BeacondEventInfoKey.timestamp: .uint64(1_700_000_000_250_000),
            BeacondEventInfoKey.late: .boolean(true),
            BeacondEventInfoKey.droppedBefore: .uint32(4),
        ])
        let data = try #require(IncomingSignal.namedArguments(member: BeacondMember.didExitRegion, [region, event]))
        #expect(data[BeacondEventKey.region] == region)
        #expect(
            EventText.time(of: data, received: Timestamp(microsecondsSinceEpoch: 9))
                == Timestamp(microsecondsSinceEpoch: 1_700_000_000_250_000))
        let line = EventText.line(
            kind: BeacondMember.didExitRegion, data: data,
            time: EventText.time(of: data, received: Timestamp(microsecondsSinceEpoch: 9)), utcOffset: 0)
        #expect(line.hasPrefix("22:13:20.250  DidExitRegion"))
        #expect(line.contains("late=yes dropped_before=4"))
        // A live one says nothing about lateness; a state with its event dictionary is named too.
        let live = DBusValue.vardict([BeacondEventInfoKey.timestamp: .uint64(5), BeacondEventInfoKey.late: .boolean(false)])
        let state = try #require(
            IncomingSignal.namedArguments(
                member: BeacondMember.didDetermineState,
                [.string("inside"), region, live]))
        #expect(!EventText.summary(kind: BeacondMember.didDetermineState, data: state).contains("late"))
        #expect(state[BeacondEventKey.state] == .string("inside"))
    }
}
