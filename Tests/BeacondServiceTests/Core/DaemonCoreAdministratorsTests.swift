import BeacondAPI
@testable import BeacondService
@testable import BeacondCore
import Testing

/// Issue 40: who may call Admin1 is the core's rule (the bus adapter only says who the caller is).
@Suite("core: who may administer")
struct DaemonCoreAdministratorsTests {
    static func refusal(_ core: DaemonCore, _ candidate: AdministratorCandidate) -> String? {
        do {
            try CoreView(core).checkAdministrator(candidate)
            return nil
        } catch {
            #expect(error.name == .accessDenied)
            return error.message
        }
    }

    @Test("root and members of admin_group are let in; anyone else is refused with the group and the fix")
    func rootAndTheGroup() throws {
        let files = try CoreFiles(settings: "[authorization]\nadmin_group = \"wheelhouse\"\n")
        let core = try CoreHarness(files: files).core
        #expect(Self.refusal(core, AdministratorCandidate(userID: 0, userName: nil, groups: [])) == nil)
        #expect(Self.refusal(core, AdministratorCandidate(userID: 1000, userName: "ada", groups: ["ada", "wheelhouse"])) == nil)
        let refused = Self.refusal(core, AdministratorCandidate(userID: 1000, userName: "ada", groups: ["ada", "beacond-admin"]))
        #expect(refused?.contains("members of group 'wheelhouse'") == true, "\(refused ?? "let in")")
        #expect(refused?.contains("ada (uid 1000) is neither") == true, "\(refused ?? "let in")")
        #expect(refused?.contains("Fix: sudo usermod -aG wheelhouse ada") == true, "\(refused ?? "let in")")
        #expect(refused?.contains("\(files.configuration.path)/beacond.toml") == true, "\(refused ?? "let in")")
        // A uid the system does not know: said by number, and the fix leaves the name to fill in.
        let unknown = Self.refusal(core, AdministratorCandidate(userID: 4242, userName: nil, groups: []))
        #expect(unknown?.contains("uid 4242 (uid 4242) is neither") == true && unknown?.contains("<user>") == true, "\(unknown ?? "let in")")
    }

    /// The bus adapter's half: the system's groups of a user, by name (root's include root; nobody's, nogroup).
    @Test func groupNamesComeFromTheSystem() throws {
        let root = try #require(UnixAccounts.user(uid: 0))
        #expect(UnixAccounts.groupNames(of: root).contains("root"))
        if let nobody = UnixAccounts.user(uid: 65534) {
            #expect(!UnixAccounts.groupNames(of: nobody).contains("root"))
        }
    }
}
