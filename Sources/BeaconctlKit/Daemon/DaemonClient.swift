public import DBus
import BeacondAPI

/// beacond's API as typed calls over one bus connection. Every failure becomes a `BeaconctlError` with
/// the exit status and a message that says the fix.
public final class DaemonClient {
    public let bus: BusChoice
    public let connection: DBusConnection
    /// How long one call may take before beacond counts as hung.
    public var timeout: Duration

    public init(bus: BusChoice, timeout: Duration = .seconds(25)) throws(BeaconctlError) {
        self.bus = bus
        self.timeout = timeout
        do {
            connection = try DBusConnection(bus.address)
        } catch {
            throw .connecting(to: bus, error)
        }
    }

    /// Whether some connection owns `org.beacond` (does not start it by activation).
    public func isDaemonRunning() throws(BeaconctlError) -> Bool {
        do {
            return try connection.nameHasOwner(BeacondBus.name)
        } catch {
            throw .calling(DBusDaemon.name, "NameHasOwner", on: bus, error)
        }
    }

    /// The unique name of beacond's connection (signals from anyone else are not beacond's).
    public func daemonUniqueName() throws(BeaconctlError) -> String {
        let reply: [DBusValue]
        do {
            reply = try connection.call(
                destination: DBusDaemon.name, path: DBusDaemon.path, interface: DBusDaemon.name,
                member: "GetNameOwner", arguments: [.string(BeacondBus.name)], timeout: timeout)
        } catch {
            throw .calling(DBusDaemon.name, "GetNameOwner", on: bus, error)
        }
        guard case .string(let name)? = reply.first else { throw .unexpectedReply("GetNameOwner", reply) }
        return name
    }

    func call(
        _ interface: String, _ member: String, path: String = BeacondBus.managerPath,
        _ arguments: [DBusValue] = []
    ) throws(BeaconctlError) -> [DBusValue] {
        do {
            let reply = try connection.reply(
                destination: BeacondBus.name, path: path, interface: interface,
                member: member, arguments: arguments, timeout: timeout)
            return try DBusConnection.arguments(of: reply)
        } catch {
            throw .calling(interface, member, on: bus, error)
        }
    }

    private func dictionaryReply(_ interface: String, _ member: String) throws(BeaconctlError) -> VarDict {
        let reply = try call(interface, member)
        guard let dictionary = reply.first?.vardictEntries else { throw .unexpectedReply(member, reply) }
        return dictionary
    }

    /// Every entry of a paged Admin1 listing (`(u offset, u limit) → (aa{sv}, u total)`), walked a page at a time,
    /// or its first `most` entries. A listing that changes meanwhile may shift by an entry between two pages; the
    /// walk stops at the total the last page gave, and on an empty page.
    func pagedReply(_ member: String, most: Int = .max) throws(BeaconctlError) -> (entries: [VarDict], total: Int) {
        var entries: [VarDict] = []
        var total = 0
        repeat {
            // At least one: a limit of 0 asks for the daemon's most.
            let limit = UInt32(clamping: max(1, min(most - entries.count, Self.pageSize)))
            let reply = try call(BeacondInterface.admin, member, [.uint32(UInt32(clamping: entries.count)), .uint32(limit)])
            guard reply.count == 2, case .array("a{sv}", let page) = reply[0], case .uint32(let count) = reply[1] else {
                throw .unexpectedReply(member, reply)
            }
            total = Int(count)
            entries += page.compactMap(\.vardictEntries)
            if page.isEmpty { break }
        } while entries.count < min(total, most)
        return (Array(entries.prefix(most)), total)
    }

    /// Entries asked for per call: the daemon's most (`Limits.MaxPageSize`), so a walk takes as few calls as it can.
    static let pageSize = 500

    // MARK: Admin1 (root or the admin group)

    public func status() throws(BeaconctlError) -> VarDict {
        try dictionaryReply(BeacondInterface.admin, BeacondMember.getStatus)
    }

    /// `GetStatus` with the lists beaconctl shows beside it, each walked through its paged method under the keys
    /// of `StatusListKey`: every client, app and pending request, the first `regions` regions (all by
    /// default) with `RegionTotal` saying how many there are, and the first `receivers` other receivers on the
    /// broker (all by default; GetStatus's `MQTTReceiverCount` says how many there are).
    public func snapshot(regions most: Int = .max, receivers mostReceivers: Int = .max) throws(BeaconctlError) -> VarDict {
        var status = try status()
        status[StatusListKey.clients] = BeaconctlLists.array(try clients())
        status[StatusListKey.apps] = BeaconctlLists.array(try apps())
        status[StatusListKey.pendingRequests] = BeaconctlLists.array(try pendingRequests())
        let regions = try pagedReply(BeacondMember.listRegions, most: most)
        status[StatusListKey.regions] = BeaconctlLists.array(regions.entries)
        status[StatusListKey.regionTotal] = .uint32(UInt32(clamping: regions.total))
        status[StatusListKey.receivers] = BeaconctlLists.array(try pagedReply(BeacondMember.listReceivers, most: mostReceivers).entries)
        return status
    }

    public func clients() throws(BeaconctlError) -> [VarDict] {
        try pagedReply(BeacondMember.listClients).entries
    }

    public func pendingRequests() throws(BeaconctlError) -> [VarDict] {
        try pagedReply(BeacondMember.listPendingRequests).entries
    }

    public func apps() throws(BeaconctlError) -> [VarDict] {
        try pagedReply(BeacondMember.listApps).entries
    }

    public func regions() throws(BeaconctlError) -> [VarDict] {
        try pagedReply(BeacondMember.listRegions).entries
    }

    /// `status` is one of `BeacondStatus.all` (the daemon checks it too).
    public func setAuthorization(app: String, status: String) throws(BeaconctlError) {
        _ = try call(BeacondInterface.admin, BeacondMember.setAuthorization, [.string(app), .string(status)])
    }

    public func resetAuthorization(app: String) throws(BeaconctlError) {
        _ = try call(BeacondInterface.admin, BeacondMember.resetAuthorization, [.string(app)])
    }

    public func setLocationServicesEnabled(_ enabled: Bool) throws(BeaconctlError) {
        _ = try call(BeacondInterface.admin, BeacondMember.setLocationServicesEnabled, [.boolean(enabled)])
    }

    /// Subscribes to `Admin1.Event` (match rule first, so no event between the two is lost).
    public func watchEvents() throws(BeaconctlError) {
        try addMatch(SignalRules.adminEvents)
        _ = try call(BeacondInterface.admin, BeacondMember.watchEvents)
    }

    public func unwatchEvents() throws(BeaconctlError) {
        _ = try call(BeacondInterface.admin, BeacondMember.unwatchEvents)
    }

    // MARK: Signals

    /// Tells us when beacond leaves the bus (NameOwnerChanged for org.beacond).
    public func watchDaemonPresence() throws(BeaconctlError) {
        try addMatch(SignalRules.daemonOwnerChanged)
    }

    func addMatch(_ rule: String) throws(BeaconctlError) {
        do {
            try connection.addMatch(rule)
        } catch {
            throw .calling(DBusDaemon.name, "AddMatch", on: bus, error)
        }
    }
}

extension DaemonClient {
    /// `Admin1.ListReceiverReadings`: every receiver's latest raw reading of every beacon heard lately, walked a
    /// page at a time.
    public func receiverReadings() throws(BeaconctlError) -> [VarDict] {
        try pagedReply(BeacondMember.listReceiverReadings).entries
    }

    /// `Admin1.ListReceiverHearings`: what receivers last heard of each other, walked a page at a time.
    public func receiverHearings() throws(BeaconctlError) -> [VarDict] {
        try pagedReply(BeacondMember.listReceiverHearings).entries
    }

    /// `Admin1.GetFloorPlan`: the floor plan in force (empty without one).
    public func floorPlan() throws(BeaconctlError) -> VarDict {
        try dictionaryReply(BeacondInterface.admin, BeacondMember.getFloorPlan)
    }

    /// `Admin1.Reload`: the daemon reads its configuration again; returns the error that kept the old one ("" if none).
    public func reload() throws(BeaconctlError) -> String {
        let reply = try call(BeacondInterface.admin, BeacondMember.reload)
        guard case .string(let error)? = reply.first else { throw .unexpectedReply(BeacondMember.reload, reply) }
        return error
    }
}
