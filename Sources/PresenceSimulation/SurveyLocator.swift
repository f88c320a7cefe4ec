public import BeaconKit
import Foundation

extension SurveyFlat {
    /// Each receiver's calibration for the locator, fitted on the rows `fitted`: its RSSI at one metre by least
    /// squares with one exponent shared by all receivers (in dB, against the robot's true distance), as an offset from
    /// the measured power the rules assume.
    public func locatorCalibrations(fittedOn fitted: [Int], measuredPower: Double = -59) -> [ReceiverCalibration] {
        // rssi = power[r] − 10·n·log10(d): the receivers' powers and one exponent, by the normal equations.
        let count = receivers.count
        var normal = Array(repeating: Array(repeating: 0.0, count: count + 1), count: count + 1)
        var right = Array(repeating: 0.0, count: count + 1)
        for row in fitted {
            for receiver in 0..<count {
                guard let rssi = rows[row].rssi[receiver] else { continue }
                let term = -10 * log10(max(distance(rows[row], to: receiver), 0.1))
                normal[receiver][receiver] += 1
                normal[receiver][count] += term
                normal[count][receiver] += term
                normal[count][count] += term * term
                right[receiver] += rssi
                right[count] += term * rssi
            }
        }
        let solution = Self.solve(normal, right)
        let exponent = min(max(solution[count], ReceiverCalibration.exponentRange.lowerBound), ReceiverCalibration.exponentRange.upperBound)
        return (0..<count).map { receiver in
            (try? ReceiverCalibration(rssiOffset: measuredPower - solution[receiver], pathLossExponent: exponent)) ?? .uncalibrated
        }
    }

    /// The plan as the locator sees it: one floor spanning the rooms' boxes, the tag at `tagHeight`; each receiver
    /// (ids 1…n in `receivers.csv` order) at its place with `calibrations`.
    public func locatorPlan(calibrations: [ReceiverCalibration]) -> (floors: [LocatorFloor], receivers: [PlacedReceiver]) {
        let floor = LocatorFloor(
            id: "flat", minimumX: rooms.map(\.x0).min() ?? 0, minimumY: rooms.map(\.y0).min() ?? 0,
            maximumX: rooms.map(\.x1).max() ?? 0, maximumY: rooms.map(\.y1).max() ?? 0, tagHeight: Self.tagHeight)
        let placed = receivers.enumerated().map { index, receiver in
            PlacedReceiver(
                id: ReceiverID(rawValue: UInt32(index + 1)), x: receiver.x, y: receiver.y, z: receiver.z, calibration: calibrations[index])
        }
        return ([floor], placed)
    }

    /// beacond's `PositionLocator` over the whole drive, calibrated on the rows `fitted`, asked at each of the rows
    /// `judged` (after that row's readings): the positions and the accuracy it stated for each.
    public func locate(
        _ judged: [Int], fittedOn fitted: [Int], configuration: PositionConfiguration = .default, measuredPower: Double = -59
    ) -> (track: PositionTrack, accuracies: [Double]) {
        locate(judged, calibrations: locatorCalibrations(fittedOn: fitted, measuredPower: measuredPower), configuration: configuration)
    }

    /// beacond's `PositionLocator` with the receivers' `calibrations` however they were found, asked at the rows
    /// `judged`.
    public func locate(
        _ judged: [Int], calibrations: [ReceiverCalibration], configuration: PositionConfiguration = .default, measuredPower: Double = -59
    ) -> (track: PositionTrack, accuracies: [Double]) {
        let plan = locatorPlan(calibrations: calibrations)
        var locator = PositionLocator<Int>(floors: plan.floors, receivers: plan.receivers, configuration: configuration)
        let wanted = Set(judged)
        var estimates: [(x: Double, y: Double)] = []
        var accuracies: [Double] = []
        var rowsPlaced: [Int] = []
        for (index, row) in rows.enumerated() {
            let now = Timestamp(secondsSinceEpoch: 1_600_000_000 + row.time)
            for (receiver, rssi) in row.rssi.enumerated() {
                guard let rssi else { continue }
                locator.observe(0, rssi: rssi.rounded(), measuredPower: measuredPower, by: plan.receivers[receiver].id, at: now)
            }
            guard wanted.contains(index) else { continue }
            // Never unplaced on this drive: every row has a reading within 10 s.
            let position = locator.position(of: 0, at: now)
            rowsPlaced.append(index)
            estimates.append((position?.x ?? .nan, position?.y ?? .nan))
            accuracies.append(position?.accuracy ?? .infinity)
        }
        return (PositionTrack(rows: rowsPlaced, estimates: estimates), accuracies)
    }
}

extension SurveyFlat {
    /// What `beaconctl calibrate --at X,Y` would collect on this drive: in each room, `perRoom` stretches of
    /// `seconds` among the rows `rows` where the robot stayed within a metre of where it began (a user standing at a known spot
    /// with the tag), the first such stretch of the room and then the ones farthest from those already taken. The rows
    /// of every spot, in order.
    public func calibrationSpots(among rows: [Int], perRoom: Int = 2, seconds: Double = 10) -> [Int] {
        let length = Int((seconds / Self.rowInterval).rounded())
        // Candidate stretches: `length` consecutive rows of `rows`, within one session and one room, the robot within 1 m.
        var candidates: [(room: Int, rows: ArraySlice<Int>, x: Double, y: Double)] = []
        var start = 0
        while start + length <= rows.count {
            let stretch = rows[start..<(start + length)]
            let first = self.rows[stretch.first!]
            let last = self.rows[stretch.last!]
            let still = stretch.allSatisfy {
                (self.rows[$0].x - first.x) * (self.rows[$0].x - first.x) + (self.rows[$0].y - first.y) * (self.rows[$0].y - first.y) < 1
            }
            if still, last.time - first.time < seconds + 1, let room = room(x: first.x, y: first.y),
                stretch.allSatisfy({ self.room(x: self.rows[$0].x, y: self.rows[$0].y) == room })
            {
                candidates.append((room, stretch, first.x, first.y))
                start += length
            } else {
                start += 1
            }
        }
        var chosen: [(room: Int, rows: ArraySlice<Int>, x: Double, y: Double)] = []
        for room in rooms.indices {
            var inRoom = candidates.filter { $0.room == room }
            while chosen.count(where: { $0.room == room }) < perRoom, !inRoom.isEmpty {
                let taken = chosen.filter { $0.room == room }
                let pick =
                    taken.isEmpty
                    ? 0
                    : inRoom.indices.max { a, b in
                        func apart(_ index: Int) -> Double {
                            taken.map { ($0.x - inRoom[index].x) * ($0.x - inRoom[index].x) + ($0.y - inRoom[index].y) * ($0.y - inRoom[index].y) }
                                .min() ?? 0
                        }
                        return apart(a) < apart(b)
                    } ?? 0
                chosen.append(inRoom.remove(at: pick))
            }
        }
        return chosen.flatMap(\.rows).sorted()
    }
}

extension SurveyFlat {
    /// The flat as a `floorplan.toml` would draw it: one floor, each room's box, receivers `r1`…`r6` (in
    /// `receivers.csv` order) at their places with `calibrations`.
    public func floorPlan(calibrations: [ReceiverCalibration]) -> FloorPlan {
        let floor = FloorPlan.Floor(id: "flat", tagHeight: Self.tagHeight)
        let planRooms = rooms.map { room in
            FloorPlan.Room(
                id: room.name, floor: "flat",
                points: [
                    FloorPlan.Point(x: room.x0, y: room.y0), FloorPlan.Point(x: room.x1, y: room.y0),
                    FloorPlan.Point(x: room.x1, y: room.y1), FloorPlan.Point(x: room.x0, y: room.y1),
                ])
        }
        let planReceivers = receivers.enumerated().map { index, receiver in
            FloorPlan.Receiver(id: "r\(index + 1)", floor: "flat", x: receiver.x, y: receiver.y, z: receiver.z, calibration: calibrations[index])
        }
        return FloorPlan(floors: [floor], rooms: planRooms, receivers: planReceivers)
    }

    /// beacond's `PlanPlacement` over the whole drive (the daemon's path with a floor plan), calibrated on the rows
    /// `fitted`, asked at each of the rows `judged`: positions, stated accuracies and rooms (indices into `rooms`;
    /// nil: unknown).
    public func place(
        _ judged: [Int], fittedOn fitted: [Int], rooms configuration: PlanRoomConfiguration = .default, measuredPower: Double = -59
    ) -> (track: PositionTrack, accuracies: [Double], rooms: [Int?]) {
        let plan = floorPlan(calibrations: locatorCalibrations(fittedOn: fitted, measuredPower: measuredPower))
        var placement = PlanPlacement<Int>(plan: plan, rooms: configuration)
        let wanted = Set(judged)
        var rowsPlaced: [Int] = []
        var estimates: [(x: Double, y: Double)] = []
        var accuracies: [Double] = []
        var placedRooms: [Int?] = []
        for (index, row) in rows.enumerated() {
            let now = Timestamp(secondsSinceEpoch: 1_600_000_000 + row.time)
            for (receiver, rssi) in row.rssi.enumerated() {
                guard let rssi else { continue }
                placement.observe(0, rssi: rssi.rounded(), measuredPower: measuredPower, by: "r\(receiver + 1)", at: now)
            }
            // As the daemon does: after each reading.
            let room = placement.update(0, at: now)
            guard wanted.contains(index) else { continue }
            let position = placement.position(of: 0)
            rowsPlaced.append(index)
            estimates.append((position?.x ?? .nan, position?.y ?? .nan))
            accuracies.append(position?.accuracy ?? .infinity)
            if case .room(let name) = room { placedRooms.append(rooms.firstIndex { $0.name == name }) } else { placedRooms.append(nil) }
        }
        return (PositionTrack(rows: rowsPlaced, estimates: estimates), accuracies, placedRooms)
    }
}

extension SurveyFlat {
    /// What `beaconctl calibrate --receivers` would fit if the flat's receivers were ESPresense nodes hearing each
    /// other for `seconds` (a reading every `interval`): the survey has no node-to-node readings, so they are drawn
    /// from `radio` (fitted on other rows), the advertiser standing where its receiver is. The simulated receivers
    /// have the gains (`receiverPower`) that radio found, which a real mesh would measure as they are; what they hear
    /// of a node in a room is drawn afresh (the tag's room biases belong to where tags are carried, not to nodes on
    /// walls). Each pair's shadowing is drawn once (neither moves), fading and noise each reading; the advertiser's
    /// transmit power is off by `transmitterSpread` dB from what it advertises (boards differ), and there is no body
    /// in the way. Each receiver is fitted as beaconctl fits it (`CalibrationFit`), with the advertised −59 dBm at one
    /// metre. The flat has one floor.
    public func meshCalibrations(
        radio: SurveyRadio, seconds: Double = 60, interval: Double = 5, transmitterSpread: Double = 2, together: Bool = true, seed: UInt64
    ) -> (calibrations: [ReceiverCalibration], fits: [Result<CalibrationFit, CalibrationError>]) {
        var random = SeededRandom(seed: seed)
        let transmitters = receivers.indices.map { _ in random.gaussian() * transmitterSpread }
        let readings = max(1, Int(seconds / interval))
        var fits: [Result<CalibrationFit, CalibrationError>] = []
        var groups: [[CalibrationSample]] = []
        for listener in receivers.indices {
            var samples: [CalibrationSample] = []
            for advertiser in receivers.indices where advertiser != listener {
                let (a, b) = (receivers[listener], receivers[advertiser])
                let distance = ((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y) + (a.z - b.z) * (a.z - b.z)).squareRoot()
                let bias = random.gaussian() * radio.room
                let fixed =
                    radio.expected(receiver: listener, distance: distance, walls: walls(x: b.x, y: b.y, to: listener), facing: 0) + bias
                    + random.gaussian() * radio.place + transmitters[advertiser]
                var fading = random.gaussian() * radio.fading
                var total = 0.0
                var heard = 0
                for reading in 0..<readings {
                    if reading > 0 {
                        let kept = exp(-interval / radio.fadingTime)
                        fading = fading * kept + random.gaussian() * radio.fading * (1 - kept * kept).squareRoot()
                    }
                    guard random.uniform(in: 0..<1) >= radio.missRate[listener] else { continue }
                    total += (fixed + fading + random.gaussian() * radio.noise).rounded()
                    heard += 1
                }
                guard heard > 0 else { continue }
                samples.append(CalibrationSample(distance: distance, rssi: total / Double(heard), measuredPower: -59))
            }
            groups.append(samples)
            fits.append(Result { () throws(CalibrationError) in try CalibrationFit.fit(samples) })
        }
        if together { fits = CalibrationFit.fitTogether(groups) }
        return (fits.map { (try? $0.get())?.calibration ?? .uncalibrated }, fits)
    }
}
