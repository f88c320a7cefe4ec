/// The message of `org.beacond.Error.UnknownApp`: which app id was asked for (escaped), what is declared, and a
/// fix that can work. An app id that cannot name a declaration (empty, non-ASCII, spaces, control characters…)
/// gets what a valid app id looks like instead of a file name the loader would ignore.
public enum UnknownAppMessage {
    /// - Parameters:
    ///   - appID: what the client sent, untrusted.
    ///   - declared: the declared app ids; for a client (`forCaller`), only those the caller may act as.
    ///   - configDirectory: where `apps.d` is.
    ///   - suggestFix: whether to say how to declare the app (RegisterClient: a developer setting up an app);
    ///     an administrator's command gets the list only.
    ///   - forCaller: the unix user of a client that is no administrator: it is told only the apps it may use,
    ///     never every declared app (their ids name the programs and people of the system).
    public static func text(
        appID: String, declared: [String], configDirectory: String, suggestFix: Bool,
        forCaller user: String? = nil
    ) -> String {
        let known = declared.sorted()
        let list: String
        if let user {
            list =
                known.isEmpty
                ? " (user \(user) may act as no declared app)"
                : " (user \(user) may act as: \(known.joined(separator: ", ")))"
        } else {
            list = known.isEmpty ? " (no apps are declared)" : " (declared: \(known.joined(separator: ", ")))"
        }
        guard ConfigurationNames.isAppID(appID) else {
            let what = appID.isEmpty ? "an empty app id" : "app id \(ClientText.quoted(appID))"
            return "\(what) is not a valid app id, so no declaration in \(configDirectory)/apps.d can have it\(list). "
                + "An app id is reverse-DNS "
                + "ASCII: letters, digits, '.', '-' and '_', dot-separated parts none empty, at most 255 characters, "
                + "e.g. org.example.BeaconDemo"
        }
        var message = "no app '\(appID)' is declared in \(configDirectory)/apps.d\(list)"
        if suggestFix {
            message +=
                ". Fix: create \(configDirectory)/apps.d/\(appID).toml with app_id = \"\(appID)\", "
                + "users = [\"<your user>\"] and the usage descriptions, then reload beacond (" + BeacondAdvice.reload + ")"
        }
        return message
    }
}
