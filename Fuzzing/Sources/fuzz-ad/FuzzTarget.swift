import FuzzSupport

/// Advertising data (AD structures): `ADStructures.forEach`, `IBeaconParser.parse(advertisingData:)`,
/// `parse(manufacturerData:)` and `parse(appleManufacturerPayload:)`, with the checks in `ADChecks`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    withFuzzInput(data, size) { ADChecks.check(advertisingData: $0) }
    return 0
}

/// The entry point SwiftPM links as `main` (see `runLibFuzzer`).
@_cdecl("fuzz_ad_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runLibFuzzer(argc, argv, fuzzOneInput)
}
