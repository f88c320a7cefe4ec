import Foundation
import Testing

/// The core (`Sources/BeacondCore`) decides and does no I/O (issue 40, item 3). Its target's dependencies in
/// Package.swift keep DBus, MQTT, GRDB, BlueZ and the capture readers out of reach; Foundation is reachable
/// through any target, so this test holds the rest: every import in the core is one of the pure modules, and
/// Foundation only for its UUID value type.
@Suite("The core imports no I/O")
struct CorePurityTests {
    static let allowed: Set<String> = ["BeaconKit", "BeacondAPI", "Fleet", "Logging", "struct Foundation.UUID"]
    static let accessModifiers: Set<String> = ["public", "package", "internal", "fileprivate", "private", "open"]

    @Test("every import in Sources/BeacondCore is a pure module")
    func coreImportsArePure() throws {
        let root = ReplayCLITests.packageRoot.appendingPathComponent("Sources/BeacondCore")
        let files = try #require(FileManager.default.enumerator(atPath: root.path)).compactMap { $0 as? String }
            .filter { $0.hasSuffix(".swift") }
        #expect(files.count > 20, "a wrong root would find nothing and pass")
        var imports = 0
        for file in files {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let words = line.split(separator: " ").map(String.init)
                // Whatever comes before `import`: access (private too) and attributes (@_exported, @testable, …).
                guard let at = words.firstIndex(of: "import"),
                    words[..<at].allSatisfy({ $0.hasPrefix("@") || Self.accessModifiers.contains($0) })
                else { continue }
                imports += 1
                let module = words[(at + 1)...].joined(separator: " ")
                #expect(Self.allowed.contains(module), "BeacondCore/\(file):\(number + 1) imports \(module)")
            }
        }
        #expect(imports > 20)
    }

    @Test("the core's target depends on pure targets only")
    func coreTargetDependencies() throws {
        let manifest = try String(
            contentsOf: ReplayCLITests.packageRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        let start = try #require(manifest.range(of: "name: \"BeacondCore\""))
        let end = try #require(manifest[start.upperBound...].range(of: "swiftSettings"))
        let dependencies = manifest[start.upperBound..<end.lowerBound]
        for impure in ["\"DBus\"", "\"MQTT\"", "\"BlueZ\"", "\"Captures\"", "\"MainLoopKit\"", "GRDB", "TOMLKit"] {
            #expect(!dependencies.contains(impure), "BeacondCore depends on \(impure)")
        }
    }
}
