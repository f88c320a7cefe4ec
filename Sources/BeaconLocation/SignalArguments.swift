import DBus

/// A `LocationManager1` signal's arguments (or a property's value), read as the library's types: both faces read
/// the same signals.
struct SignalArguments {
    let values: [DBusValue]

    init(_ values: [DBusValue]) { self.values = values }

    private func dictionary(_ index: Int) -> VarDict? {
        index < values.count ? values[index].unwrapped.vardictEntries : nil
    }

    func region(_ index: Int) -> BeaconRegion? { dictionary(index).flatMap(BeaconRegion.init(dictionary:)) }

    func constraint(_ index: Int) -> BeaconIdentityConstraint? {
        dictionary(index).flatMap(BeaconIdentityConstraint.init(dictionary:))
    }

    func text(_ index: Int) -> String { index < values.count ? values[index].stringValue ?? "" : "" }

    /// The event dictionary of DidEnterRegion, DidExitRegion, DidDetermineState (time, late, dropped before).
    func event(_ index: Int) -> RegionEventInfo { RegionEventInfo(dictionary: dictionary(index)) }

    func beacons(_ index: Int) -> [Beacon] {
        guard index < values.count else { return [] }
        return values[index].arrayElements.compactMap { $0.unwrapped.vardictEntries.flatMap(Beacon.init(dictionary:)) }
    }

    /// `MonitoringDidFail`'s and `RangingDidFail`'s error (name and message after the dictionary).
    var error: BeaconLocationError { BeaconLocationError(name: text(1), message: text(2)) }

    /// `PropertiesChanged(s, a{sv}, as)`: the properties changed or invalidated.
    var changedProperties: [String] {
        guard values.count == 3 else { return [] }
        return (dictionary(1).map { Array($0.keys) } ?? []) + values[2].arrayElements.compactMap(\.stringValue)
    }

    /// The `MonitoredRegions` property's value.
    static func regions(_ value: DBusValue) -> [BeaconRegion] {
        value.arrayElements.compactMap { $0.unwrapped.vardictEntries.flatMap(BeaconRegion.init(dictionary:)) }
    }
}
