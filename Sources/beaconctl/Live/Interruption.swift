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
/// The loop blocks in libdbus, which retries `poll` after EINTR, so the signal alone would not wake it.
/// The handler therefore sends a small signal (`LocalWakeup`) to our own unique name over a second
/// connection; its arrival wakes the loop, which then sees the flag.
final class Interruption {
    private let state: State
    /// Kept alive for the life of the command; dispatch sources stop when released.
    private let sources: [any DispatchSourceSignal]

    /// The flag, shared with the handlers.
    private final class State: Sendable {
        let interrupted = Atomic<Bool>(false)
    }

    var isInterrupted: Bool { state.interrupted.load(ordering: .acquiring) }

    /// Installs the handlers; `wake` is the unique name of the connection the loop receives on.
    init(bus: BusChoice, wake: String) {
        let state = State()
        self.state = state
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                if state.interrupted.exchange(true, ordering: .acquiringAndReleasing) {
                    // Asked twice: the loop is stuck (e.g. in a call to a hung daemon); leave now.
                    _exit(128 + number)
                }
                Self.wake(bus: bus, name: wake)
            }
            source.resume()
            return source
        }
    }

    private static func wake(bus: BusChoice, name: String) {
        do {
            let connection = try DBusConnection(bus.address)
            let message = try DBusMessage.signal(path: LocalWakeup.path, interface: LocalWakeup.interface,
                                                 member: LocalWakeup.member)
            try message.setDestination(name)
            try connection.send(message)
        } catch {
            // The bus is gone, so the loop's connection has failed too and nothing is left to clean up.
            _exit(ExitStatus.success)
        }
    }
}
