import CLibFuzzer
import Foundation

/// Stops the process when an invariant does not hold. libFuzzer sees the trap as a crash and keeps
/// the input, which is the only way a harness can report a wrong answer (not just a trap) to it.
/// Harness code only: the decoders under test never trap on their input.
public func require(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
    file: StaticString = #fileID, line: UInt = #line
) {
    guard !condition() else { return }
    failCheck(message(), file: file, line: line)
}

/// Reports a broken invariant and aborts, so libFuzzer keeps the input.
public func failCheck(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    FileHandle.standardError.write(Data("invariant broken (\(file):\(line)): \(message)\n".utf8))
    abort()
}

/// Runs `body` with the bytes libFuzzer passes to `LLVMFuzzerTestOneInput`.
@inlinable
public func withFuzzInput<Result>(
    _ start: UnsafePointer<UInt8>?, _ count: Int,
    _ body: (Span<UInt8>) -> Result
) -> Result {
    let buffer = UnsafeBufferPointer(start: count > 0 ? start : nil, count: count > 0 ? count : 0)
    return body(buffer.span)
}

extension Span<UInt8> {
    /// A copy, for messages and for APIs that take arrays.
    public var array: [UInt8] {
        var copy: [UInt8] = []
        copy.reserveCapacity(count)
        for index in indices { copy.append(self[index]) }
        return copy
    }
}

/// `12 AB …`, for invariant messages.
func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String($0, radix: 16).uppercased().leftPadded(to: 2) }.joined(separator: " ")
}

extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}

/// libFuzzer, run on `callback` with the process's arguments (`-max_total_time=…`, corpus
/// directories). SwiftPM links Linux executables with `main` aliased to `<module>_main`, so each
/// target defines that symbol and lands here; were the alias ever dropped, libFuzzer's own
/// `main` would run the same driver on the same callback.
public func runLibFuzzer(
    _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, callback)
}
