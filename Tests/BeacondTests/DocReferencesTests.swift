import Foundation
import Testing

/// Docs and source comments name only files, types and functions that exist (issue 40): renaming or deleting one
/// leaves no reference to it behind. A failure says file:line and the name.
///
/// What is read: backticked spans and relative links in docs/*.md, README.md and config/README.md (fenced code is
/// left to snippets_test.py, which runs it), and backticked spans in each Swift file's first comment block and in
/// its `///` comments. What a span must name:
/// - A path (it ends in .swift, or has a `/` and starts at a top-level entry or a folder under Sources/:
///   `scripts/fuzz.sh --seconds 20`, `Core/DaemonCore`): a file or folder, from the root, or else one whose path
///   ends in it, with or without .swift. `*` matches within one component.
/// - A D-Bus name of beacond (org.beacond.…): a literal of Sources (Names.swift), or a member of one.
/// - An UpperCamelCase name (Name, Type.member, Name(…)): one our Swift or Python code spells outside comments
///   and literals, so that `Sendable` and Python's `ValueError` need no list while a removed type fails; or a
///   dotted name in a literal of Sources (D-Bus members, BlueZ properties, beacon kinds, targets); or a folder
///   under Sources/ or an extension's file-name part (`+Engine`); or someone else's: Core Location's and
///   Foundation's (CL…, NS…) or one of `RepositoryIndex.outsideNames`, whose members are then not checked.
/// - In source comments, name(…) must be declared or called as a function and a lowerCamelCase name with a hump
///   must be in the code; in docs/architecture.md every lowerCamelCase name must. Elsewhere such words are keys,
///   labels and Python and are left alone, as are snake_case names, dotted names starting in lowercase and man
///   pages (`poll(2)`).
@Suite("Docs and source comments name what exists")
struct DocReferencesTests {
    @Test("every file, link, type, function and D-Bus name named exists")
    func everyNamedThingExists() throws {
        let index = try RepositoryIndex(root: ReplayCLITests.packageRoot)
        // A wrong root would find nothing and pass.
        #expect(index.documents.contains("docs/architecture.md"))
        #expect(index.swiftFiles.count > 300)
        for stale in try index.staleReferences() {
            Issue.record(Comment(rawValue: stale.description))
        }
    }

    @Test("a file, type, function, link or D-Bus name that is gone is found")
    func goneNamesAreFound() throws {
        let index = try RepositoryIndex(root: ReplayCLITests.packageRoot)
        let doc = """
            1. `Scanner/HCIScanner.swift` or `Scanner/BlueZScannerSource.swift` reads it (`Scanner/*Scanner*`,
               `Core/DaemonCore`), calls back with a `ScannerInput`, and `Scanner/ScanControl` decides; see
               [the API](dbus-api.md), [nothing](gone.md) and `scripts/fuzz.sh --seconds 20`.

            ```swift
            let x: NotChecked = `Scanner/NotChecked.swift`
            ```
            `NoSuchScanner`, `CLMonitor`, `UUID`, `org.beacond.Error.UnknownApp`, `org.beacond.Error.Gone`,
            `DaemonCore.answer`, `flushOutbox`, `dropRegion`.
            """
        let found = index.staleReferences(inMarkdown: doc, file: "docs/architecture.md").map(\.description)
        #expect(
            found == [
                "docs/architecture.md:1: `Scanner/HCIScanner.swift`: no file or folder has this path (or ends in it)",
                "docs/architecture.md:3: link to `gone.md`: no such file",
                "docs/architecture.md:8: `NoSuchScanner`: no type, module or D-Bus name of this name in the code (if it "
                    + "is someone else's, add it to RepositoryIndex.outsideNames with where it comes from)",
                "docs/architecture.md:8: `org.beacond.Error.Gone`: not a D-Bus name beacond defines "
                    + "(Sources/BeacondAPI/Names.swift)",
                "docs/architecture.md:9: `dropRegion`: no such name in the code",
            ])

        // Each comment's first slash is escaped, so that the check of this file's own comments skips these lines.
        let source = """
            import BeaconKit

            \u{2F}// Saved before the reply leaves (`commitAfterCall`); `answer(_:)` commits, `handle(_:at:)` too, and
            \u{2F}// `startMonitoring`, `dropRegion(_:)`, `poll(2)` and `CLMonitor.requestState()` are fine or outside.
            struct S {
                \u{2F}/ `notChecked`: not the header, not documentation.
            }
            """
        #expect(
            index.staleReferences(inSwiftComments: source, file: "S.swift").map(\.description) == [
                "S.swift:3: `commitAfterCall`: no such name in the code",
                "S.swift:4: `dropRegion(…)`: no function of this name is declared or called",
            ])
    }
}
