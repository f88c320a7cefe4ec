import BeaconKit
@testable import BeacondCore
@testable import BeacondService
import Logging

/// What a concern of the core tested alone needs: the harness's configuration files, the real state database file
/// (whose writes can be made to fail), and a registered client of the Door app. No core.
struct ConcernFixture {
    let files: CoreFiles
    let configuration: DaemonConfiguration
    let database: FailingStateDatabase
    let session: ClientSession

    init() throws {
        files = try CoreFiles()
        configuration = try files.configuration.load()
        database = FailingStateDatabase(
            try StateDatabaseFile(directory: files.stateDirectory, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })))
        var clients = ClientRegistry()
        session = clients.register(appID: CoreHarness.door, sender: ":1.5", caller: CoreHarness.alice.credentials, processID: 42)
    }
}

/// What the concerns write to, as the core holds them: the outbox at the harness's origin, the fixture's state
/// database behind `StatePersistence`, and background delivery.
struct ConcernState {
    var outbox = CoreOutbox(now: CoreHarness.origin)
    var persistence: StatePersistence
    var delivery = BackgroundDelivery()

    init(_ fixture: ConcernFixture) {
        persistence = StatePersistence(database: fixture.database)
    }
}
