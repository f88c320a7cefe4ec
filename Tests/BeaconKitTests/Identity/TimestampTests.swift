import BeaconKit
import Testing

@Suite("Timestamp")
struct TimestampTests {
    /// Expected strings computed independently (Python's `datetime`, proleptic Gregorian, UTC).
    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000000Z"),
        (1_612_150_079_789_349, "2021-02-01T03:27:59.789349Z"),
        (1_583_020_799_999_999, "2020-02-29T23:59:59.999999Z"), // leap day
        (951_868_800_000_000, "2000-03-01T00:00:00.000000Z"), // after the 400-year leap day
        (4_107_585_600_500_000, "2100-03-01T12:00:00.500000Z"), // 2100 is no leap year
        (-1, "1969-12-31T23:59:59.999999Z"), // before the epoch: fraction borrows
        (-62_135_596_800_000_000, "0001-01-01T00:00:00.000000Z"),
        (253_402_300_799_999_999, "9999-12-31T23:59:59.999999Z"),
    ])
    func iso8601(microseconds: Int64, text: String) {
        let timestamp = Timestamp(microsecondsSinceEpoch: microseconds)
        #expect(timestamp.iso8601 == text)
        #expect(timestamp.description == text)
    }

    @Test func extremesDoNotTrap() {
        // The limits of microsecond timestamps, as PostgreSQL and Chromium print them.
        #expect(Timestamp(microsecondsSinceEpoch: .max).iso8601 == "294247-01-10T04:00:54.775807Z")
        #expect(Timestamp(microsecondsSinceEpoch: .min).iso8601.hasSuffix(".224192Z"))
    }

    @Test func secondsAndDurations() {
        let start = Timestamp(secondsSinceEpoch: 1_612_150_079.789_349)
        #expect(start.microsecondsSinceEpoch == 1_612_150_079_789_349)
        #expect(start.secondsSinceEpoch == 1_612_150_079.789_349)
        let later = start + .milliseconds(1500)
        #expect(later.iso8601 == "2021-02-01T03:28:01.289349Z")
        #expect(later - start == .microseconds(1_500_000))
        #expect(later - .milliseconds(1500) == start)
        #expect(start < later)
        #expect(Duration.nanoseconds(1999).wholeMicroseconds == 1)
        #expect(Duration.milliseconds(-1).wholeMicroseconds == -1000)
    }
}
