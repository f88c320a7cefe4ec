import BeaconKit
@testable import BeacondService
import Fleet
import Testing

/// Ranging and the services switch: a WhenInUse app ranges only while its client is in use, and switching location
/// services off stops every app's monitoring and ranging, loudly.
@Suite("daemon core: ranging and the services switch")
struct DaemonCoreRangingTests {
    typealias H = CoreHarness

    static func constraint() throws -> BeaconIdentityConstraint { try BeaconIdentityConstraint(uuid: H.uuid, major: 1, minor: 1) }

    /// The ranging results a client got, as the number of beacons in each.
    static func ranged(_ effects: [DaemonEffect], to client: Int) -> [Int] {
        effects.compactMap {
            guard case .range(let address, _, let reports) = $0, address.number == client else { return nil }
            return reports.count
        }
    }

    @Test func aWhenInUseClientRangesOnlyWhileInUse() throws {
        let h = try H()
        let client = try h.register(H.table)
        try h.grant(H.table, .authorizedWhenInUse)
        #expect(h.call(.startRanging(client: client, .success(try Self.constraint()))) == .success(.none))
        h.run(to: 1)
        h.see()
        h.run(to: 3)
        var effects = h.take()
        #expect(Self.ranged(effects, to: client).contains(1), "the beacon is ranged about once a second")
        #expect(effects.properties(of: client).contains([.rangedConstraints]))

        #expect(h.call(.setInUse(client: client, false)) == .success(.none))
        effects = h.take()
        #expect(effects.properties(of: client) == [[.inUse(false)]])
        #expect(effects.logs(.info).contains { $0.contains("ranging of /org/beacond/client/\(client) paused") })
        h.keepSeeing(until: 8)
        #expect(Self.ranged(h.take(), to: client).isEmpty, "paused while not in use")

        #expect(h.call(.setInUse(client: client, true)) == .success(.none))
        h.keepSeeing(until: 11)
        #expect(Self.ranged(h.take(), to: client).contains(1), "resumed by SetInUse(true)")
    }

    @Test func rangingAConstraintTwiceIsOneAndStoppingOneNeverRangedIsRefused() throws {
        let h = try H()
        let client = try h.register(H.table)
        try h.grant(H.table, .authorizedWhenInUse)
        #expect(h.call(.startRanging(client: client, .success(try Self.constraint()))) == .success(.none))
        #expect(h.call(.startRanging(client: client, .success(try Self.constraint()))) == .success(.none))
        #expect(h.core.clients[client]?.rangedConstraints == [try Self.constraint()])
        let other = try BeaconIdentityConstraint(uuid: H.uuid, major: 2, minor: nil)
        guard case .failure(.beacond(let error)) = h.call(.stopRanging(client: client, .success(other))) else {
            Issue.record("StopRanging of a constraint never ranged succeeded")
            return
        }
        #expect(error.name == .unknownRegion && error.message.contains("it ranges: "))
        #expect(h.call(.stopRanging(client: client, .success(try Self.constraint()))) == .success(.none))
        h.keepSeeing(until: 4)
        #expect(Self.ranged(h.take(), to: client).isEmpty)
    }

    @Test func switchingLocationServicesOffFailsEveryRegionAndSaysSo() throws {
        let files = try CoreFiles()
        try switchOff(files)
        // Saved: a restart keeps it off.
        let restarted = try H(files: files)
        #expect(restarted.core.authorization.servicesSwitch == false)
        #expect(restarted.core.clients.regionCount == 0)
    }

    private func switchOff(_ files: CoreFiles) throws {
        let h = try H(files: files)
        let client = try h.alwaysClientMonitoringLobby()
        _ = h.take()
        #expect(h.call(.setLocationServicesEnabled(false)) == .success(.none))
        let effects = h.take()
        #expect(effects.has { if case .managerPropertyChanged(.locationServicesEnabled(false)) = $0 { true } else { false } })
        #expect(effects.adminEvents.contains(.locationServicesChanged(enabled: false)))
        let signals = effects.signals(to: client)
        #expect(signals.contains { $0.hasPrefix("monitoringDidFail lobby") }, "\(signals)")
        #expect(h.core.clients[client]?.regions.isEmpty == true)
        #expect(h.core.effectiveStatus(H.door) != .authorizedAlways)
        h.feed(.shuttingDown)
    }
}

/// With `[mqtt] homeassistant = true`, each beacon this receiver publishes gets Home Assistant entities, announced
/// at every connection and published by the node only (`DaemonCore+Publishing`).
@Suite("daemon core: what this receiver publishes")
struct DaemonCorePublishingTests {
    typealias H = CoreHarness
    static let settings =
        CoreHarness.settings + """

            [mqtt]
            broker = "mqtt://localhost"
            room = "hall"
            publish = ["*"]
            homeassistant = true
            """

    static func readings(_ effects: [DaemonEffect]) -> [ESPresenseReading] {
        effects.compactMap {
            guard case .publishReading(let reading, _) = $0 else { return nil }
            return reading
        }
    }

    static func retained(_ effects: [DaemonEffect]) -> [HomeAssistantPresence.Publication] {
        effects.flatMap { effect -> [HomeAssistantPresence.Publication] in
            guard case .publishRetained(let publications) = effect else { return [] }
            return publications
        }
    }

    @Test func aSightingIsPublishedAndItsBeaconAnnouncedOnceConnected() throws {
        let h = try H(files: try CoreFiles(settings: Self.settings))
        h.feed(.fleetStarted(FleetStart(room: "hall", receivers: [], problem: nil)))
        #expect(h.take().scannerCommands == ["start"], "publishing needs the scanner")
        h.run(to: 1)
        h.see()
        var effects = h.take()
        #expect(Self.readings(effects).count == 1)
        #expect(Self.retained(effects).isEmpty, "not connected: nothing for Home Assistant yet")
        h.feed(.fleetConnection(true))
        effects = h.take()
        let topics = Self.retained(effects).map(\.topic)
        let object = HomeAssistantDiscovery.objectID(H.identity())
        #expect(topics.first == "homeassistant/binary_sensor/beacond/beacond_hall_connectivity/config")
        #expect(topics.filter { $0.contains(object) && $0.hasSuffix("/config") }.count == 3, "\(topics)")
        #expect(Self.retained(effects).first { $0.topic == "beacond/hall/\(object)/presence" }?.text == "home")
        // Within publish_interval: no second reading. The room locator now places the beacon in this receiver's
        // room, so the tracker and the room sensor say so (each once).
        h.run(to: 1.2)
        h.see()
        effects = h.take()
        #expect(Self.readings(effects).isEmpty)
        #expect(Self.retained(effects).map(\.text) == ["hall", "hall"], "\(Self.retained(effects))")
        h.run(to: 1.4)
        h.see()
        #expect(Self.retained(h.take()).isEmpty, "nothing changed, nothing is said again")
        // The connection lost: nothing is published until the next one, which announces everything again.
        h.feed(.fleetConnection(false))
        h.run(to: 40)
        #expect(Self.retained(h.take()).isEmpty, "not_home is not published while not connected")
        h.feed(.fleetConnection(true))
        #expect(Self.retained(h.take()).contains { $0.topic == "beacond/hall/\(object)/presence" && $0.text == "not_home" })
    }

    @Test func unseenForTheExitTimeoutTheTrackerSaysNotHomeOnItsOwnTimer() throws {
        let h = try H(files: try CoreFiles(settings: Self.settings))
        h.feed(.fleetStarted(FleetStart(room: "hall", receivers: [], problem: nil)))
        h.feed(.fleetConnection(true))
        h.run(to: 1)
        h.see()
        let object = HomeAssistantDiscovery.objectID(H.identity())
        #expect(h.core.armedTimers[.homeAssistant] == h.at(31))
        _ = h.take()
        h.run(to: 40)
        #expect(Self.retained(h.take()).contains { $0.topic == "beacond/hall/\(object)/presence" && $0.text == "not_home" })
        #expect(h.core.armedTimers[.homeAssistant] == nil)
    }

    @Test func whenTheScannerSeesAgainTheTrackersGetTheirExitTimer() throws {
        let h = try H(files: try CoreFiles(settings: Self.settings))
        h.feed(.fleetStarted(FleetStart(room: "hall", receivers: [], problem: nil)))
        h.feed(.fleetConnection(true))
        h.run(to: 1)
        h.see()
        // The adapter goes away: presence is unknown, and no exit may be timed while nothing can be seen.
        h.run(to: 5)
        h.feed(.scannerReported(.waiting("adapter off"), label: "hci0"))
        #expect(h.core.armedTimers[.homeAssistant] == nil)
        // It sees again and the beacon has gone: not_home exit_timeout later, on Home Assistant's own timer.
        h.run(to: 10)
        h.feed(.scannerReported(.scanning("hci0 through an HCI socket"), label: "hci0"))
        #expect(h.core.armedTimers[.homeAssistant] == h.at(40))
        _ = h.take()
        h.run(to: 41)
        let object = HomeAssistantDiscovery.objectID(H.identity())
        #expect(Self.retained(h.take()).contains { $0.topic == "beacond/hall/\(object)/presence" && $0.text == "not_home" })
    }

    @Test func aStoppedNodeTakesItsPublishingAndItsTimerWithIt() throws {
        let h = try H(files: try CoreFiles(settings: Self.settings))
        h.feed(.fleetStarted(FleetStart(room: "hall", receivers: [], problem: nil)))
        h.feed(.fleetConnection(true))
        h.run(to: 1)
        h.see()
        #expect(h.core.armedTimers[.homeAssistant] != nil)
        _ = h.take()
        h.feed(.fleetStopped(receivers: []))
        #expect(h.take().has { if case .cancel(.homeAssistant) = $0 { true } else { false } })
        h.run(to: 2)
        h.see()
        #expect(Self.readings(h.take()).isEmpty && h.core.homeAssistant == nil)
    }
}
