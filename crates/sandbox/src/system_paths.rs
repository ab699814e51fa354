//! The system folders a sandboxed command may read and run programs from, on each system. Kept
//! apart from both a command's reach, which grants them, and the confinement (Landlock,
//! Seatbelt), which only turns the reach's grants into rules: each of those reads this list,
//! and neither reads the other.

use std::path::PathBuf;

/// System folders programs are read and run from.
#[cfg(target_os = "linux")]
const SYSTEM: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/opt",
    "/nix/store",
];

/// The entries of `/etc` that programs need to start, resolve users, find certificates and
/// read their system-wide settings. Not `/etc/shadow`, `/etc/sudoers`, `/etc/ssh`, ...
#[cfg(target_os = "linux")]
const ETC: &[&str] = &[
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/alternatives",
    "/etc/ssl/certs",
    // OpenSSL's settings, read by Node, Python and curl on start (not /etc/ssl/private).
    "/etc/ssl/openssl.cnf",
    "/etc/pki/tls/openssl.cnf",
    "/etc/pki/tls/certs",
    "/etc/pki/ca-trust",
    "/etc/ca-certificates",
    "/etc/ca-certificates.conf",
    "/etc/hosts",
    "/etc/host.conf",
    "/etc/resolv.conf",
    "/etc/os-release",
    "/etc/lsb-release",
    "/etc/debian_version",
    "/etc/gitconfig",
    "/etc/gitattributes",
    "/etc/inputrc",
    "/etc/terminfo",
    "/etc/magic",
    "/etc/magic.mime",
    "/etc/mime.types",
    "/etc/locale.alias",
    "/etc/locale.conf",
    "/etc/default/locale",
    "/etc/protocols",
    "/etc/services",
    "/etc/manpath.config",
];

/// Everything a command may read and run programs from: system folders, the `/etc` entries
/// above, and the settings folders of interpreters (`/etc/python3.12`, `/etc/perl`) that load
/// them on start.
#[cfg(target_os = "linux")]
pub(crate) fn system_paths() -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = SYSTEM.iter().chain(ETC).map(PathBuf::from).collect();
    if let Ok(entries) = std::fs::read_dir("/etc") {
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with("python") || name == "perl" || name == "vim" {
                paths.push(entry.path());
            }
        }
    }
    paths
}

/// The system folders commands read and run programs from.
#[cfg(not(target_os = "linux"))]
pub(crate) fn system_paths() -> Vec<PathBuf> {
    MACOS_SYSTEM.iter().map(PathBuf::from).collect()
}

/// System folders programs are read and run from on macOS.
#[cfg(not(target_os = "linux"))]
const MACOS_SYSTEM: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/System",
    "/Library/Apple",
    "/opt/homebrew",
    "/usr/local",
    "/private/etc/ssl",
    "/private/var/db/timezone",
    "/dev",
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[cfg(target_os = "linux")]
    #[test]
    fn secrets_are_not_among_the_readable_paths() {
        let paths = system_paths();
        for secret in [
            "/etc/shadow",
            "/etc/sudoers",
            "/etc/ssh",
            "/root",
            "/home",
            "/etc",
        ] {
            assert!(
                !paths.iter().any(|path| path == Path::new(secret)),
                "{secret} must stay invisible"
            );
        }
    }
}
