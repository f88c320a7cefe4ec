import BeaconKit
import Foundation
import PresenceSimulation
import Testing

/// The real flat's radio (`SurveyRadio`), fitted on the survey, and the yardstick it stands for: the simulator read
/// along the robot's own path scores today's rules within 5 points of the real drive (issue 41, "first fix the
/// yardstick"). docs/presence.md, "Is the simulator the real flat?", has the tables.
@Suite("the real flat's radio")
struct SurveyRadioTests {
    static let flat = Result { try SurveyFlat.load(directory: SurveyFlatTests.directory) }

    /// A radio with every part on, unlike the flat's in its figures; `room` 0 first (its biases tilt the exponent).
    static func known(room: Double) -> SurveyRadio {
        SurveyRadio(
            receiverPower: [-45, -50, -42, -48, -46, -40], pathLossExponent: 2.2, wallLoss: 5.5, headingGain: 1.5,
            roomBias: [], room: room, place: 3, fading: 3, noise: 3, placeScale: 0.6, fadingTime: 8,
            missRate: [0.05, 0.1, 0.15, 0.05, 0.1, 0.15], missRepeat: [0.3, 0.1, 0.2, 0.3, 0.1, 0.2])
    }

    @Test("the fit finds a radio it is given: the drive's path read through a known radio, then fitted")
    func fitFindsAKnownRadio() throws {
        let flat = try Self.flat.get()
        // Noise alone: least squares finds every deterministic figure.
        var plain = Self.known(room: 0)
        plain.place = 0
        plain.fading = 0
        let simple = flat.simulated(flat.rows.indices, radio: plain, seed: 3)
        let found = simple.radio(fittedOn: simple.rows.indices)
        for (power, given) in zip(found.receiverPower, plain.receiverPower) { #expect(abs(power - given) < 0.5, "\(power) for \(given)") }
        #expect(abs(found.pathLossExponent - 2.2) < 0.1, "\(found.pathLossExponent)")
        #expect(abs(found.wallLoss - 5.5) < 0.3, "\(found.wallLoss)")
        #expect(abs(found.headingGain - 1.5) < 0.3, "\(found.headingGain)")
        #expect(abs(found.noise - 3) < 0.2 && found.place < 0.5 && found.fading < 0.5, "\(found)")

        // Every part: the spot and the fading tilt the exponent and the powers at 1 m (the drive spans 1 to 8 m), so
        // what must hold is what the fit expects along the drive, and the spread split into its parts.
        let known = Self.known(room: 0)
        let made = flat.simulated(flat.rows.indices, radio: known, seed: 3)
        let fitted = made.radio(fittedOn: made.rows.indices)
        var squares = 0.0
        for row in flat.rows {
            for receiver in flat.receivers.indices {
                let (distance, walls, facing) = (
                    flat.distance(row, to: receiver), flat.walls(x: row.x, y: row.y, to: receiver), flat.facing(row, receiver)
                )
                let gap =
                    fitted.expected(receiver: receiver, distance: distance, walls: walls, facing: facing)
                    - known.expected(receiver: receiver, distance: distance, walls: walls, facing: facing)
                squares += gap * gap
            }
        }
        let expectedGap = (squares / Double(flat.rows.count * flat.receivers.count)).squareRoot()
        #expect(expectedGap < 1.5, "the fit's expected RSSI along the drive is \(expectedGap) dB from the known radio's")
        #expect(abs(fitted.noise - 3) < 0.5, "noise \(fitted.noise)")
        #expect(abs(fitted.fading - 3) < 1, "fading \(fitted.fading)")
        #expect(abs(fitted.place - 3) < 1, "place \(fitted.place)")
        #expect(fitted.room < 2.5, "room \(fitted.room): none given, what is left is the spot's and the fading's room means")
        #expect(abs(fitted.spread - known.spread) < 1, "spread \(fitted.spread) for \(known.spread)")
        #expect(fitted.placeScale > 0.3 && fitted.placeScale < 1.0, "place scale \(fitted.placeScale)")
        #expect(fitted.fadingTime > 3 && fitted.fadingTime < 20, "fading time \(fitted.fadingTime)")
        for (found, given) in zip(fitted.missRate, known.missRate) { #expect(abs(found - given) < 0.025) }
        for (found, given) in zip(fitted.missRepeat, known.missRepeat) { #expect(abs(found - given) < 0.1) }
    }

    /// With room biases the least squares cannot tell a receiver's power from its rooms' biases (six receivers, five
    /// rooms): the exponent tilts, as the real flat's does between folds (1.44 and 1.76), but the spread is found.
    @Test("with a bias per receiver and room the fit finds the room part and the whole spread")
    func fitFindsRoomBiases() throws {
        let flat = try Self.flat.get()
        let known = Self.known(room: 4)
        var rooms: [Double] = []
        var spreads: [Double] = []
        for seed in UInt64(1)...5 {
            let made = flat.simulated(flat.rows.indices, radio: known, seed: seed)
            let fitted = made.radio(fittedOn: made.rows.indices)
            rooms.append(fitted.room)
            spreads.append(fitted.spread)
        }
        let room = rooms.reduce(0, +) / 5
        let spread = spreads.reduce(0, +) / 5
        #expect(abs(room - 4) < 1.2, "room \(rooms)")
        #expect(abs(spread - known.spread) < 1, "spread \(spreads) for \(known.spread)")
    }

    @Test("RadioEnvironment.realFlat is the radio fitted on the whole drive")
    func realFlatIsTheFit() throws {
        let flat = try Self.flat.get()
        let fitted = RadioEnvironment(fitted: flat.radio(fittedOn: flat.rows.indices))
        let constant = RadioEnvironment.realFlat
        #expect(abs(fitted.pathLossExponent - constant.pathLossExponent) < 0.01)
        #expect(abs(flat.radio(fittedOn: flat.rows.indices).wallLoss - RadioEnvironment.realFlatWallLoss) < 0.05)
        for (found, stated) in [
            (fitted.shadowing, constant.shadowing), (fitted.roomShadowing, constant.roomShadowing),
            (fitted.placeShadowing, constant.placeShadowing), (fitted.fading, constant.fading),
        ] {
            #expect(abs(found - stated) < 0.05, "\(found) stated \(stated)")
        }
        #expect(abs(fitted.placeScale - constant.placeScale) < 0.01)
        #expect(abs(fitted.fadingTime - constant.fadingTime) < 0.5)
        #expect(abs(fitted.packetLoss - constant.packetLoss) < 0.005)
        #expect(abs((fitted.missRepeat ?? 0) - (constant.missRepeat ?? 0)) < 0.005)
    }

    /// The bar: over the whole drive (each minute judged by the radio and calibrations fitted on the other fold),
    /// beacond's right room simulated within 5 points of the real one, uncalibrated and calibrated; room-assistant's
    /// too, and the loudest receiver of each moment's, which has no memory to hide the noise in: a radio without its
    /// random parts says 90 % there against the real 67 % (watched: this test fails then). It holds with the flat's own
    /// biases per receiver and room (fitted on the other fold); drawn at random instead, as the simulated scenarios
    /// draw them, the simulator is 8–18 points harsher (docs/presence.md). Per fold the real drive
    /// differs from itself by 16 points (docs/presence.md): a fold is too short to hold the simulator to.
    @Test("simulated along the robot's path, today's rules score within 5 points of the real drive")
    func yardstick() throws {
        let flat = try Self.flat.get()
        let (_, comparisons) = SurveyYardstick.compare(flat, seeds: Array(1...10), monitoring: try PresenceSuite.beacondMonitoring())
        let drive = comparisons.filter { $0.fold == "drive" }
        #expect(drive.count == 4)
        for row in drive { #expect(abs(row.difference) <= 5, "\(row.algorithm): real \(row.real), simulated \(row.simulatedMean)") }
    }
}
