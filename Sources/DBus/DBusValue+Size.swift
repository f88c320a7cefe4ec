extension DBusValue {
    /// About how many bytes this value takes in a marshalled message: each value's own size plus the worst
    /// case of its alignment padding, so the estimate errs high. For budgets (how much beacond has sent a peer
    /// that has not read it yet), not for wire layout.
    public var marshalledSizeEstimate: Int {
        switch self {
        case .byte: return 1
        case .boolean, .int32, .uint32: return 4 + 3
        case .int16, .uint16: return 2 + 1
        case .int64, .uint64, .double: return 8 + 7
        case .string(let text), .objectPath(let text): return 4 + 3 + text.utf8.count + 1
        case .signature(let text): return 1 + text.utf8.count + 1
        case .array(_, let elements):
            return 4 + 3 + 7 + elements.reduce(0) { $0 + $1.marshalledSizeEstimate }
        case .dictionary(_, _, let entries):
            return 4 + 3 + 7 + entries.reduce(0) { $0 + 7 + $1.key.marshalledSizeEstimate + $1.value.marshalledSizeEstimate }
        case .structure(let fields):
            return 7 + fields.reduce(0) { $0 + $1.marshalledSizeEstimate }
        case .variant(let inner):
            return 1 + inner.signature.utf8.count + 1 + inner.marshalledSizeEstimate
        }
    }
}
