/// The configuration directory, and what became of the last reading of its files.
package struct ConfigurationSource {
    package let directory: String
    /// Why the files on disk were rejected at the last reload (file, line, what is wrong); nil once a reload
    /// succeeds. The last good configuration stays in force meanwhile.
    package var rejection: String?
}
