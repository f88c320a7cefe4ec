/// Where a beacon is on the floor plan, and how sure that is (issue 41, "Where on the floor plan"): what the locator
/// says of a beacon, for ranging, the client libraries, `beaconctl` and MQTT.
public struct Position: Hashable, Sendable, CustomStringConvertible {
    /// Metres on the floor plan; `z` is the floor's height plus the tag's above it.
    public var x: Double
    public var y: Double
    public var z: Double
    /// The floor's id.
    public var floor: String
    /// Metres: the radius around (x, y) that holds every spot fitting the readings about as well (the 68 % region of
    /// the fit at the radio's spread). Grows when few receivers hear the beacon or they stand so that many spots fit
    /// alike; it does not yet grow when the receivers disagree more than the radio's spread says.
    public var accuracy: Double
    /// How many receivers' readings placed it.
    public var fixes: Int

    public init(x: Double, y: Double, z: Double, floor: String, accuracy: Double, fixes: Int) {
        self.x = x
        self.y = y
        self.z = z
        self.floor = floor
        self.accuracy = accuracy
        self.fixes = fixes
    }

    public var description: String {
        func metres(_ value: Double) -> String { String((value * 100).rounded() / 100) }
        return "(\(metres(x)), \(metres(y))) on \(floor) ±\(metres(accuracy)) m, \(fixes) receivers"
    }
}

/// A floor of the plan as the locator needs it: where it may put a beacon, and at what height.
public struct LocatorFloor: Hashable, Sendable {
    public var id: String
    /// The floor's extent, metres: the locator searches this rectangle.
    public var minimumX: Double
    public var minimumY: Double
    public var maximumX: Double
    public var maximumY: Double
    /// The height of a tag on this floor, metres (the floor's own height plus where tags are carried).
    public var tagHeight: Double

    public init(id: String, minimumX: Double, minimumY: Double, maximumX: Double, maximumY: Double, tagHeight: Double) {
        self.id = id
        self.minimumX = minimumX
        self.minimumY = minimumY
        self.maximumX = maximumX
        self.maximumY = maximumY
        self.tagHeight = tagHeight
    }
}

/// A receiver at its place on the plan, with its calibration (its RSSI offset and path-loss exponent).
public struct PlacedReceiver: Hashable, Sendable {
    public var id: ReceiverID
    public var x: Double
    public var y: Double
    public var z: Double
    public var calibration: ReceiverCalibration
    /// The floor it stands on (a `LocatorFloor`'s id): a beacon on another floor is heard through the floors
    /// between (`PositionConfiguration.floorLoss`). Nil, or a floor the locator does not have: counted on every floor
    /// alike.
    public var floor: String?

    public init(id: ReceiverID, x: Double, y: Double, z: Double, calibration: ReceiverCalibration, floor: String? = nil) {
        self.id = id
        self.x = x
        self.y = y
        self.z = z
        self.calibration = calibration
        self.floor = floor
    }
}
