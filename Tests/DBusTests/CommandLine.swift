import Dispatch
import Foundation
import Synchronization

/// Runs a real D-Bus client program (`busctl`, `gdbus`) and returns its exit status and output.
struct CommandResult {
    var status: Int32
    var output: String
    var error: String
}

func runCommand(_ executable: String, _ arguments: [String]) throws -> CommandResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let output = Pipe()
    let error = Pipe()
    process.standardOutput = output
    process.standardError = error
    try process.run()
    // Both pipes are read to the end (stderr on another thread) so neither can fill up and stall the tool;
    // these tools do not fork, so end of file means they exited.
    let errorData = Mutex<Data>(Data())
    let errorDone = DispatchSemaphore(value: 0)
    let errorHandle = error.fileHandleForReading
    Thread.detachNewThread {
        let data = errorHandle.readDataToEndOfFile()
        errorData.withLock { $0 = data }
        errorDone.signal()
    }
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    errorDone.wait()
    process.waitUntilExit()
    return CommandResult(
        status: process.terminationStatus,
        output: String(decoding: outputData, as: UTF8.self),
        error: errorData.withLock { String(decoding: $0, as: UTF8.self) })
}
