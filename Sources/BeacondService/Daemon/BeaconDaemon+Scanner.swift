import BeaconKit
import BeacondAPI
import BlueZ
import DBus
import Logging
import BeacondCore

/// The scanner the core asks for (`DaemonEffect.startScanner`): made from `[scanner] source`, started, and its
/// input and status fed back to the core.
extension BeaconDaemon {
    func makeScanner() throws(ScannerError) -> any BeaconScanner {
        switch view.configuration.scanner {
        case .fifo(let path):
            let scanner = FIFOScanner(path: path)
            scanner.onMalformedLine = { [logger] line, reason in logger.warning("fifo:\(path) line \(line) ignored: \(reason)") }
            return scanner
        case .replay(let path):
            let scanner = ReplayScanner(path: path)
            scanner.finished = { [logger] count in logger.info("replay of \(path) finished (\(count) records)") }
            return scanner
        case .hci, .bluez, .auto:
            guard let server = bus?.server else { throw ScannerError("not connected to the bus") }
            let mode: BlueZScannerSource.Mode
            var choice: String?
            var adapterName: String?
            switch view.configuration.scanner {
            case .hci(let name): mode = .hci; adapterName = name
            case .bluez(let name): mode = .bluez; adapterName = name
            default:
                let raw = HCISocket.hasRawCapability
                mode = raw ? .hci : .bluez
                choice = raw ? "auto: CAP_NET_RAW present" : "auto: no CAP_NET_RAW, so bluetoothd's D-Bus reports only"
            }
            return BlueZScannerSource(mode: mode, adapterName: adapterName, server: server, loop: loop, choice: choice)
        }
    }

    /// Makes the scanner (or reuses the one there) and starts it; monitoring stays registered when that fails
    /// (regions are unknown until a scanner works; status and doctor say why). Returns what the core is told: the
    /// scanner started and the status it started in, or why it could not start.
    func startScanner() -> [DaemonInput] {
        do throws(ScannerError) {
            let scanner: any BeaconScanner
            if let existing = resources.scanner { scanner = existing } else { scanner = try makeScanner() }
            resources.scanner = scanner
            let label = scanner.label
            let initial = try scanner.start(
                loop: loop,
                deliver: { input in self.receive(.scanner(input)) },
                status: { status in
                    self.assumeIsolated { daemon in
                        guard let label = daemon.resources.scanner?.label else { return }
                        daemon.run(.scannerReported(status, label: label))
                    }
                })
            return [.scannerStarted(label: label), .scannerReported(initial, label: label)]
        } catch {
            resources.scanner = nil
            return [.scannerFailedToStart(error.message)]
        }
    }
}
