/// `UUID[:MAJOR[:MINOR]][@ROOM]`, the form beaconctl and replay take for a region: a constraint, and optionally the
/// room its beacon must be in (a room as receivers' topics name it: a-z, 0-9, '_' and '-', at most 64 bytes).
public struct RegionSpec: Hashable, Sendable, CustomStringConvertible {
    public var constraint: BeaconIdentityConstraint
    public var room: String?

    public init(parsing text: String) throws(RegionSpec.Invalid) {
        let parts = text.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        do {
            constraint = try BeaconIdentityConstraint(parsing: String(parts[0]))
        } catch {
            throw .constraint(error)
        }
        guard parts.count == 2 else { return }
        let room = String(parts[1])
        guard Self.isRoom(room) else { throw .room(room) }
        self.room = room
    }

    /// A room as receivers name it (ESPresense's room slug).
    public static func isRoom(_ room: String) -> Bool {
        !room.isEmpty && room.utf8.count <= 64
            && room.utf8.allSatisfy {
                ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F || $0 == 0x2D
            }
    }

    public var description: String { constraint.description + (room.map { "@" + $0 } ?? "") }

    public enum Invalid: Error, Equatable, CustomStringConvertible {
        case constraint(BeaconIdentityConstraint.Invalid)
        case room(String)

        public var description: String {
            switch self {
            case .constraint(let invalid): return invalid.description
            case .room(let room):
                return "'@\(room)' is not a room: give the receiver's room as its topics name it (a-z, 0-9, '_' and '-', "
                    + "at most 64 bytes), e.g. E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2@kitchen"
            }
        }
    }
}
