import FuzzSupport

/// A btsnoop file after its 8-byte magic (which this target supplies, so every mutation lands in
/// the version, datalink and records), through `Capture.parse` and `CaptureChecks`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    withFuzzInput(data, size) { CaptureChecks.check(file: Array("btsnoop\0".utf8) + $0.array) }
    return 0
}

/// The entry point SwiftPM links as `main` (see `runLibFuzzer`).
@_cdecl("fuzz_btsnoop_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv, fuzzOneInput)
}
