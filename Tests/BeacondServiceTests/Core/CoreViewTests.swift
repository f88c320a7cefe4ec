import BeaconKit
@testable import BeacondService
@testable import BeacondCore
import Testing

/// The view is all the bus reads (issue 40, item 4): its answers must be the core's, read as the bus shows them.
@Suite("daemon core: the view the bus reads")
struct CoreViewTests {
    typealias H = CoreHarness

    @Test("a region's page entry carries its client and its state now; the counts follow the clients")
    func regionsAndCounts() throws {
        let h = try H()
        let client = try h.alwaysClientMonitoringLobby()
        h.scannerStarted()
        var view = CoreView(h.core)
        #expect(view.clientCount == 1 && view.connectedClientCount == 1 && view.regionCount == 1)
        #expect(view.regionCount(of: H.door) == 1 && view.connectedClientCount(of: H.door) == 1)
        #expect(view.regions(offset: 0, limit: 10).map(\.state?.state) != [.inside], "not seen yet")
        h.see()
        view = CoreView(h.core)
        let page = view.regions(offset: 0, limit: 10)
        #expect(page.map(\.session.number) == [client])
        #expect(page.map(\.region.identifier) == ["lobby"])
        #expect(page.map(\.state?.state) == [.inside], "the state the engine has now, not a stale copy")
        #expect(view.regions(offset: 1, limit: 10).isEmpty)
        #expect(view.effectiveStatus(H.door) == .authorizedAlways)
        #expect(view.client(client)?.appID == H.door)
        #expect(view.client(client + 1) == nil)
    }

    @Test("a view is the core when it was taken: a later change is in the next view, not in this one")
    func viewIsASnapshot() throws {
        let h = try H()
        let before = CoreView(h.core)
        _ = try h.alwaysClientMonitoringLobby()
        #expect(before.clientCount == 0)
        #expect(CoreView(h.core).clientCount == 1)
    }
}
