import FuzzSupport

/// A pcapng file after the section header's block type (which this target supplies), through
/// `Capture.parse` and `CaptureChecks`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    withFuzzInput(data, size) { CaptureChecks.check(file: [0x0A, 0x0D, 0x0D, 0x0A] + $0.array) }
    return 0
}

/// The entry point SwiftPM links as `main` (see `runLibFuzzer`).
@_cdecl("fuzz_pcapng_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv, fuzzOneInput)
}
