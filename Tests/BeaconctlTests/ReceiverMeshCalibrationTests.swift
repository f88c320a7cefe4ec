import BeaconKit
import BeaconctlKit
import BeacondAPI
import DBus
import Foundation
import Testing

/// `beaconctl calibrate --receivers`: receivers that hear each other, fitted against the plan's distances.
@Suite("calibration from receivers hearing each other")
struct ReceiverMeshCalibrationTests {
    typealias Key = BeacondFloorPlanKey

    /// `GetFloorPlan`'s reply: one floor, four receivers at 2.5 m; r4 calibrated in the plan.
    static func plan(receivers: [(String, Double, Double)]) -> VarDict {
        [
            Key.floors: .array(elementSignature: "a{sv}", [.vardict([Key.id: .string("flat"), Key.tagHeight: .double(1)])]),
            Key.receivers: .array(
                elementSignature: "a{sv}",
                receivers.map { id, x, y in
                    var entry: [String: DBusValue] = [
                        Key.id: .string(id), Key.floor: .string("flat"), Key.x: .double(x), Key.y: .double(y), Key.z: .double(2.5),
                    ]
                    if id == "r4" { entry[Key.rssiOffset] = .double(1) }
                    return .vardict(entry)
                }),
        ]
    }

    static let square = plan(receivers: [("r1", 0, 0), ("r2", 6, 0), ("r3", 0, 3), ("r4", 6, 3)])

    static func hearing(_ listener: String, heard: String, rssi: Double, at time: UInt64, power: Int16 = -59) -> VarDict {
        [
            BeacondHearingKey.receiver: .string(listener), BeacondHearingKey.heard: .string(heard), BeacondHearingKey.rssi: .double(rssi),
            BeacondHearingKey.measuredPower: .int16(power), BeacondHearingKey.timestamp: .uint64(time),
        ]
    }

    @Test("each receiver's readings of the others fit its offset and the shared exponent; old readings and receivers off the plan do not count")
    func fits() throws {
        var mesh = try ReceiverMeshCalibration(plan: Self.square)
        let offsets = ["r1": 6.0, "r2": 0, "r3": -4, "r4": 2]
        let exponents = ["r1": 3.1, "r2": 3.1, "r3": 3.1, "r4": 3.1]
        for second in 1...3 {
            let time = UInt64(second) * 1_000_000
            var entries: [VarDict] = []
            for listener in mesh.receivers {
                for other in mesh.receivers where other.id != listener.id {
                    let rssi = -59 - 10 * exponents[listener.id]! * log10(listener.distance(to: other)) - offsets[listener.id]!
                    entries.append(Self.hearing(listener.id, heard: other.id, rssi: rssi, at: time))
                    // Before the start: wildly off, never counted.
                    entries.append(Self.hearing(listener.id, heard: other.id, rssi: -20, at: 500_000))
                }
            }
            entries.append(Self.hearing("attic", heard: "r1", rssi: -70, at: time))
            entries.append(Self.hearing("r1", heard: "cellar", rssi: -70, at: time))
            mesh.add(entries, since: 1_000_000)
        }
        #expect(mesh.count == 3 * 12)
        #expect(mesh.offPlan == ["attic", "cellar"])
        let r1 = try #require(mesh.receivers.first)
        #expect(mesh.samples(for: r1).map(\.heard) == ["r2", "r3", "r4"])
        #expect(mesh.samples(for: r1).allSatisfy { $0.readings == 3 })
        for (receiver, result) in mesh.fits() {
            let fit = try result.get()
            #expect(abs(fit.calibration.rssiOffset - offsets[receiver]!) < 0.01, "\(receiver): \(fit)")
            #expect(abs(fit.calibration.pathLossExponent - exponents[receiver]!) < 0.01, "\(receiver): \(fit)")
            #expect(fit.residual < 0.01)
        }
        #expect(mesh.receivers.map(\.calibratedInPlan) == [false, false, false, true])
    }

    @Test("receivers on another floor are left out: the floor between is the locator's to count")
    func floors() throws {
        var plan = Self.square
        guard case .array(let signature, var entries)? = plan[BeacondFloorPlanKey.receivers] else { return }
        entries.append(
            .vardict([
                Key.id: .string("up"), Key.floor: .string("attic"), Key.x: .double(0), Key.y: .double(0), Key.z: .double(5.5),
            ]))
        plan[BeacondFloorPlanKey.receivers] = .array(elementSignature: signature, entries)
        var mesh = try ReceiverMeshCalibration(plan: plan)
        mesh.add(
            [
                Self.hearing("r1", heard: "up", rssi: -90, at: 2), Self.hearing("r1", heard: "r2", rssi: -80, at: 2),
                Self.hearing("up", heard: "r1", rssi: -90, at: 2),
            ],
            since: 1)
        let r1 = try #require(mesh.receivers.first)
        #expect(mesh.samples(for: r1).map(\.heard) == ["r2"])
        let up = try #require(mesh.receivers.last)
        #expect(mesh.samples(for: up).isEmpty)
    }

    @Test("a receiver nobody heard gets no fit, and says why")
    func unheard() throws {
        var mesh = try ReceiverMeshCalibration(plan: Self.square)
        mesh.add([Self.hearing("r1", heard: "r2", rssi: -80, at: 2)], since: 1)
        let results = Dictionary(uniqueKeysWithValues: mesh.fits().map { ($0.receiver, $0.result) })
        // One distance: the offset with the default exponent.
        let one = try #require(try results["r1"]?.get())
        #expect(one.calibration.pathLossExponent == ReceiverCalibration.uncalibrated.pathLossExponent)
        guard case .failure(.tooFewSamples(0))? = results["r2"] else {
            Issue.record("r2 heard nothing: \(String(describing: results["r2"]))")
            return
        }
    }

    @Test("no plan, or one receiver: refused with the fix")
    func refusals() {
        func message(_ plan: VarDict) -> String {
            do {
                _ = try ReceiverMeshCalibration(plan: plan)
                return ""
            } catch { return error.message }
        }
        #expect(message([:]).contains("beacond has no floor plan"))
        #expect(message(Self.plan(receivers: [("r1", 0, 0)])).contains("receivers calibrate each other from two up"))
    }
}
