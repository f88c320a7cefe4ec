/// One line of `beaconctl doctor`: what was checked, whether it passed, what was found, and the fix.
public struct DoctorCheck: Equatable, Sendable {
    public var title: String
    public var passed: Bool
    public var detail: String
    public var fix: String?

    public init(_ title: String, passed: Bool, _ detail: String, fix: String? = nil) {
        self.title = title
        self.passed = passed
        self.detail = detail
        // A passed check has nothing to fix (callers may pass the fix unconditionally).
        self.fix = passed ? nil : fix
    }

    /// `✓ title: detail`, and an indented `fix:` line when it failed.
    public var lines: [String] {
        var lines = ["\(passed ? "✓" : "✗") \(title): \(detail)"]
        if !passed, let fix { lines.append("    fix: \(fix)") }
        return lines
    }

    /// `{"Check":…,"Passed":…,"Detail":…,"Fix":…|null}`
    public var json: JSON {
        .object([
            "Check": .string(title), "Passed": .bool(passed), "Detail": .string(detail),
            "Fix": fix.map(JSON.string) ?? .null,
        ])
    }

    /// `{"Passed": all passed, "Checks": […]}`
    public static func json(_ checks: [DoctorCheck]) -> JSON {
        .object(["Passed": .bool(checks.allSatisfy(\.passed)), "Checks": .array(checks.map(\.json))])
    }
}
