//! The environment a stdio server starts with: a short list of harmless variables (see
//! `passed_through.rs`), the login shell's PATH merged in, and what the config adds. Nothing
//! else of ours is inherited, so API keys in our environment (`TOOLTRAIL_API_KEY`, cloud
//! credentials) never reach a server.
//!
//! A desktop app started from a menu gets a minimal PATH without the folders where `npx`, `uvx`
//! or `node` live; the login shell's PATH has them, so it is asked once (with a time limit) and
//! its folders are appended to ours.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::sync::OnceCell;

use crate::passed_through::PASSED_THROUGH;
use crate::redact::ConfigValue;

/// How long the login shell may take to print its PATH.
const LOGIN_SHELL_TIMEOUT: Duration = Duration::from_secs(3);

static LOGIN_PATH: OnceCell<Option<OsString>> = OnceCell::const_new();

/// The login shell's PATH, asked once per process; `None` when there is no shell, it fails or it
/// takes too long.
pub async fn login_shell_path() -> Option<OsString> {
    LOGIN_PATH.get_or_init(ask_login_shell).await.clone()
}

#[cfg(unix)]
async fn ask_login_shell() -> Option<OsString> {
    use std::os::unix::ffi::OsStringExt;
    let shell = std::env::var_os("SHELL").filter(|shell| !shell.is_empty())?;
    // A marker separates the PATH from whatever the profile prints.
    let mut command = tokio::process::Command::new(shell);
    command
        .args(["-l", "-c", "printf '\\n__TOOLTRAIL_PATH__%s' \"$PATH\""])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    let output = tokio::time::timeout(LOGIN_SHELL_TIMEOUT, command.output())
        .await
        .ok()?
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let marker = b"__TOOLTRAIL_PATH__";
    let stdout = output.stdout;
    let start = stdout
        .windows(marker.len())
        .rposition(|window| window == marker)?
        + marker.len();
    let path = stdout[start..].to_vec();
    (!path.is_empty()).then(|| OsString::from_vec(path))
}

#[cfg(not(unix))]
async fn ask_login_shell() -> Option<OsString> {
    None
}

/// `ours` followed by the folders of `login` that `ours` lacks.
pub fn merge_paths(ours: Option<&OsStr>, login: Option<&OsStr>) -> Option<OsString> {
    let mut folders: Vec<PathBuf> = ours
        .map(|p| std::env::split_paths(p).collect())
        .unwrap_or_default();
    if let Some(login) = login {
        for folder in std::env::split_paths(login) {
            if !folders.contains(&folder) {
                folders.push(folder);
            }
        }
    }
    folders.retain(|folder| !folder.as_os_str().is_empty());
    if folders.is_empty() {
        return None;
    }
    std::env::join_paths(folders).ok()
}

/// The whole environment for a stdio server: passed-through variables, `path`, then `extra`
/// from the config (which may override any of them). The config's values are given expanded:
/// this is where they are meant to go.
pub fn server_env(
    path: Option<&OsStr>,
    extra: &BTreeMap<String, ConfigValue>,
) -> Vec<(OsString, OsString)> {
    let mut env: BTreeMap<OsString, OsString> = BTreeMap::new();
    for name in PASSED_THROUGH {
        if let Some(value) = std::env::var_os(name) {
            env.insert(OsString::from(name), value);
        }
    }
    if let Some(path) = path {
        env.insert(OsString::from("PATH"), path.to_os_string());
    }
    for (name, value) in extra {
        env.insert(OsString::from(name), OsString::from(value.expose()));
    }
    env.into_iter().collect()
}

/// Finds `command` in `path` the way a shell would (and, on Windows, finds `.cmd` and `.exe`
/// shims such as `npx.cmd`). A command with a folder in it is taken as it is.
pub fn resolve_program(command: &str, path: Option<&OsStr>, cwd: &Path) -> PathBuf {
    let plain = Path::new(command);
    if plain.components().count() > 1 {
        return if plain.is_absolute() {
            plain.to_path_buf()
        } else {
            cwd.join(plain)
        };
    }
    let extensions: Vec<String> = if cfg!(windows) {
        std::env::var("PATHEXT")
            .unwrap_or_else(|_| ".COM;.EXE;.BAT;.CMD".to_string())
            .split(';')
            .filter(|ext| !ext.is_empty())
            .map(str::to_string)
            .collect()
    } else {
        Vec::new()
    };
    if let Some(path) = path {
        for folder in std::env::split_paths(path) {
            let candidate = folder.join(command);
            if is_executable(&candidate) {
                return candidate;
            }
            for ext in &extensions {
                let candidate = folder.join(format!("{command}{ext}"));
                if candidate.is_file() {
                    return candidate;
                }
            }
        }
    }
    plain.to_path_buf()
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file() && path.extension().is_some()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn merged_path_keeps_ours_first_without_duplicates() {
        let sep = if cfg!(windows) { ";" } else { ":" };
        let ours = OsString::from(format!("/usr/bin{sep}/bin"));
        let login = OsString::from(format!("/opt/node/bin{sep}/usr/bin{sep}/home/u/.local/bin"));
        let merged = merge_paths(Some(&ours), Some(&login)).unwrap();
        let folders: Vec<PathBuf> = std::env::split_paths(&merged).collect();
        assert_eq!(
            folders,
            ["/usr/bin", "/bin", "/opt/node/bin", "/home/u/.local/bin"].map(PathBuf::from)
        );
        assert_eq!(merge_paths(None, None), None);
    }

    #[test]
    fn server_env_is_minimal_and_configured_values_win() {
        let extra = BTreeMap::from([
            ("HOME".to_string(), ConfigValue::plain("/elsewhere")),
            ("DEBUG".to_string(), ConfigValue::plain("1")),
        ]);
        let env = server_env(Some(OsStr::new("/bin")), &extra);
        let names: Vec<&OsStr> = env.iter().map(|(name, _)| name.as_os_str()).collect();
        for name in &names {
            let name = name.to_string_lossy();
            assert!(
                PASSED_THROUGH.contains(&name.as_ref()) || name == "PATH" || name == "DEBUG",
                "{name} leaked"
            );
        }
        let get = |wanted: &str| {
            env.iter()
                .find(|(name, _)| name == wanted)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(get("HOME"), Some(OsString::from("/elsewhere")));
        assert_eq!(get("PATH"), Some(OsString::from("/bin")));
        assert_eq!(get("DEBUG"), Some(OsString::from("1")));
    }

    #[cfg(unix)]
    #[test]
    fn programs_resolve_through_the_given_path() {
        let found = resolve_program(
            "sh",
            Some(OsStr::new("/nonexistent:/bin:/usr/bin")),
            Path::new("/"),
        );
        assert!(found.is_absolute(), "{}", found.display());
        assert_eq!(
            resolve_program("./x", None, Path::new("/w")),
            PathBuf::from("/w/./x")
        );
        assert_eq!(
            resolve_program("nope-nope", Some(OsStr::new("/bin")), Path::new("/")),
            PathBuf::from("nope-nope")
        );
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn login_shell_path_is_read_when_a_shell_exists() {
        if std::env::var_os("SHELL").is_none() {
            eprintln!("skipped: SHELL is not set");
            return;
        }
        // Whatever the profile prints, the answer is a PATH-like list or nothing.
        if let Some(path) = login_shell_path().await {
            assert!(!path.is_empty());
        }
    }
}
