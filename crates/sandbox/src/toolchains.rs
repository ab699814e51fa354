//! The toolchains a developer installs in the home folder (rustup, nvm, pyenv, ...), found from
//! the environment and the usual places, so that commands can run them read-only.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// What a command's sandbox is derived from: the home folder, `PATH` and the variables that
/// name where toolchains live. Taken from this process by [`HostEnv::current`]; tests make
/// their own.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HostEnv {
    pub home: Option<PathBuf>,
    pub path: Option<OsString>,
    /// Only the variables in [`TOOLCHAIN_VARS`].
    pub vars: BTreeMap<String, OsString>,
}

/// Variables that move a toolchain's folder away from its default place.
pub const TOOLCHAIN_VARS: &[&str] = &[
    "RUSTUP_HOME",
    "CARGO_HOME",
    "NVM_DIR",
    "FNM_DIR",
    "VOLTA_HOME",
    "PYENV_ROOT",
    "PIPX_HOME",
    "UV_PYTHON_INSTALL_DIR",
    "SDKMAN_DIR",
    "GOPATH",
    "GOROOT",
    "JAVA_HOME",
    "BUN_INSTALL",
    "DENO_INSTALL",
    "HOMEBREW_PREFIX",
];

impl HostEnv {
    /// This process's home folder, `PATH` and toolchain variables.
    pub fn current() -> Self {
        let var = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
        Self {
            home: var("HOME")
                .map(PathBuf::from)
                .filter(|home| home.is_absolute()),
            path: var("PATH"),
            vars: TOOLCHAIN_VARS
                .iter()
                .filter_map(|name| var(name).map(|value| (name.to_string(), value)))
                .collect(),
        }
    }

    /// A toolchain variable naming an absolute folder.
    pub fn var(&self, name: &str) -> Option<PathBuf> {
        self.vars
            .get(name)
            .map(PathBuf::from)
            .filter(|path| path.is_absolute())
    }
}

/// One toolchain folder found on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toolchain {
    /// `rustup`, `cargo`, `nvm`, ...
    pub name: &'static str,
    pub path: PathBuf,
}

/// Each toolchain: its name, the variable that moves it, and its places relative to the home
/// folder when the variable is not set.
const KNOWN: &[(&str, Option<&str>, &[&str])] = &[
    ("rustup", Some("RUSTUP_HOME"), &[".rustup"]),
    ("cargo", Some("CARGO_HOME"), &[".cargo"]),
    ("nvm", Some("NVM_DIR"), &[".nvm"]),
    (
        "fnm",
        Some("FNM_DIR"),
        &[".local/share/fnm", ".fnm", ".local/state/fnm_multishells"],
    ),
    ("volta", Some("VOLTA_HOME"), &[".volta"]),
    ("pyenv", Some("PYENV_ROOT"), &[".pyenv"]),
    ("uv", Some("UV_PYTHON_INSTALL_DIR"), &[".local/share/uv"]),
    (
        "pipx",
        Some("PIPX_HOME"),
        &[".local/pipx", ".local/share/pipx"],
    ),
    ("sdkman", Some("SDKMAN_DIR"), &[".sdkman"]),
    ("go", Some("GOPATH"), &["go"]),
    ("go", Some("GOROOT"), &["sdk"]),
    ("java", Some("JAVA_HOME"), &[]),
    ("bun", Some("BUN_INSTALL"), &[".bun"]),
    ("deno", Some("DENO_INSTALL"), &[".deno"]),
    ("conda", None, &["miniconda3", "anaconda3", "miniforge3"]),
    ("asdf", None, &[".asdf"]),
    ("mise", None, &[".local/share/mise"]),
    ("rbenv", None, &[".rbenv"]),
    ("~/.local/bin", None, &[".local/bin"]),
    ("Homebrew", Some("HOMEBREW_PREFIX"), &[".linuxbrew"]),
];

/// Homebrew's places outside the home folder (on macOS they are system folders already).
const HOMEBREW: &[&str] = &["/home/linuxbrew/.linuxbrew"];

/// The toolchain folders that exist on this machine. A folder that would expose the whole
/// home folder (a variable set to it, or to one of its parents) is never one of them.
pub fn detect(host: &HostEnv) -> Vec<Toolchain> {
    let mut found: Vec<Toolchain> = Vec::new();
    let mut add = |name: &'static str, path: PathBuf| {
        let Ok(path) = path.canonicalize() else {
            return;
        };
        if !path.is_dir() || path == Path::new("/") {
            return;
        }
        if let Some(home) = &host.home
            && (home.starts_with(&path) || home.canonicalize().is_ok_and(|h| h.starts_with(&path)))
        {
            return;
        }
        if !found.iter().any(|known| known.path == path) {
            found.push(Toolchain { name, path });
        }
    };
    for (name, var, places) in KNOWN {
        if let Some(path) = var.and_then(|var| host.var(var)) {
            add(name, path);
            continue;
        }
        if let Some(home) = &host.home {
            for place in *places {
                add(name, home.join(place));
            }
        }
    }
    for place in HOMEBREW {
        add("Homebrew", PathBuf::from(place));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn toolchains_are_found_in_the_home_folder_and_where_variables_say() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let home = base.join("home");
        for folder in [
            ".rustup",
            ".cargo/bin",
            ".pyenv",
            "go",
            ".local/bin",
            ".ssh",
        ] {
            std::fs::create_dir_all(home.join(folder)).unwrap();
        }
        std::fs::create_dir_all(base.join("elsewhere/nvm")).unwrap();
        let mut vars = BTreeMap::new();
        vars.insert("NVM_DIR".to_string(), base.join("elsewhere/nvm").into());
        // A variable pointing at the home folder itself is ignored.
        vars.insert("GOPATH".to_string(), home.clone().into());
        let host = HostEnv {
            home: Some(home.clone()),
            path: None,
            vars,
        };
        let found: Vec<(&str, PathBuf)> = detect(&host)
            .into_iter()
            .map(|toolchain| (toolchain.name, toolchain.path))
            .collect();
        assert_eq!(
            found,
            vec![
                ("rustup", home.join(".rustup")),
                ("cargo", home.join(".cargo")),
                ("nvm", base.join("elsewhere/nvm")),
                ("pyenv", home.join(".pyenv")),
                ("~/.local/bin", home.join(".local/bin")),
            ]
        );
    }
}
