// The regions' pending transitions: the time-ordered lists, the heap of the rest, and the deadline fields of each
// `RegionMonitorCore.Record` that say where its deadline sits, kept in step with them.

extension RegionMonitorCore {
    /// Every pending deadline, in the structure its kind allows. Its methods take the record whose deadline they change
    /// `inout` (`&slots.records[slot]!`), so the record and the queues change together, in place.
    struct Deadlines: Sendable {
        /// Pending deadlines, one list per timeout: every deadline in a list is the clock when it was set + that
        /// timeout, so each list is in deadline order (see `DeadlineList`). Without adaptive exits or ExitDelay there
        /// is one list; adaptive timeouts are rounded up to 8 steps per octave so there are few.
        private var lists: [Int64: DeadlineList] = [:]
        /// Deadlines that are no clock + timeout: restored regions not refreshed since, and deadline floors (another
        /// beacon of the region needs longer). Entries whose region moved on are dropped lazily.
        private var restored = DeadlineQueue()

        var count: Int { lists.values.reduce(0) { $0 + $1.count } + restored.count }

        /// The earliest pending transition, exact because the lists hold only live deadlines and the heap's outdated
        /// top entries are dropped after every change.
        var earliest: Int64? {
            var earliest = restored.first?.deadline
            for list in lists.values {
                if let front = list.front?.node.deadline, front < earliest ?? .max { earliest = front }
            }
            return earliest
        }

        /// `time` + `timeout`, or the end of time if that overflows.
        static func deadline(after time: Int64, timeout: Int64) -> Int64 {
            let (sum, overflow) = time.addingReportingOverflow(timeout)
            return overflow ? .max : sum
        }

        /// Takes every deadline due at `due` off the lists and the heap and clears its record's; returns those regions,
        /// unordered. An emptied list goes, except `exitTimeout`'s, which most deadlines use.
        mutating func takeDue(
            _ due: Int64, from records: inout [Record?], exitTimeout: Int64
        ) -> [(ordinal: UInt64, slot: Int)] {
            var taken: [(ordinal: UInt64, slot: Int)] = []
            for timeout in lists.keys {
                while let (listSlot, node) = lists[timeout]?.front, node.deadline == due {
                    lists[timeout]?.remove(listSlot)
                    taken.append((node.ordinal, node.region))
                    records[node.region]?.listSlot = nil
                    records[node.region]?.deadline = nil
                }
                if lists[timeout]?.count == 0, timeout != exitTimeout { lists[timeout] = nil }
            }
            while let entry = restored.first, entry.deadline == due {
                restored.popFirst()
                guard Self.isLive(entry, in: records) else { continue }
                taken.append((entry.ordinal, entry.region))
                records[entry.region]?.deadline = nil
            }
            dropOutdated(records)
            return taken
        }

        /// Sets the pending transition of `record`, in `slot`, to `deadline`, which is the clock + `timeout`: the back
        /// of that timeout's list.
        mutating func set(_ record: inout Record, slot: Int, to deadline: Int64, timeout: Int64) {
            if let listSlot = record.listSlot, record.listTimeout == timeout {
                lists[timeout]?.moveToBack(listSlot, deadline: deadline)
            } else {
                unlist(&record)
                record.listSlot = lists[timeout, default: DeadlineList()]
                    .append(region: slot, ordinal: record.ordinal, deadline: deadline)
                record.listTimeout = timeout
            }
            record.deadline = deadline
        }

        /// Sets a deadline that is no clock + timeout (a restored region's, a floor): it cannot join a list in order, so
        /// it waits in the heap.
        mutating func setOutOfOrder(_ record: inout Record, slot: Int, to deadline: Int64) {
            unlist(&record)
            record.deadline = deadline
            restored.push(.init(deadline: deadline, ordinal: record.ordinal, region: slot))
        }

        /// Leaves `record` without a deadline; a heap entry it had is outdated from now on (see `isLive`).
        mutating func clear(_ record: inout Record) {
            unlist(&record)
            record.deadline = nil
        }

        /// Forgets every deadline; the caller clears the records'.
        mutating func removeAll() {
            lists.removeAll()
            restored.removeAll()
        }

        /// Drops the heap's outdated top entries, so `earliest` is exact.
        mutating func dropOutdated(_ records: [Record?]) {
            while let entry = restored.first, !Self.isLive(entry, in: records) { restored.popFirst() }
        }

        /// A restored deadline still applies while its slot holds the region restored, not refreshed into the list
        /// since, and still waiting for that time.
        private static func isLive(_ entry: DeadlineQueue.Entry, in records: [Record?]) -> Bool {
            guard let record = records[entry.region] else { return false }
            return record.ordinal == entry.ordinal && record.listSlot == nil && record.deadline == entry.deadline
        }

        /// Takes `record`'s deadline off its list, if it is in one.
        private mutating func unlist(_ record: inout Record) {
            if let listSlot = record.listSlot { lists[record.listTimeout]?.remove(listSlot) }
            record.listSlot = nil
        }
    }
}
