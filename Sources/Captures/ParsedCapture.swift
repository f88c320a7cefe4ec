/// What a format reader hands back to `Capture.parse`: the format it recognised, the buffer the
/// records point into (the file itself, or decoded hex), and the records.
struct ParsedCapture {
    var format: CaptureFormat
    var bytes: [UInt8]
    var builder: RecordBuilder
}
