//! What one command can reach: every folder it may read or write and why, the secrets left out of
//! them, and its environment. Worked out by the caller for each call (so a toolchain installed
//! or a credential file written since is taken into account), passed to the helper as explicit
//! lists, and shown by `tooltrail doctor` from the same function.
//!
//! - System folders (`/usr`, chosen entries of `/etc`, ...): read.
//! - The workspace: read, and write when the user approved the command.
//! - A private temp and home folder per call: read and write, removed afterwards.
//! - The workspace's build caches, in Tooltrail's data folder: write when approved, else read.
//! - Toolchains found in the home folder (see [`crate::toolchains`]) and the folders the user
//!   added in `config.toml` (`[sandbox] read_only_folders`): read, secrets left out (see
//!   [`crate::secrets`]). Nothing else of the home folder.
//! - `/proc`: read, where the helper gives the command a PID namespace and a `/proc` of its own
//!   (only its own processes); otherwise not at all.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::secrets::{Hidden, allow_except_secrets, home_secrets};
use crate::toolchains::{HostEnv, Toolchain, detect};

/// Where a `PATH` without entries points.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";

/// The user's sandbox settings and the environment they apply to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSettings {
    /// Extra folders commands may read (`[sandbox] read_only_folders` in `config.toml`).
    pub read_only_folders: Vec<PathBuf>,
    /// The network rules (`[sandbox] network_commands` in `config.toml`): the words an
    /// approved command must start with to run with the network open (see
    /// [`crate::rules::network_rule`]).
    pub network_commands: Vec<Vec<String>>,
    /// Where each workspace's build caches are kept (in Tooltrail's data folder); `None` keeps
    /// them in the call's private temp folder, removed after the call.
    pub cache_root: Option<PathBuf>,
    /// The home folder, `PATH` and toolchain variables toolchains are found from.
    pub host: HostEnv,
}

impl Default for SandboxSettings {
    /// No extra folders, caches per call, this process's environment.
    fn default() -> Self {
        Self {
            read_only_folders: Vec::new(),
            network_commands: Vec::new(),
            cache_root: None,
            host: HostEnv::current(),
        }
    }
}

impl SandboxSettings {
    /// The folder of build caches for `workspace`: a name and a hash of its path below
    /// [`Self::cache_root`], or `temp/cache` when there is no root.
    pub fn cache_folder(&self, workspace: &Path, temp: &Path) -> PathBuf {
        match &self.cache_root {
            Some(root) => {
                let name: String = workspace
                    .file_name()
                    .map(|name| name.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "root".to_string())
                    .chars()
                    .map(|ch| {
                        if ch.is_alphanumeric() || ch == '-' || ch == '_' {
                            ch
                        } else {
                            '_'
                        }
                    })
                    .take(40)
                    .collect();
                root.join(format!(
                    "{name}-{:016x}",
                    fnv1a(workspace.as_os_str().as_encoded_bytes())
                ))
            }
            None => temp.join("cache"),
        }
    }
}

/// A stable hash (the std hasher may change between releases, and the folder must not).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Read, or read and write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

impl Access {
    pub fn as_str(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write",
        }
    }
}

/// Why a command may see a folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    System,
    Devices,
    Workspace,
    Temp,
    Cache,
    Toolchain(&'static str),
    Extra,
    Processes,
}

impl Reason {
    /// In words, as `tooltrail doctor` prints it.
    pub fn describe(self) -> String {
        match self {
            Reason::System => "system folder".to_string(),
            Reason::Devices => "device".to_string(),
            Reason::Workspace => "workspace".to_string(),
            Reason::Temp => "private temp and home folder of the call".to_string(),
            Reason::Cache => "build caches of this workspace".to_string(),
            Reason::Toolchain(name) => format!("toolchain: {name}"),
            Reason::Extra => "extra folder from config.toml".to_string(),
            Reason::Processes => "the command's own processes".to_string(),
        }
    }

    /// A short key for JSON.
    pub fn key(self) -> &'static str {
        match self {
            Reason::System => "system",
            Reason::Devices => "device",
            Reason::Workspace => "workspace",
            Reason::Temp => "temp",
            Reason::Cache => "cache",
            Reason::Toolchain(_) => "toolchain",
            Reason::Extra => "extra",
            Reason::Processes => "processes",
        }
    }
}

/// One folder (or file) a command may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub path: PathBuf,
    pub access: Access,
    pub reason: Reason,
}

/// A folder the user listed that is not there, or that would expose a secret whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub path: PathBuf,
    pub why: &'static str,
}

/// Everything one command can reach, and its environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandReach {
    /// What the Landlock rules allow, in order. A folder split around secrets appears as the
    /// entries allowed; [`CommandReach::folders`] has the folders as the user knows them.
    pub grants: Vec<Grant>,
    /// The folders as found (each toolchain and extra folder once), for reports.
    pub folders: Vec<Grant>,
    /// Secrets left out of allowed folders.
    pub hidden: Vec<Hidden>,
    /// Extra folders that were left out, and why.
    pub skipped: Vec<Skipped>,
    /// The build caches folder of this workspace.
    pub cache: PathBuf,
    /// `CARGO_HOME` of the command: a folder in the caches that links to the real one's
    /// registry and binaries, so cargo can take its locks without the real one being writable.
    pub cargo_home: Option<CargoHome>,
    /// The command's whole environment.
    pub env: Vec<(String, OsString)>,
}

/// The variables that tell package managers there is no network, left out when a network
/// rule opened it for the command (`npm install` must fetch).
const OFFLINE_VARIABLES: &[&str] = &[
    "npm_config_offline",
    "UV_OFFLINE",
    "GOPROXY",
    "CARGO_NET_OFFLINE",
];

impl CommandReach {
    /// Drops the variables that say there is no network: a network rule opened it.
    pub fn open_network(&mut self) {
        self.env
            .retain(|(name, _)| !OFFLINE_VARIABLES.contains(&name.as_str()));
    }
}

/// The command's own `CARGO_HOME`, made of links into the real one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CargoHome {
    pub real: PathBuf,
    pub own: PathBuf,
}

/// The entries of the real `CARGO_HOME` linked into the command's own one. Not the credentials,
/// nor cargo's lock and tracking files, which it makes afresh.
const CARGO_LINKED: &[&str] = &["bin", "registry", "git", "env", "config.toml", "config"];

impl CargoHome {
    /// Makes the links (run by the caller, outside the sandbox). Existing right links are kept.
    pub fn prepare(&self) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.own)?;
        for name in CARGO_LINKED {
            let target = self.real.join(name);
            let link = self.own.join(name);
            if !target.exists() {
                continue;
            }
            if std::fs::read_link(&link).is_ok_and(|now| now == target) {
                continue;
            }
            let _ = std::fs::remove_file(&link);
            // Another call in the same workspace may have just made it.
            #[cfg(unix)]
            match std::os::unix::fs::symlink(&target, &link) {
                Err(error) if error.kind() != std::io::ErrorKind::AlreadyExists => {
                    return Err(error);
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// What a command in `workspace` sees, `writable` when the user approved it, with `temp` its
/// private folder. `untrusted` folders are never put on `PATH`.
pub fn command_reach(
    settings: &SandboxSettings,
    workspace: &Path,
    writable: bool,
    temp: &Path,
    untrusted: &[PathBuf],
) -> CommandReach {
    let cache = settings.cache_folder(workspace, temp);
    let mut grants = fixed_grants(workspace, writable, temp, &cache);
    let mut folders = grants.clone();
    let toolchains = detect(&settings.host);
    let mut outside = OutsideReads::new(settings, &mut grants, &mut folders);
    for Toolchain { name, path } in &toolchains {
        outside.read(path, Reason::Toolchain(name));
    }
    outside.extra_folders(settings);
    let OutsideReads {
        mut hidden,
        skipped,
        ..
    } = outside;
    hidden.sort_by(|a, b| a.path.cmp(&b.path));
    hidden.dedup_by(|a, b| a.path == b.path);

    let cargo_home = toolchains
        .iter()
        .find(|toolchain| toolchain.name == "cargo")
        .map(|toolchain| CargoHome {
            real: toolchain.path.clone(),
            own: cache.join("cargo-home"),
        });
    // What `PATH` may name: the folders a command reads, not the workspace, its temp folder
    // or the caches, which commands write to.
    let visible: Vec<&Path> = grants
        .iter()
        .filter(|grant| {
            !matches!(
                grant.reason,
                Reason::Workspace | Reason::Temp | Reason::Cache
            )
        })
        .map(|grant| grant.path.as_path())
        .collect();
    let env = environment(
        settings,
        &toolchains,
        temp,
        &cache,
        cargo_home.as_ref(),
        untrusted,
        &visible,
    );
    CommandReach {
        grants,
        folders,
        hidden,
        skipped,
        cache,
        cargo_home,
        env,
    }
}

/// The folders every command gets, whatever the machine: system folders, devices, `/proc`, its
/// private temp folder, and the workspace and its caches (writable when approved).
fn fixed_grants(workspace: &Path, writable: bool, temp: &Path, cache: &Path) -> Vec<Grant> {
    let approved = if writable {
        Access::Write
    } else {
        Access::Read
    };
    let grant = |path: PathBuf, access: Access, reason: Reason| Grant {
        path,
        access,
        reason,
    };
    let mut grants: Vec<Grant> = crate::system_paths::system_paths()
        .into_iter()
        .map(|path| grant(path, Access::Read, Reason::System))
        .collect();
    for device in DEVICES {
        grants.push(grant(PathBuf::from(device), Access::Write, Reason::Devices));
    }
    grants.push(grant(
        PathBuf::from("/proc"),
        Access::Read,
        Reason::Processes,
    ));
    grants.push(grant(temp.to_path_buf(), Access::Write, Reason::Temp));
    grants.push(grant(cache.to_path_buf(), approved, Reason::Cache));
    grants.push(grant(workspace.to_path_buf(), approved, Reason::Workspace));
    grants
}

/// Folders outside the workspace a command reads (toolchains, the user's extra folders): each
/// is listed whole in the reach's folders, as the user knows it, but granted only around the
/// secrets in it, so a toolchain folder that holds a credential file does not expose it.
struct OutsideReads<'a> {
    known: Vec<Hidden>,
    grants: &'a mut Vec<Grant>,
    folders: &'a mut Vec<Grant>,
    hidden: Vec<Hidden>,
    skipped: Vec<Skipped>,
}

impl<'a> OutsideReads<'a> {
    fn new(
        settings: &SandboxSettings,
        grants: &'a mut Vec<Grant>,
        folders: &'a mut Vec<Grant>,
    ) -> Self {
        let known = settings
            .host
            .home
            .as_deref()
            .map(home_secrets)
            .unwrap_or_default();
        Self {
            known,
            grants,
            folders,
            hidden: Vec::new(),
            skipped: Vec::new(),
        }
    }

    fn read(&mut self, path: &Path, reason: Reason) {
        self.folders.push(Grant {
            path: path.to_path_buf(),
            access: Access::Read,
            reason,
        });
        let grants = &mut *self.grants;
        self.hidden
            .extend(allow_except_secrets(path, &self.known, &mut |allowed| {
                grants.push(Grant {
                    path: allowed,
                    access: Access::Read,
                    reason,
                })
            }));
    }

    /// `[sandbox] read_only_folders`: those that exist, never the root folder.
    fn extra_folders(&mut self, settings: &SandboxSettings) {
        for folder in &settings.read_only_folders {
            let folder = expand_home(folder, settings.host.home.as_deref());
            match folder.canonicalize() {
                Ok(path) if path.is_dir() || path.is_file() => {
                    if path == Path::new("/") {
                        self.skipped.push(Skipped {
                            path,
                            why: "the root folder would show the whole machine",
                        });
                        continue;
                    }
                    self.read(&path, Reason::Extra);
                }
                _ => self.skipped.push(Skipped {
                    path: folder,
                    why: "it does not exist",
                }),
            }
        }
    }
}

impl CommandReach {
    /// The folders as reports list them: what the command changes first, then toolchains and
    /// extra folders, then the system's; only those that exist (the private temp folder is
    /// made per call); `/proc` only where the command gets its own.
    pub fn shown(&self, own_processes: bool) -> Vec<&Grant> {
        let rank = |grant: &Grant| match grant.reason {
            Reason::Workspace => 0,
            Reason::Temp => 1,
            Reason::Cache => 2,
            Reason::Toolchain(_) => 3,
            Reason::Extra => 4,
            Reason::Processes => 5,
            Reason::System => 6,
            Reason::Devices => 7,
        };
        let mut folders: Vec<&Grant> = self
            .folders
            .iter()
            .filter(|grant| grant.reason != Reason::Processes || own_processes)
            .filter(|grant| {
                matches!(grant.reason, Reason::Temp | Reason::Cache) || grant.path.exists()
            })
            .collect();
        folders.sort_by_key(|grant| rank(grant));
        folders
    }
}

/// `~` and `~/...` mean the home folder; other relative paths are taken as they are (and will
/// not exist, since the helper needs absolute paths).
pub fn expand_home(path: &Path, home: Option<&Path>) -> PathBuf {
    match (path.strip_prefix("~"), home) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => path.to_path_buf(),
    }
}

/// Devices a command may read and write (the harmless ones).
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// The command's environment: nothing inherited but a `PATH` of folders it can see (system
/// folders, then toolchains and extra folders in the order the user's `PATH` has them), the
/// language, and the variables that tell toolchains where they are and where to put caches. No
/// keys, tokens or other secrets can leak through.
fn environment(
    settings: &SandboxSettings,
    toolchains: &[Toolchain],
    temp: &Path,
    cache: &Path,
    cargo_home: Option<&CargoHome>,
    untrusted: &[PathBuf],
    visible: &[&Path],
) -> Vec<(String, OsString)> {
    let path = command_path(settings, untrusted, visible);
    let lang = std::env::var_os("LANG")
        .filter(|lang| !lang.is_empty())
        .unwrap_or_else(|| OsString::from("C.UTF-8"));
    let mut env: Vec<(String, OsString)> = vec![
        ("PATH".to_string(), path),
        ("HOME".to_string(), temp.as_os_str().to_owned()),
        ("TMPDIR".to_string(), temp.as_os_str().to_owned()),
        ("LANG".to_string(), lang),
        // Keep `git status` from rewriting the index, and never wait for a password or a pager.
        ("GIT_OPTIONAL_LOCKS".to_string(), OsString::from("0")),
        ("GIT_TERMINAL_PROMPT".to_string(), OsString::from("0")),
        ("GIT_PAGER".to_string(), OsString::from("cat")),
        ("PAGER".to_string(), OsString::from("cat")),
        ("XDG_CACHE_HOME".to_string(), cache.join("xdg").into()),
        // Caches of package managers, per workspace; nothing is fetched (no network).
        ("npm_config_cache".to_string(), cache.join("npm").into()),
        ("npm_config_offline".to_string(), OsString::from("true")),
        (
            "npm_config_update_notifier".to_string(),
            OsString::from("false"),
        ),
        ("PIP_CACHE_DIR".to_string(), cache.join("pip").into()),
        ("PIP_NO_INPUT".to_string(), OsString::from("1")),
        (
            "PIP_DISABLE_PIP_VERSION_CHECK".to_string(),
            OsString::from("1"),
        ),
        ("UV_CACHE_DIR".to_string(), cache.join("uv").into()),
        ("UV_OFFLINE".to_string(), OsString::from("1")),
        ("GOCACHE".to_string(), cache.join("go-build").into()),
        ("GOPROXY".to_string(), OsString::from("off")),
        ("GOTOOLCHAIN".to_string(), OsString::from("local")),
        ("GOTELEMETRY".to_string(), OsString::from("off")),
    ];
    for (name, value) in toolchain_variables(settings, toolchains, cargo_home) {
        // A toolchain's own variable wins over the defaults above (and an earlier toolchain's).
        env.retain(|(known, _)| known != name);
        env.push((name.to_string(), value));
    }
    env
}

/// The user's `PATH`, kept to the folders the command can see and none it could have written
/// to; the system's default when nothing is left.
fn command_path(settings: &SandboxSettings, untrusted: &[PathBuf], visible: &[&Path]) -> OsString {
    settings
        .host
        .path
        .as_ref()
        .map(|path| {
            let mut kept: Vec<PathBuf> = Vec::new();
            for dir in std::env::split_paths(path) {
                let dir = dir.canonicalize().unwrap_or(dir);
                if dir.is_absolute()
                    && !untrusted.iter().any(|bad| dir.starts_with(bad))
                    && visible.iter().any(|root| dir.starts_with(root))
                    && !kept.contains(&dir)
                {
                    kept.push(dir);
                }
            }
            std::env::join_paths(kept).unwrap_or_default()
        })
        .filter(|path| !path.is_empty())
        .unwrap_or_else(|| OsString::from(DEFAULT_PATH))
}

/// The variables that tell each toolchain found where it is, in the order they are set.
fn toolchain_variables(
    settings: &SandboxSettings,
    toolchains: &[Toolchain],
    cargo_home: Option<&CargoHome>,
) -> Vec<(&'static str, OsString)> {
    let mut vars: Vec<(&'static str, OsString)> = Vec::new();
    let mut set = |name: &'static str, value: OsString| vars.push((name, value));
    for Toolchain { name, path } in toolchains {
        match *name {
            "rustup" => {
                set("RUSTUP_HOME", path.into());
                // A toolchain that is not installed cannot be fetched: say so at once.
                set("RUSTUP_AUTO_INSTALL", OsString::from("0"));
            }
            "cargo" => {
                if let Some(cargo_home) = cargo_home {
                    set("CARGO_HOME", cargo_home.own.clone().into());
                }
                set("CARGO_NET_OFFLINE", OsString::from("true"));
            }
            "nvm" => set("NVM_DIR", path.into()),
            "fnm" if path.ends_with("fnm") || path.ends_with(".fnm") => set("FNM_DIR", path.into()),
            "volta" => set("VOLTA_HOME", path.into()),
            "pyenv" => set("PYENV_ROOT", path.into()),
            "pipx" => set("PIPX_HOME", path.into()),
            "uv" => set("UV_PYTHON_INSTALL_DIR", path.join("python").into()),
            "sdkman" => set("SDKMAN_DIR", path.into()),
            "go" if settings.host.var("GOROOT").as_deref() == Some(path.as_path()) => {
                set("GOROOT", path.into())
            }
            "go" => {
                set("GOPATH", path.into());
                set("GOMODCACHE", path.join("pkg/mod").into());
            }
            "java" => set("JAVA_HOME", path.into()),
            "bun" => set("BUN_INSTALL", path.into()),
            _ => {}
        }
    }
    vars
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn lab() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        (dir, base)
    }

    #[test]
    fn toolchains_are_readable_their_secrets_hidden_and_their_bins_on_the_path() {
        let (_dir, base) = lab();
        let home = base.join("home");
        for folder in [
            ".cargo/bin",
            ".cargo/registry",
            ".rustup/toolchains",
            ".ssh",
            "notes",
        ] {
            std::fs::create_dir_all(home.join(folder)).unwrap();
        }
        std::fs::write(home.join(".cargo/credentials.toml"), "token").unwrap();
        std::fs::write(home.join("notes/todo.txt"), "x").unwrap();
        let workspace = base.join("ws");
        let temp = base.join("tmp");
        let settings = SandboxSettings {
            read_only_folders: vec![PathBuf::from("~/notes"), PathBuf::from("~/missing")],
            network_commands: Vec::new(),
            cache_root: Some(base.join("data/sandbox-cache")),
            host: HostEnv {
                home: Some(home.clone()),
                path: Some(
                    std::env::join_paths([
                        home.join(".cargo/bin"),
                        home.join("private/bin"),
                        workspace.join("bin"),
                        PathBuf::from("/usr/bin"),
                    ])
                    .unwrap(),
                ),
                vars: Default::default(),
            },
        };
        let reach = command_reach(
            &settings,
            &workspace,
            true,
            &temp,
            std::slice::from_ref(&workspace),
        );
        let readable: Vec<&Path> = reach
            .grants
            .iter()
            .filter(|grant| matches!(grant.reason, Reason::Toolchain(_) | Reason::Extra))
            .map(|grant| grant.path.as_path())
            .collect();
        assert!(readable.contains(&home.join(".cargo/bin").as_path()));
        assert!(readable.contains(&home.join(".rustup/toolchains").as_path()));
        assert!(readable.contains(&home.join("notes/todo.txt").as_path()));
        assert!(
            !readable
                .iter()
                .any(|path| path.starts_with(home.join(".ssh")))
        );
        assert!(!readable.contains(&home.as_path()));
        assert!(
            !readable
                .iter()
                .any(|path| path.ends_with("credentials.toml"))
        );
        assert_eq!(
            reach
                .hidden
                .iter()
                .map(|hidden| hidden.path.clone())
                .collect::<Vec<_>>(),
            [home.join(".cargo/credentials.toml")]
        );
        assert_eq!(reach.skipped[0].path, home.join("missing"));
        let env = |name: &str| {
            reach
                .env
                .iter()
                .find(|(known, _)| known == name)
                .map(|(_, value)| value.clone())
        };
        assert_eq!(
            env("PATH"),
            Some(
                std::env::join_paths([home.join(".cargo/bin"), PathBuf::from("/usr/bin")]).unwrap()
            )
        );
        assert_eq!(env("RUSTUP_HOME"), Some(home.join(".rustup").into()));
        assert_eq!(
            env("CARGO_HOME"),
            Some(reach.cache.join("cargo-home").into())
        );
        assert_eq!(env("HOME"), Some(temp.clone().into()));
        assert!(reach.cache.starts_with(base.join("data/sandbox-cache")));
        assert!(reach.grants.contains(&Grant {
            path: reach.cache.clone(),
            access: Access::Write,
            reason: Reason::Cache
        }));
    }

    #[test]
    fn the_cache_folder_is_stable_per_workspace() {
        let settings = SandboxSettings {
            read_only_folders: Vec::new(),
            network_commands: Vec::new(),
            cache_root: Some(PathBuf::from("/data/cache")),
            host: HostEnv::default(),
        };
        let a = settings.cache_folder(Path::new("/w/my project"), Path::new("/t"));
        assert_eq!(
            a,
            settings.cache_folder(Path::new("/w/my project"), Path::new("/t2"))
        );
        assert_ne!(
            a,
            settings.cache_folder(Path::new("/v/my project"), Path::new("/t"))
        );
        assert!(
            a.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("my_project-")
        );
    }
}
