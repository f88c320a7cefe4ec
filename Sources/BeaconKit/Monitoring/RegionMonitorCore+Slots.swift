// The regions' slots: each slot's record, region, thresholds, rules and hearing, and which slots are free.

extension RegionMonitorCore {
    /// Every slot's state as parallel arrays indexed by slot. Struct of arrays on purpose (see `Record`, `Hearing` and
    /// `Thresholds`): the per-sighting path reads and writes only the arrays it needs, in place.
    struct Slots: Sendable {
        var records: [Record?] = []
        /// The region in each slot in use, beside its record.
        var regions: [BeaconRegion?] = []
        /// Each slot's thresholds, beside its record.
        var thresholds: [Thresholds] = []
        /// Each slot's room, entry delay and exit delay.
        var rules: [Rules] = []
        /// Who heard each slot's region lately, beside its record.
        var hearings: [Hearing] = []
        private var freeSlots: [Int] = []
        /// The next `Record.ordinal` to give: start order, unique per start/replace/restore.
        private var nextOrdinal: UInt64 = 0

        /// A free slot, else a new one at the end of every array.
        mutating func allocate() -> Int {
            if let slot = freeSlots.popLast() { return slot }
            records.append(nil)
            regions.append(nil)
            thresholds.append(.countAll)
            rules.append(Rules())
            hearings.append(Hearing())
            return records.count - 1
        }

        /// Empties `slot` for reuse; its thresholds, rules and hearing are replaced when it is next filled.
        mutating func release(_ slot: Int) {
            records[slot] = nil
            regions[slot] = nil
            freeSlots.append(slot)
        }

        /// The start order for a region being started, replaced or restored now.
        mutating func takeOrdinal() -> UInt64 {
            defer { nextOrdinal += 1 }
            return nextOrdinal
        }

        /// The slots in use, the region started first first: what happens to several regions at once happens in this
        /// order, whatever slots they reused.
        func inStartOrder() -> [Int] {
            records.indices.compactMap { slot in records[slot].map { ($0.ordinal, slot) } }.sorted { $0.0 < $1.0 }.map(\.1)
        }
    }
}
