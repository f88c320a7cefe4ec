import FuzzSupport

/// A pcap file after its magic: the first input byte picks one of the four magics (micro- or
/// nanoseconds, either byte order), the rest follows it; through `Capture.parse` and `CaptureChecks`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    withFuzzInput(data, size) { input in
        guard !input.isEmpty else { return }
        let magics: [[UInt8]] = [[0xD4, 0xC3, 0xB2, 0xA1], [0xA1, 0xB2, 0xC3, 0xD4], [0x4D, 0x3C, 0xB2, 0xA1], [0xA1, 0xB2, 0x3C, 0x4D]]
        CaptureChecks.check(file: magics[Int(input[0] & 0x3)] + input.extracting(1...).array)
    }
    return 0
}

/// The entry point SwiftPM links as `main` (see `runLibFuzzer`).
@_cdecl("fuzz_pcap_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv, fuzzOneInput)
}
