import BeaconKit
@testable import BeacondService
@testable import BeacondCore
import Testing

/// The engine's one timer and the scanner: the timer is armed for the engine's next deadline (no polling), and
/// the scanner runs only while someone monitors.
@Suite("daemon core: engine timer and scanning")
struct DaemonCoreEngineTests {
    typealias H = CoreHarness

    /// A new region is determined outside after exit_timeout unseen: the timer is armed for that; a sighting
    /// moves the deadline later and leaves the timer (firing early only advances the engine and arms it again);
    /// the exit comes when it fires at the deadline.
    @Test func theEngineTimerIsArmedForTheNextDeadlineAndAdvancesIt() throws {
        let h = try H()
        let client = try h.alwaysClientMonitoringLobby()
        #expect(h.take().armed(.engine) == [h.at(30)])
        h.run(to: 1)
        h.see()
        var effects = h.take()
        #expect(effects.signals(to: client) == ["didDetermineState inside lobby", "didEnterRegion lobby"])
        #expect(effects.armed(.engine).isEmpty)

        h.now = h.at(30)
        h.feed(.timerFired(.engine))
        effects = h.take()
        #expect(effects.signals(to: client).isEmpty)
        #expect(effects.armed(.engine) == [h.at(31)], "exit_timeout after the sighting")

        h.now = h.at(31)
        h.feed(.timerFired(.engine))
        effects = h.take()
        #expect(effects.signals(to: client) == ["didDetermineState outside lobby", "didExitRegion lobby"])
        #expect(effects.notified.first?.event.info?.timestamp == h.at(31))
        #expect(h.core.outbox.armedTimers[.engine] == nil, "nothing is due any more")
    }

    @Test func aTimerThatFiresEarlyOnlyAdvancesTheEngineToItsTime() throws {
        let h = try H()
        let client = try h.alwaysClientMonitoringLobby()
        h.run(to: 1)
        h.see()
        h.run(to: 20)
        h.see()
        _ = h.take()
        // The timer armed for 31 fires: the beacon was seen at 20, so nothing exits, and it is armed for 50.
        h.now = h.at(31)
        h.feed(.timerFired(.engine))
        let effects = h.take()
        #expect(effects.signals(to: client).isEmpty)
        #expect(h.core.outbox.armedTimers[.engine] == h.at(50))
    }

    @Test func scanningStartsOnlyOnceSomeoneMonitorsAndStopsWhenNobodyDoes() throws {
        let h = try H()
        let client = try h.register()
        try h.grant()
        h.feed(.started)
        #expect(h.take().scannerCommands.isEmpty, "nobody monitors")

        try h.monitor(client, try H.region("lobby"))
        #expect(h.take().scannerCommands == ["start"])
        try h.monitor(client, try H.region("desk", minor: 2))
        #expect(h.take().scannerCommands.isEmpty, "already scanning")

        #expect(h.call(.stopMonitoring(client: client, identifier: "lobby")) == .success(.none))
        #expect(h.take().scannerCommands.isEmpty, "desk is still monitored")
        #expect(h.call(.stopMonitoring(client: client, identifier: "desk")) == .success(.none))
        #expect(h.take().scannerCommands == ["stop"])
    }

    /// Apps are told when the scanner cannot see (Manager1 `ScannerState`), and again when it sees; a failed
    /// scanner's retries do not make it look started in between.
    @Test func appsAreToldWhenTheScannerFailsAndWhenItScansAgain() throws {
        let h = try H()
        h.scannerAnswers = false
        let client = try h.register()
        try h.grant()
        h.feed(.started)
        _ = h.take()
        #expect(h.core.scanControl.shownState == "idle")

        try h.monitor(client, try H.region("lobby"))
        h.feed(.scannerFailedToStart("no Bluetooth adapter. Fix: plug one in"))
        var effects = h.take()
        #expect(effects.scannerStates == ["starting", "failed: no Bluetooth adapter. Fix: plug one in"])

        // Each retry starts a scanner that fails again: nothing new is said.
        for _ in 0..<3 {
            h.now = h.core.outbox.armedTimers[.scannerRetry] ?? h.now
            h.feed(.timerFired(.scannerRetry))
            h.feed(.scannerFailedToStart("no Bluetooth adapter. Fix: plug one in"))
            effects = h.take()
            #expect(effects.scannerCommands == ["start"])
            #expect(effects.scannerStates.isEmpty)
        }
        #expect(h.core.scanControl.shownState == "failed: no Bluetooth adapter. Fix: plug one in")

        h.now = h.core.outbox.armedTimers[.scannerRetry] ?? h.now
        h.feed(.timerFired(.scannerRetry))
        h.scannerStarted()
        #expect(h.take().scannerStates == ["scanning"])

        h.feed(.scannerReported(.waiting("bluetoothd is restarting"), label: "hci0"))
        #expect(h.take().scannerStates == ["waiting: bluetoothd is restarting"])
        h.feed(.scannerReported(.scanning("hci0 again"), label: "hci0"))
        #expect(h.take().scannerStates == ["scanning"])

        #expect(h.call(.stopMonitoring(client: client, identifier: "lobby")) == .success(.none))
        #expect(h.take().scannerStates == ["idle"])
    }
}
