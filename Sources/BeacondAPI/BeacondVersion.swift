/// beacond's version, in one place: `beacond --version`, `beaconctl --version`, `Manager1.Version` and
/// `GetStatus`'s `Version` all read it, so they cannot disagree.
public enum BeacondVersion {
    public static let current = "0.4.0"
}
