import FuzzSupport

/// An H4 packet (type byte first) from a controller: `HCIEventDecoder.decode(h4Packet:)` and, for
/// events, `decode(event:offset:)`, with the checks in `HCIChecks`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    withFuzzInput(data, size) { HCIChecks.check(h4Packet: $0) }
    return 0
}

/// The entry point SwiftPM links as `main` (see `runLibFuzzer`).
@_cdecl("fuzz_hci_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv, fuzzOneInput)
}
