import FuzzSupport

/// What other receivers send over MQTT: `ESPresenseReading(json:)` (the hand-written JSON reader),
/// `ESPresense.identity(fromDeviceID:)` and `ESPresense.topic(_:)`, with the checks in `ESPresenseChecks`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    withFuzzInput(data, size) { ESPresenseChecks.check(message: $0) }
    return 0
}

/// The entry point SwiftPM links as `main` (see `runLibFuzzer`).
@_cdecl("fuzz_espresense_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv, fuzzOneInput)
}
