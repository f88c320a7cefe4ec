public import BeaconKit

/// The other receivers on the broker, as this node learns them from `espresense/rooms/+/status` and
/// `espresense/devices/+/+`: each room gets a `ReceiverID`, its state (online or offline) and counters, and each
/// message becomes what the monitor needs. Pure: the daemon feeds it messages and carries out what it returns.
///
/// Bounded whatever arrives: at most `capacity` receivers, and payloads over `maximumPayload` bytes are dropped
/// unread. Device ids are not stored here at all. When the table is full, a new room takes the place of the receiver
/// offline or silent longest (anyone on the broker can invent rooms: they must not lock real receivers out), never
/// of one in `holding` (a receiver whose readings keep a region inside, or that a blind region waits for); with
/// every receiver holding, the new room's readings are dropped and counted.
public struct ReceiverDirectory: Sendable {
    /// What one message means for the monitor.
    public enum Input: Hashable, Sendable {
        /// A reading of an iBeacon by a remote receiver, with the distance it estimated (metres), and the RSSI at one
        /// metre it used (`rssi@1m`) and its RSSI unrounded, for this node to compute its own calibrated distance.
        case sighting(
            BeaconIdentity, rssi: Int8?, distance: Double, by: ReceiverID, measuredPower: Int? = nil,
            exactRSSI: Double? = nil)
        /// Another receiver's reading by a remote receiver: an ESPresense node advertises itself, and the others
        /// report it as device `node:<its id>` (its id is its room's slug, the topic it publishes under). `rssi` dBm
        /// as reported, `measuredPower` the RSSI at one metre it advertises (`rssi@1m`). For calibration: the floor
        /// plan says how far apart the two stand.
        case receiverHeard(String, rssi: Double, measuredPower: Int?, by: ReceiverID)
        case receiverOnline(ReceiverID)
        case receiverOffline(ReceiverID)
        /// A broker bridge (Mosquitto's `$SYS/broker/connection/<name>/state`) went down or came back. Down is
        /// followed by `receiverOffline` for every receiver that was online: readings of receivers beyond the
        /// bridge stop without their will crossing it, and which receivers are beyond it cannot be told from MQTT.
        case bridgeChanged(name: String, connected: Bool)
        /// Nothing for the monitor: this node's own publication, another kind of device, a topic not read.
        case ignored
        /// A message that could not be used, with why (counted and shown in status).
        case dropped(String)
        /// The receiver was evicted from the full table for a new room (offline or silent longest): the monitor
        /// forgets it. Comes before the input of the message that made room.
        case receiverForgotten(ReceiverID, room: String)
    }

    public struct Receiver: Hashable, Sendable {
        public var room: String
        public var id: ReceiverID
        public var online: Bool
        public var lastReading: Timestamp?
        public var readings: UInt64

        public init(room: String, id: ReceiverID, online: Bool, lastReading: Timestamp?, readings: UInt64) {
            self.room = room
            self.id = id
            self.online = online
            self.lastReading = lastReading
            self.readings = readings
        }
    }

    public let ownRoom: String
    public let capacity: Int
    public let maximumPayload: Int
    /// `receivers`' indices by room, and by id: every remote reading asks for its receiver's room (`room(of:)`).
    private var lookup = (byRoom: [String: Int](), byID: [ReceiverID: Int]())
    public private(set) var receivers: [Receiver] = []
    /// What was dropped and evicted, for status.
    public private(set) var counts = Counts()
    /// Receivers that may not be evicted: the daemon sets it (from its monitor) while the table is full.
    public var holding: Set<ReceiverID> = []
    /// The receiver evicted while the message being read is interpreted.
    private var forgotten: (id: ReceiverID, room: String)?

    public struct Counts: Sendable {
        /// Messages of other receivers that could not be used.
        public var readingsDropped: UInt64 = 0
        /// The last of them: `topic: why`.
        public var lastDropped: String?
        /// Receivers evicted from the full table to make room for new ones.
        public var evicted: UInt64 = 0
    }

    public var readingsDropped: UInt64 { counts.readingsDropped }
    public var lastDropped: String? { counts.lastDropped }
    public var evicted: UInt64 { counts.evicted }

    /// Whether a new room would take an existing receiver's place.
    public var isFull: Bool { receivers.count >= capacity }

    /// `known`: the receivers a previous directory had (a reload that changed `[mqtt]`), with the state the monitor
    /// has for them, so each room keeps its `ReceiverID` and a change of state is still noticed.
    public init(ownRoom: String, capacity: Int = 1000, maximumPayload: Int = 4096, known: [Receiver] = []) {
        self.ownRoom = ownRoom
        self.capacity = capacity
        self.maximumPayload = maximumPayload
        for receiver in known where receiver.room != ownRoom && lookup.byRoom[receiver.room] == nil {
            lookup.byRoom[receiver.room] = receivers.count
            lookup.byID[receiver.id] = receivers.count
            receivers.append(receiver)
        }
        nextID = (known.map(\.id.rawValue).max() ?? 0) + 1
    }

    private var nextID: UInt32 = 1

    public func receiver(_ room: String) -> Receiver? { lookup.byRoom[room].map { receivers[$0] } }

    /// The room of the receiver numbered `id`, if this directory holds it.
    public func room(of id: ReceiverID) -> String? { lookup.byID[id].map { receivers[$0].room } }

    /// One message of a subscription: what it means for the monitor, in order.
    public mutating func receive(topic: String, payload: [UInt8], at now: Timestamp) -> [Input] {
        var inputs: [Input] = []
        receive(topic: topic, payload: payload, at: now, into: &inputs)
        return inputs
    }

    /// `receive`, appending to `inputs`: a consumer that keeps the array (emptied, its capacity kept) allocates
    /// nothing per message for it.
    public mutating func receive(topic: String, payload: [UInt8], at now: Timestamp, into inputs: inout [Input]) {
        forgotten = nil
        let interpretation = interpret(topic: topic, payload: payload, at: now)
        if let forgotten { inputs.append(.receiverForgotten(forgotten.id, room: forgotten.room)) }
        switch interpretation {
        case .single(let input): inputs.append(input)
        case .several(let several): inputs.append(contentsOf: several)
        }
    }

    private enum Interpretation {
        case single(Input)
        case several([Input])
    }

    private mutating func interpret(topic: String, payload: [UInt8], at now: Timestamp) -> Interpretation {
        if let bridge = BrokerBridge.name(fromStateTopic: topic) {
            return bridgeState(bridge, topic: topic, payload: payload)
        }
        switch ESPresense.topic(topic) {
        case .other:
            return .single(.ignored)
        case .roomStatus(let room):
            guard room != ownRoom else { return .single(.ignored) }
            guard Self.isRoom(room) else {
                return .single(drop("\(ESPresense.shownTopic(topic)): a room named \(room.utf8.count) bytes long or not in ESPresense's form"))
            }
            let text = String(decoding: payload, as: UTF8.self)
            // An empty retained status is how a node is removed (companion's convention): it cannot be heard.
            let online = text == ESPresense.online
            guard online || text == ESPresense.offline || text.isEmpty else {
                return .single(drop("\(ESPresense.shownTopic(topic)): status \"\(text.prefix(32))\" is neither online nor offline"))
            }
            guard let index = index(of: room, creating: online) else {
                return .single(online ? drop("\(topic): more than \(capacity) receivers") : .ignored)
            }
            guard receivers[index].online != online else { return .single(.ignored) }
            receivers[index].online = online
            return .single(online ? .receiverOnline(receivers[index].id) : .receiverOffline(receivers[index].id))
        case .device(let id, let room):
            guard room != ownRoom else { return .single(.ignored) }
            guard Self.isRoom(room) else {
                return .single(drop("\(ESPresense.shownTopic(topic)): a room named \(room.utf8.count) bytes long or not in ESPresense's form"))
            }
            let shown = ESPresense.shownTopic(topic)
            guard payload.count <= maximumPayload else { return .single(drop("\(shown): \(payload.count) bytes, more than \(maximumPayload)")) }
            let reading: ESPresenseReading
            do {
                reading = try ESPresenseReading(json: payload)
                try reading.checkPlausible()
            } catch {
                return .single(drop("\(shown): \(error)"))
            }
            // The topic names the device, as ESPresense-companion reads it; a payload that says otherwise is suspect.
            guard ESPresense.sameDeviceID(reading.id, id) else {
                return .single(drop("\(shown): the payload's id is \(ESPresense.shownTopic(reading.id))"))
            }
            if let advertiser = ESPresense.nodeID(fromDeviceID: id) {
                guard Self.isRoom(advertiser) else {
                    return .single(drop("\(shown): a node id \(advertiser.utf8.count) bytes long or not in ESPresense's form"))
                }
                guard let rssi = reading.rssi else { return .single(drop("\(shown): a node's reading without rssi")) }
                guard advertiser != room else { return .single(.ignored) }
                return heard(in: room, at: now, shown: shown) {
                    .receiverHeard(advertiser, rssi: rssi, measuredPower: reading.rssiAtOneMetre, by: $0)
                }
            }
            guard let identity = ESPresense.identity(fromDeviceID: id) else {
                // Malformed, of a kind beacond reads: a misconfigured node, said (and counted) rather than unseen.
                guard let form = ESPresense.expectedForm(ofDeviceID: id) else { return .single(.ignored) }
                return .single(drop("\(shown): the device id is not one beacond reads: \(form)"))
            }
            // Clamped: an adjusted RSSI may lie beyond Int8 (down to -177 dBm).
            let rssi = reading.rssi.map { Int8(max(-128, min(127, $0.rounded()))) }
            return heard(in: room, at: now, shown: shown) { receiver in
                .sighting(
                    identity, rssi: rssi, distance: reading.distance ?? -1, by: receiver, measuredPower: reading.rssiAtOneMetre,
                    exactRSSI: reading.rssi)
            }
        }
    }

    /// A reading by the receiver of `room`: counted, and proof the receiver is up, whatever its status said last (a
    /// node may publish before it).
    private mutating func heard(in room: String, at now: Timestamp, shown: String, _ input: (ReceiverID) -> Input) -> Interpretation {
        guard let index = index(of: room, creating: true) else { return .single(drop("\(shown): more than \(capacity) receivers")) }
        receivers[index].readings += 1
        receivers[index].lastReading = now
        let reading = input(receivers[index].id)
        guard receivers[index].online else {
            receivers[index].online = true
            return .several([.receiverOnline(receivers[index].id), reading])
        }
        return .single(reading)
    }

    /// A room as ESPresense writes it (its slug: `a-z`, `0-9`, `_`), at most 64 bytes: anything else is no
    /// receiver's, and a long name must not be kept a thousand times or sent in status.
    public static func isRoom(_ room: String) -> Bool { RegionSpec.isRoom(room) }

    /// The bridges whose last state was down (at most `capacity` names are kept, like receivers).
    public private(set) var bridgesDown: Set<String> = []

    /// `0`: every receiver that was online becomes offline (each returns with its next reading or status: those on
    /// this side of the bridge within their publish interval, those beyond it when the bridge is back and their
    /// retained statuses cross again). Blind, never absent: a beacon only they heard becomes unknown, not exited.
    private mutating func bridgeState(_ name: String, topic: String, payload: [UInt8]) -> Interpretation {
        let text = String(decoding: payload.prefix(8), as: UTF8.self)
        switch text {
        case BrokerBridge.connected:
            guard bridgesDown.remove(name) != nil else { return .single(.ignored) }
            return .single(.bridgeChanged(name: name, connected: true))
        case BrokerBridge.disconnected:
            guard bridgesDown.contains(name) || bridgesDown.count < capacity else {
                return .single(drop("\(topic): more than \(capacity) bridges down"))
            }
            bridgesDown.insert(name)
            return .several([.bridgeChanged(name: name, connected: false)] + brokerLost().map(Input.receiverOffline))
        default:
            return .single(drop("\(topic): bridge state \"\(text)\" is neither 1 nor 0"))
        }
    }

    /// The broker connection was lost: this node hears no receiver now. Returns the ones that were online.
    public mutating func brokerLost() -> [ReceiverID] {
        var lost: [ReceiverID] = []
        for index in receivers.indices where receivers[index].online {
            receivers[index].online = false
            lost.append(receivers[index].id)
        }
        return lost
    }

    private mutating func index(of room: String, creating: Bool) -> Int? {
        if let index = lookup.byRoom[room] { return index }
        guard creating else { return nil }
        if receivers.count >= capacity {
            guard evictOne() else { return nil }
        }
        receivers.append(Receiver(room: room, id: ReceiverID(rawValue: nextID), online: false, lastReading: nil, readings: 0))
        nextID += 1
        lookup.byRoom[room] = receivers.count - 1
        lookup.byID[receivers[receivers.count - 1].id] = receivers.count - 1
        return receivers.count - 1
    }

    /// Makes room: the receiver not `holding` that is offline, else silent, the longest (never heard first).
    private mutating func evictOne() -> Bool {
        var victim: Int?
        for index in receivers.indices where !holding.contains(receivers[index].id) {
            guard let chosen = victim else {
                victim = index
                continue
            }
            let (candidate, current) = (receivers[index], receivers[chosen])
            if (candidate.online ? 1 : 0, candidate.lastReading ?? .epoch) < (current.online ? 1 : 0, current.lastReading ?? .epoch) {
                victim = index
            }
        }
        guard let victim else { return false }
        let gone = receivers[victim]
        let last = receivers.count - 1
        if victim != last {
            receivers[victim] = receivers[last]
            lookup.byRoom[receivers[victim].room] = victim
            lookup.byID[receivers[victim].id] = victim
        }
        receivers.removeLast()
        lookup.byRoom[gone.room] = nil
        lookup.byID[gone.id] = nil
        counts.evicted += 1
        forgotten = (gone.id, gone.room)
        return true
    }

    /// A message the MQTT client dropped before copying it (over its `limit`): counted and named as any other drop.
    public mutating func droppedUnread(topic: String, bytes: Int, limit: Int) -> Input {
        drop("\(topic): \(bytes) bytes, more than \(limit)")
    }

    private mutating func drop(_ reason: String) -> Input {
        counts.readingsDropped += 1
        counts.lastDropped = reason
        return .dropped(reason)
    }
}
