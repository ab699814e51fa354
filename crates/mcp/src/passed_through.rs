//! Which of our environment variables every stdio server gets anyway: the few harmless ones
//! passed through (the home folder, the locale, the temporary folder) and the PATH. The
//! environment a server starts with is built from them (`env.rs`), and since they are no
//! secret, a server's answers are not scrubbed of their values (`redact.rs`). Kept apart from
//! both so that neither has to reach into the other.

/// Variables passed through from our environment when set.
#[cfg(unix)]
pub(crate) const PASSED_THROUGH: &[&str] = &[
    "HOME", "LANG", "LC_ALL", "LC_CTYPE", "USER", "LOGNAME", "TMPDIR", "TERM",
];
#[cfg(windows)]
pub(crate) const PASSED_THROUGH: &[&str] = &[
    "USERPROFILE",
    "USERNAME",
    "HOMEDRIVE",
    "HOMEPATH",
    "APPDATA",
    "LOCALAPPDATA",
    "PROGRAMDATA",
    "PROGRAMFILES",
    "PROGRAMFILES(X86)",
    "SYSTEMROOT",
    "SYSTEMDRIVE",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
    "TEMP",
    "TMP",
    "NUMBER_OF_PROCESSORS",
    "PROCESSOR_ARCHITECTURE",
];

/// Whether our variable `name` is one every stdio server gets anyway (or the PATH), and so no
/// secret: its value is not scrubbed from what servers send back (a home folder in every path
/// of a file server's answers would otherwise read `${HOME}`).
pub(crate) fn is_shared_with_servers(name: &str) -> bool {
    let same = |known: &&str| {
        if cfg!(windows) {
            known.eq_ignore_ascii_case(name)
        } else {
            *known == name
        }
    };
    PASSED_THROUGH.iter().any(same) || ["PATH", "PWD"].iter().any(same)
}
