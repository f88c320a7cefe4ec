import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// The process's resident memory as Linux reports it: `VmRSS` and `VmHWM` from /proc/self/status
/// and the resident page count from /proc/self/statm (proc(5)).
struct ResidentMemory: Codable {
    /// Resident set size, bytes (status `VmRSS`).
    var residentBytes: Int
    /// Peak resident set size so far, bytes (status `VmHWM`).
    var peakResidentBytes: Int
    /// Resident pages × page size, bytes (statm, second field); the same figure as `VmRSS`
    /// read a different way, kept as a cross-check.
    var statmResidentBytes: Int

    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    static func sample() throws -> ResidentMemory {
        let status = try contents(of: "/proc/self/status")
        let statm = try contents(of: "/proc/self/statm").split(separator: " ")
        guard let resident = kilobytes("VmRSS:", in: status), let peak = kilobytes("VmHWM:", in: status),
            statm.count >= 2, let pages = Int(statm[1])
        else {
            throw Unavailable(description: "/proc/self/status or statm lack VmRSS, VmHWM or resident pages")
        }
        return ResidentMemory(
            residentBytes: resident * 1024, peakResidentBytes: peak * 1024,
            statmResidentBytes: pages * pageSize)
    }

    private static var pageSize: Int {
        #if canImport(Glibc)
            return sysconf(Int32(_SC_PAGESIZE))
        #else
            return 4096
        #endif
    }

    /// /proc files report size 0, so they are read to the end rather than by size.
    private static func contents(of path: String) throws -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw Unavailable(description: "cannot open \(path) (resident memory is measured on Linux only)")
        }
        defer { try? handle.close() }
        return String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
    }

    /// `VmRSS:     1234 kB` → 1234.
    private static func kilobytes(_ field: String, in status: String) -> Int? {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field) }) else { return nil }
        return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
    }
}
