import BeaconKit
import TestKit
import Testing

/// Mutated corpus vectors through every decode entry point: nothing may trap (a trap ends the
/// test process), and what is delivered must stay consistent with the bytes.
@Suite("Decoder robustness")
struct DecoderRobustnessTests {
    /// Enough to hit every length check many times over (about a second in a debug build).
    static let mutations = 300_000

    /// Every corpus vector, plus built events the corpus lacks (several reports, extended data status).
    static func seeds() throws -> [[UInt8]] {
        var seeds: [[UInt8]] = []
        for file in DecodingVectorCorpus.fileNames {
            seeds += try DecodingVectorCorpus.lines(of: file).lines.map(\.bytes)
        }
        let beacon = DecodingEventBuilder.iBeaconAdvertisingData(major: 1, minor: 2)
        seeds.append(DecodingEventBuilder.legacyEvent([.init(data: beacon), .init(data: DecodingEventBuilder.flags), .init(data: beacon)]))
        seeds.append(DecodingEventBuilder.extendedEvent([.init(data: beacon), .init(eventType: 0x0033, data: beacon)]))
        return seeds
    }

    @Test func mutatedVectorsNeverTrapAndStayConsistent() throws {
        let seeds = try Self.seeds()
        #expect(seeds.count > 300)
        var generator = SplitMix64(state: 0x6265_6163_6F6E_64) // "beacond"
        var violations: [String] = []
        var advertisingOutcomes = 0
        for iteration in 0..<Self.mutations {
            var bytes = seeds[Int(generator.next() % UInt64(seeds.count))]
            for _ in 0...(generator.next() % 4) {
                Self.mutate(&bytes, donor: seeds[Int(generator.next() % UInt64(seeds.count))], using: &generator)
            }
            if let problem = Self.decodeEverywhere(bytes, advertising: &advertisingOutcomes) {
                violations.append("iteration \(iteration): \(problem) in \(bytes)")
                if violations.count > 10 { break }
            }
        }
        #expect(violations.isEmpty, "\(violations)")
        // The mutations must not be so wild that nothing decodes any more.
        #expect(advertisingOutcomes > Self.mutations / 10)
    }

    @Test func randomBytesNeverTrap() {
        var generator = SplitMix64(state: 42)
        var advertising = 0
        for _ in 0..<20_000 {
            let count = Int(generator.next() % 80)
            var bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            // Half of them look like LE Meta advertising events, so the report loops run.
            if bytes.count > 4, generator.next() & 1 == 0 {
                bytes[0] = 0x04
                bytes[1] = 0x3E
                bytes[3] = generator.next() & 1 == 0 ? 0x02 : 0x0D
            }
            #expect(Self.decodeEverywhere(bytes, advertising: &advertising) == nil)
        }
    }

    /// One random edit aimed at what decoders trust: bytes, especially lengths and counts, and
    /// the buffer's own length.
    static func mutate(_ bytes: inout [UInt8], donor: [UInt8], using generator: inout SplitMix64) {
        func random(_ bound: Int) -> Int { Int(generator.next() % UInt64(max(bound, 1))) }
        let index = random(bytes.count)
        switch random(8) {
        case 0 where !bytes.isEmpty:
            bytes[index] = UInt8(truncatingIfNeeded: random(256))
        case 1 where !bytes.isEmpty:
            bytes[index] = [0x00, 0x01, 0x02, 0x7F, 0x80, 0xFE, 0xFF][random(7)]
        case 2 where !bytes.isEmpty:
            bytes[index] = bytes[index] &+ UInt8(truncatingIfNeeded: random(5)) &- 2
        case 3:
            bytes.insert(UInt8(truncatingIfNeeded: random(256)), at: random(bytes.count + 1))
        case 4 where !bytes.isEmpty:
            bytes.remove(at: index)
        case 5:
            bytes.removeLast(random(bytes.count + 1))
        case 6:
            bytes += (0..<random(9)).map { _ in UInt8(truncatingIfNeeded: random(256)) }
        default:
            guard !donor.isEmpty else { return }
            let start = random(donor.count)
            let chunk = donor[start..<min(donor.count, start + 1 + random(40))]
            bytes.replaceSubrange(index..<min(bytes.count, index + chunk.count), with: chunk)
        }
    }

    /// Runs `bytes` through every entry point; returns the first inconsistency, if any.
    static func decodeEverywhere(_ bytes: [UInt8], advertising: inout Int) -> String? {
        let span = bytes.span
        var problem: String?
        func check(_ outcome: DecodeOutcome, _ reports: [AdvertisingReport], offset: Int, _ entry: String) {
            let count = reports.count
            switch outcome {
            case .advertising(let decoded, let malformed):
                advertising += 1
                if decoded != count || malformed < 0 { problem = "\(entry): outcome \(outcome) but \(count) reports delivered" }
            case .notAdvertising, .malformed:
                if count != 0 { problem = "\(entry): \(outcome) but \(count) reports delivered" }
            }
            for report in reports {
                if report.dataRange.lowerBound < offset || report.dataRange.upperBound > bytes.count {
                    problem = "\(entry): dataRange \(report.dataRange) outside the buffer"
                } else if report.beacon != nil && !report.dataComplete {
                    problem = "\(entry): beacon parsed from incomplete data"
                } else if report.beacon != BeaconFrameParser.parse(advertisingData: span.extracting(report.dataRange)).beacon
                    && report.dataComplete
                {
                    problem = "\(entry): report's beacon differs from its data's"
                }
            }
        }
        let h4 = DecodingHarness.h4(bytes)
        check(h4.outcome, h4.reports, offset: 1, "h4")
        let event = DecodingHarness.event(bytes)
        check(event.outcome, event.reports, offset: 2, "event")
        let linkLayer = DecodingHarness.linkLayer(bytes)
        check(linkLayer.outcome, linkLayer.reports, offset: 8, "link layer")
        _ = IBeaconParser.parse(advertisingData: span)
        _ = IBeaconParser.parse(manufacturerData: span)
        _ = IBeaconParser.parse(appleManufacturerPayload: span)
        var end = 0
        let walk = ADStructures.forEach(in: span) { _, range in
            if range.lowerBound < end || range.upperBound > bytes.count { problem = "AD payload range \(range) out of order or bounds" }
            end = range.upperBound
        }
        if case .overrun(let at) = walk, at < 0 || at >= bytes.count { problem = "AD overrun offset \(at) outside the data" }
        return problem
    }
}
