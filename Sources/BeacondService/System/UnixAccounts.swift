import Foundation
import BeacondCore
#if canImport(Glibc)
    import Glibc
#endif

/// User and group lookups for credential checks (the bus gives a uid and pid; app declarations and
/// `admin_group` use names). Reentrant `_r` calls: the daemon's loop may not be the only thread.
enum UnixAccounts {
    struct User {
        var name: String
        var groupID: gid_t
    }

    static func user(uid: UInt32) -> User? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getpwuid_r(uid_t(uid), &entry, &buffer, buffer.count, &result) == 0, result != nil,
            let name = entry.pw_name
        else { return nil }
        return User(name: String(cString: name), groupID: entry.pw_gid)
    }

    static func userID(named name: String) -> uid_t? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getpwnam_r(name, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return entry.pw_uid
    }

    static func groupID(named name: String) -> gid_t? {
        var entry = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 65536)
        guard getgrnam_r(name, &entry, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return entry.gr_gid
    }

    /// The names of the user's groups, primary and supplementary (what `id -Gn` shows).
    static func groupNames(of user: User) -> Set<String> {
        var count: Int32 = 64
        var groups = [gid_t](repeating: 0, count: Int(count))
        if getgrouplist(user.name, user.groupID, &groups, &count) < 0 {
            groups = [gid_t](repeating: 0, count: Int(count))
            guard getgrouplist(user.name, user.groupID, &groups, &count) >= 0 else { return [] }
        }
        var names: Set<String> = []
        for id in groups.prefix(Int(count)) { // getgrouplist includes the primary group
            var entry = group()
            var result: UnsafeMutablePointer<group>?
            var buffer = [CChar](repeating: 0, count: 65536)
            if getgrgid_r(id, &entry, &buffer, buffer.count, &result) == 0, result != nil, let name = entry.gr_name {
                names.insert(String(cString: name))
            }
        }
        return names
    }

    /// `/proc/PID/exe`: the caller's executable, for apps that declare `executable`.
    static func executable(pid: UInt32) -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")
    }
}
