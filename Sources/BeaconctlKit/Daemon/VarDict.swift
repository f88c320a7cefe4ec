import DBus

/// The lists `DaemonClient.snapshot` adds to `GetStatus`'s dictionary (GetStatus itself carries only counts: the
/// lists come from Admin1's paged List* methods). Under the names GetStatus once used, so `status --json` keeps them.
public enum StatusListKey {
    public static let clients = "Clients" // aa{sv}: ListClients
    public static let regions = "Regions" // aa{sv}: ListRegions (the first ones asked for)
    public static let regionTotal = "RegionTotal" // u: how many regions there are in all
    public static let pendingRequests = "PendingRequests" // aa{sv}: ListPendingRequests
    public static let apps = "Apps" // aa{sv}: ListApps
    public static let receivers = "MQTTReceivers" // aa{sv}: ListReceivers (the first ones asked for)
}

enum BeaconctlLists {
    static func array(_ entries: [VarDict]) -> DBusValue {
        .array(elementSignature: "a{sv}", entries.map { .vardict($0) })
    }
}
