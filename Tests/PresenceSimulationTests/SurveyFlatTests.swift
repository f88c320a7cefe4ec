import BeaconKit
import Foundation
import PresenceSimulation
import Testing

/// The real flat's survey (Tests/Fixtures/flat-calib2021, CC BY 4.0: M. Kolakowski's BLE RSS dataset) read as a
/// trace: what the real-data rows of docs/presence.md stand on.
@Suite("the real flat's survey")
struct SurveyFlatTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/flat-calib2021").path

    @Test("six receivers in five rooms, the living room with two; 4,104 rows, the tag in a room's box for most of them")
    func reads() throws {
        let flat = try SurveyFlat.load(directory: Self.directory)
        #expect(flat.receivers.map(\.id) == [1, 2, 3, 4, 5, 6])
        #expect(flat.rooms.map(\.name) == ["bedroom", "living_room", "kitchen", "hall", "room5"])
        #expect(flat.receiverRooms == [1, 0, 3, 1, 4, 2])
        #expect(flat.rows.count == 4104)
        let placed = flat.rows.filter { flat.room(x: $0.x, y: $0.y) != nil }.count
        #expect(placed > 3900, "\(placed) of 4104 rows in a room's box")
        // Receiver 1 (living room, 5.48, 2.41) is nearest the tag at the first row (4.22, 3.64) and loudest there.
        #expect(flat.rows[0].rssi.count == 6 && flat.rows[0].rssi[0] == -54)
    }

    @Test("the breaks of 20 to 90 minutes between the drive's four sessions are shortened to a second, never scored")
    func breaksAreShortened() throws {
        let flat = try SurveyFlat.load(directory: Self.directory)
        let gaps = zip(flat.rows.dropFirst(), flat.rows).map { $0.time - $1.time }
        #expect(gaps.allSatisfy { $0 >= 0 && $0 <= 1.0 })
        // 4,104 rows a third of a second apart: about 23 minutes of drive, not the 2.7 hours the timestamps span.
        #expect(flat.rows.last!.time < 1500)
        let trace = flat.trace()
        let walking = trace.truth[0].filter(\.walking)
        #expect(walking.filter { $0.end - $0.start >= 0.6 && $0.room == nil }.count == 3, "each break is an unscored interval")
        #expect(trace.readings.allSatisfy { $0.beacon == 0 && (-110...0).contains($0.rssi) })
        #expect(zip(trace.readings.dropFirst(), trace.readings).allSatisfy { $0.time >= $1.time })
    }

    @Test("the drive's minutes fall in two interleaved folds that each cross every room; each is fitted on its own rows")
    func foldsAreDisjoint() throws {
        let flat = try SurveyFlat.load(directory: Self.directory)
        let (even, odd) = flat.folds
        #expect(Set(even).isDisjoint(with: odd) && even.count + odd.count == flat.rows.count)
        #expect(abs(even.count - odd.count) < 200, "\(even.count) and \(odd.count) rows")
        // Minute by minute: rows a minute apart in the drive's time are in different folds.
        #expect(flat.fold(of: 0) == 0 && flat.rows.indices.allSatisfy { flat.fold(of: $0) == Int(flat.rows[$0].time / 60) % 2 })
        // Unlike the halves by time (the sessions drove different rooms), each fold crosses all five rooms.
        for fold in [even, odd] {
            #expect(Set(fold.compactMap { flat.room(x: flat.rows[$0].x, y: flat.rows[$0].y) }) == Set(0..<5))
        }
        let onEven = flat.calibrations(fittedOn: even)
        let onOdd = flat.calibrations(fittedOn: odd)
        #expect(onEven.count == 6 && onEven != onOdd)
        // A trace of the whole drive scored on one fold: every reading is in it, only the fold's rows are judged.
        let trace = flat.trace { flat.fold(of: $0) == 1 }
        #expect(trace.readings.count == flat.rows.reduce(0) { $0 + $1.rssi.compactMap { $0 }.count })
        let judged = trace.truth[0].filter(\.scored).reduce(0.0) { $0 + $1.end - $1.start }
        let left = trace.truth[0].filter { !$0.scored }.reduce(0.0) { $0 + $1.end - $1.start }
        #expect(abs(judged - left) < 0.1 * (judged + left), "judged \(judged) s, left out \(left) s")
    }

    @Test("a survey directory without the files, or with a broken row, is an error that names the file")
    func brokenInput() throws {
        #expect { try SurveyFlat.load(directory: "/nonexistent") } throws: { "\($0)".contains("receivers.csv") }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("survey-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for name in ["receivers.csv", "rooms.csv"] {
            try FileManager.default.copyItem(
                atPath: (Self.directory as NSString).appendingPathComponent(name), toPath: directory.appendingPathComponent(name).path)
        }
        try ",ts,x,heading,y,rssi_1,rssi_2,rssi_3,rssi_4,rssi_5,rssi_6\n0,1e18,1.0,0,north,-50,,,,,\n".write(
            to: directory.appendingPathComponent("survey.csv"), atomically: true, encoding: .utf8)
        #expect { try SurveyFlat.load(directory: directory.path) } throws: { "\($0)" == "survey.csv:2: 'north' is not a number" }
        try ",ts,x,heading,y,rssi_1,rssi_2,rssi_3,rssi_4,rssi_5,rssi_6\n0,1e18,1.0,0,2.0,-50\n".write(
            to: directory.appendingPathComponent("survey.csv"), atomically: true, encoding: .utf8)
        #expect { try SurveyFlat.load(directory: directory.path) } throws: { "\($0)" == "survey.csv:2: 6 fields, the header has 11" }
        try "id,x,y,z\n1,5.48\n".write(to: directory.appendingPathComponent("receivers.csv"), atomically: true, encoding: .utf8)
        #expect { try SurveyFlat.load(directory: directory.path) } throws: { "\($0)" == "receivers.csv:2: 2 fields, the header has 4" }
    }
}
