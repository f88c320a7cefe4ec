public import Foundation

/// Finds every region or ranging constraint that an identity satisfies in constant time.
///
/// A constraint is UUID, UUID+major or UUID+major+minor (for Eddystone: namespace, or namespace+instance as a full
/// identity; for a private device: a full identity), so an identity can match at most three *shapes* of
/// constraint. Each shape has its own hash table, and a lookup is three hash probes
/// whatever the number of regions (10,000 regions cost the same as 1). Keys sharing one
/// constraint are kept together in a small array.
public struct RegionIndex<Key: Hashable & Sendable>: Sendable {
    /// Hash keys of machine words: Foundation's UUID hashes through a slow path, and every
    /// sighting probes these tables.
    @usableFromInline struct UUIDKey: Hashable, Sendable {
        @usableFromInline var high: UInt64
        @usableFromInline var low: UInt64
        @usableFromInline var kind: BeaconKind
        /// The key an identity or a UUID-only constraint of `kind` files under: an Eddystone namespace is the first 10
        /// bytes, so the instance is masked out.
        @inlinable init(kind: BeaconKind, _ uuid: UUID) {
            (high, low) = kind == .eddystone ? uuid.eddystoneNamespaceWords : uuid.words
            self.kind = kind
        }
    }

    @usableFromInline struct UUIDMajor: Hashable, Sendable {
        @usableFromInline var uuid: UUIDKey
        @usableFromInline var major: UInt16
        @inlinable init(kind: BeaconKind, uuid: UUID, major: UInt16) {
            self.uuid = UUIDKey(kind: kind, uuid)
            self.major = major
        }
    }

    @usableFromInline var byUUID: [UUIDKey: [Key]] = [:]
    @usableFromInline var byUUIDMajor: [UUIDMajor: [Key]] = [:]
    @usableFromInline var byIdentity: [BeaconIdentity: [Key]] = [:]
    @usableFromInline var constraints: [Key: BeaconIdentityConstraint] = [:]

    public init() {}

    /// Number of keys indexed.
    public var count: Int { constraints.count }
    public var isEmpty: Bool { constraints.isEmpty }

    public func constraint(for key: Key) -> BeaconIdentityConstraint? { constraints[key] }
    public var keys: Dictionary<Key, BeaconIdentityConstraint>.Keys { constraints.keys }

    /// Adds `key` under `constraint`, replacing what `key` had before.
    public mutating func insert(_ constraint: BeaconIdentityConstraint, for key: Key) {
        remove(key)
        constraints[key] = constraint
        switch (constraint.major, constraint.minor) {
        case (nil, _):
            byUUID[UUIDKey(kind: constraint.kind, constraint.uuid), default: []].append(key)
        case (let major?, nil):
            byUUIDMajor[UUIDMajor(kind: constraint.kind, uuid: constraint.uuid, major: major), default: []].append(key)
        case (let major?, let minor?):
            byIdentity[BeaconIdentity(kind: constraint.kind, uuid: constraint.uuid, major: major, minor: minor), default: []]
                .append(key)
        }
    }

    /// Removes `key`; returns the constraint it had.
    @discardableResult
    public mutating func remove(_ key: Key) -> BeaconIdentityConstraint? {
        guard let constraint = constraints.removeValue(forKey: key) else { return nil }
        func drop<K: Hashable>(_ table: inout [K: [Key]], _ bucket: K) {
            guard var keys = table[bucket], let index = keys.firstIndex(of: key) else { return }
            keys.remove(at: index)
            table[bucket] = keys.isEmpty ? nil : keys
        }
        switch (constraint.major, constraint.minor) {
        case (nil, _): drop(&byUUID, UUIDKey(kind: constraint.kind, constraint.uuid))
        case (let major?, nil): drop(&byUUIDMajor, UUIDMajor(kind: constraint.kind, uuid: constraint.uuid, major: major))
        case (let major?, let minor?):
            drop(&byIdentity, BeaconIdentity(kind: constraint.kind, uuid: constraint.uuid, major: major, minor: minor))
        }
        return constraint
    }

    /// Calls `body` once for every key whose constraint `identity` satisfies.
    @inlinable
    public func forEachMatch(of identity: BeaconIdentity, _ body: (Key) -> Void) {
        if !byUUID.isEmpty, let keys = byUUID[UUIDKey(kind: identity.kind, identity.uuid)] { keys.forEach(body) }
        if !byUUIDMajor.isEmpty, let keys = byUUIDMajor[UUIDMajor(kind: identity.kind, uuid: identity.uuid, major: identity.major)] {
            keys.forEach(body)
        }
        if !byIdentity.isEmpty, let keys = byIdentity[identity] { keys.forEach(body) }
    }

    /// True when at least one key matches `identity`.
    @inlinable
    public func containsMatch(for identity: BeaconIdentity) -> Bool {
        if !byUUID.isEmpty, byUUID[UUIDKey(kind: identity.kind, identity.uuid)] != nil { return true }
        if !byUUIDMajor.isEmpty, byUUIDMajor[UUIDMajor(kind: identity.kind, uuid: identity.uuid, major: identity.major)] != nil {
            return true
        }
        return !byIdentity.isEmpty && byIdentity[identity] != nil
    }
}
