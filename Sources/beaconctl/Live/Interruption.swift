#if canImport(Glibc)
    @preconcurrency import Glibc
#endif
import BeaconctlKit
import DBus
import Dispatch
import Synchronization

/// SIGINT and SIGTERM for the live commands: the first asks the receive loop to stop cleanly (unwatch,
/// stop ranging, close the client); a second one exits at once.
///
/// Installed as the live command's first step (`install()`), before it connects or calls beacond: a signal that
/// came earlier used to find the default disposition and kill the command with 143, breaking the promise of
/// exit 0. Until the receive loop exists the signal only sets the flag; the command checks it between its steps.
///
/// The loop blocks in libdbus, which retries `poll` after EINTR, so the signal alone would not wake it.
/// The handler therefore sends a small signal (`LocalWakeup`) to our own unique name over a second
/// connection; its arrival wakes the loop, which then sees the flag.
final class Interruption: Sendable {
    static let shared = Interruption()

    private let interrupted = Atomic<Bool>(false)
    /// Where to send the wake-up once the loop's connection exists.
    private let wakeTarget = Mutex<(bus: BusChoice, name: String)?>(nil)
    /// Told once, on the first signal: the async live commands' way to stop waiting (`whenInterrupted`).
    private let handlers = Mutex<[@Sendable () -> Void]>([])
    /// Kept alive for the life of the command; dispatch sources stop when released.
    private let sources = Mutex<[any DispatchSourceSignal]>([])

    var isInterrupted: Bool { interrupted.load(ordering: .acquiring) }

    /// Takes over SIGINT and SIGTERM (idempotent).
    @discardableResult
    static func install() -> Interruption {
        shared.installHandlers()
        return shared
    }

    private func installHandlers() {
        sources.withLock { sources in
            guard sources.isEmpty else { return }
            sources = [SIGINT, SIGTERM].map { number in
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { [self] in
                    if interrupted.exchange(true, ordering: .acquiringAndReleasing) {
                        // Asked twice: the loop is stuck (e.g. in a call to a hung daemon); leave now.
                        _exit(128 + number)
                    }
                    if let target = wakeTarget.withLock({ $0 }) { Self.wake(bus: target.bus, name: target.name) }
                    for handler in handlers.withLock({ $0 }) { handler() }
                }
                source.resume()
                return source
            }
        }
    }

    /// `handler` runs on the first SIGINT/SIGTERM (at once if one came already).
    func whenInterrupted(_ handler: @escaping @Sendable () -> Void) {
        installHandlers()
        handlers.withLock { $0.append(handler) }
        if isInterrupted { handler() }
    }

    /// The loop receives on `name`: signals from now on wake it; one that came already wakes it at once.
    func wakeLoop(on bus: BusChoice, name: String) {
        installHandlers()
        wakeTarget.withLock { $0 = (bus, name) }
        if isInterrupted { Self.wake(bus: bus, name: name) }
    }

    private static func wake(bus: BusChoice, name: String) {
        do {
            let connection = try DBusConnection(bus.address)
            let message = try DBusMessage.signal(
                path: LocalWakeup.path, interface: LocalWakeup.interface,
                member: LocalWakeup.member)
            try message.setDestination(name)
            try connection.send(message)
        } catch {
            // The bus is gone, so the loop's connection has failed too and nothing is left to clean up.
            _exit(ExitStatus.success)
        }
    }
}
