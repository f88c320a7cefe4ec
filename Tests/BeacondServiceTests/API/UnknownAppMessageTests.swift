import BeacondService
import BeacondCore
import Testing

/// UnknownApp says what was asked for (escaped) and a fix that can work.
@Suite("UnknownApp message")
struct UnknownAppMessageTests {
    func text(_ appID: String, declared: [String] = ["org.example.Demo"], suggestFix: Bool = true) -> String {
        UnknownAppMessage.text(appID: appID, declared: declared, configDirectory: "/etc/beacond", suggestFix: suggestFix)
    }

    @Test func aValidAppIDGetsTheDeclarationFix() {
        let message = text("org.example.Door")
        #expect(message.contains("no app 'org.example.Door' is declared in /etc/beacond/apps.d"))
        #expect(message.contains("(declared: org.example.Demo)"))
        #expect(message.contains("create /etc/beacond/apps.d/org.example.Door.toml with app_id = \"org.example.Door\""))
        #expect(!text("org.example.Door", suggestFix: false).contains("Fix:"))
        #expect(text("org.example.Door", declared: []).contains("(no apps are declared)"))
    }

    /// No file name can declare these: the loader would ignore `apps.d/.toml` or refuse the app id.
    @Test(arguments: ["", "café.app", "my app", "org..example", ".hidden", "-x", "a/b", "evil\u{1B}]0;x\u{07}app"])
    func anImpossibleAppIDGetsWhatAValidOneIs(_ appID: String) {
        let message = text(appID)
        #expect(!message.contains(".toml"), "\(message)")
        #expect(!message.contains("create"), "\(message)")
        #expect(message.contains("not a valid app id"), "\(message)")
        #expect(message.contains("reverse-DNS"), "\(message)")
        #expect(message.contains("org.example.BeaconDemo"), "\(message)")
        #expect(
            !message.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) },
            "control characters echoed: \(message.debugDescription)")
    }

    @Test func anEmptyAppIDIsCalledEmpty() {
        #expect(text("").hasPrefix("an empty app id"))
    }
}
