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
    let extensions = cfg!(windows).then(|| program_extensions(std::env::var_os("PATHEXT")));
    resolve_with(command, path, cwd, extensions.as_deref())
}

/// The endings Windows tries on a bare command name, from `PATHEXT` (`.COM;.EXE;.BAT;.CMD`
/// when it is unset or empty).
fn program_extensions(pathext: Option<OsString>) -> Vec<String> {
    let pathext = pathext
        .map(|value| value.to_string_lossy().into_owned())
        .filter(|value| !value.trim().is_empty())
        .unwrap_or_else(|| ".COM;.EXE;.BAT;.CMD".to_string());
    pathext
        .split(';')
        .map(str::trim)
        .filter(|ext| ext.starts_with('.') && ext.len() > 1)
        .map(str::to_string)
        .collect()
}

/// [`resolve_program`] with the platform's rule given: `extensions` is `None` where a program
/// is a file with an execute bit (Unix), and the `PATHEXT` endings on Windows, where `npx` is
/// found as `npx.cmd` and the extensionless `npx` script beside it (for Git's bash) is no
/// program. Kept apart so that the Windows rule is tested on every system.
fn resolve_with(
    command: &str,
    path: Option<&OsStr>,
    cwd: &Path,
    extensions: Option<&[String]>,
) -> PathBuf {
    let plain = Path::new(command);
    if plain.components().count() > 1 {
        return if plain.is_absolute() {
            plain.to_path_buf()
        } else {
            cwd.join(plain)
        };
    }
    if let Some(path) = path {
        for folder in std::env::split_paths(path) {
            let found = match extensions {
                None => Some(folder.join(command)).filter(|candidate| is_executable(candidate)),
                Some(extensions) => windows_candidate(&folder, command, extensions),
            };
            if let Some(found) = found {
                return found;
            }
        }
    }
    plain.to_path_buf()
}

/// The program `command` names in `folder` by Windows' rule: the name as given when it already
/// ends in one of `extensions` (in any case), else the name with each of them in turn.
fn windows_candidate(folder: &Path, command: &str, extensions: &[String]) -> Option<PathBuf> {
    let has_extension = extensions.iter().any(|ext| {
        command.len() > ext.len()
            && command
                .get(command.len() - ext.len()..)
                .is_some_and(|end| end.eq_ignore_ascii_case(ext))
    });
    if has_extension {
        let candidate = folder.join(command);
        return candidate.is_file().then_some(candidate);
    }
    extensions
        .iter()
        .map(|ext| folder.join(format!("{command}{ext}")))
        .find(|candidate| candidate.is_file())
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// Never asked outside Unix ([`resolve_program`] gives Windows its extensions).
#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
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

    /// `PATHEXT` in lower case: Windows finds `npx.cmd` for `.CMD` in any case, the file
    /// system these tests run on tells the two apart.
    fn windows_extensions() -> Vec<String> {
        program_extensions(Some(OsString::from(".com;.exe;.bat;.cmd")))
    }

    #[test]
    fn npx_is_found_as_its_cmd_shim_by_the_windows_rule() {
        let dir = tempfile::tempdir().unwrap();
        let node = dir.path().join("nodejs");
        std::fs::create_dir(&node).unwrap();
        // What Node's Windows installer puts side by side: a script for Git's bash and the shim.
        std::fs::write(node.join("npx"), "#!/bin/sh\n").unwrap();
        std::fs::write(node.join("npx.cmd"), "@echo off\r\n").unwrap();
        std::fs::write(node.join("node.exe"), "MZ").unwrap();
        let empty = dir.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        let path = std::env::join_paths([&empty, &node]).unwrap();
        let exts = windows_extensions();
        let found = |command: &str| resolve_with(command, Some(&path), dir.path(), Some(&exts));
        assert_eq!(found("npx"), node.join("npx.cmd"));
        assert_eq!(found("node"), node.join("node.exe"));
        // Named with its ending, it is taken as it is, whatever the case of either.
        assert_eq!(found("npx.cmd"), node.join("npx.cmd"));
        std::fs::write(node.join("Setup.CMD"), "").unwrap();
        let lower = program_extensions(Some(OsString::from(".exe;.cmd")));
        assert_eq!(
            resolve_with("Setup.CMD", Some(&path), dir.path(), Some(&lower)),
            node.join("Setup.CMD")
        );
        // Not found: left bare, so the start fails with "was not found".
        assert_eq!(found("uvx"), PathBuf::from("uvx"));
    }

    #[test]
    fn the_first_folder_of_the_path_with_the_program_wins_by_the_windows_rule() {
        let dir = tempfile::tempdir().unwrap();
        let (first, second) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir(&first).unwrap();
        std::fs::create_dir(&second).unwrap();
        std::fs::write(first.join("uvx.cmd"), "").unwrap();
        std::fs::write(second.join("uvx.exe"), "").unwrap();
        let path = std::env::join_paths([&first, &second]).unwrap();
        let found = resolve_with("uvx", Some(&path), dir.path(), Some(&windows_extensions()));
        assert_eq!(found, first.join("uvx.cmd"));
    }

    #[test]
    fn pathext_gives_the_endings_tried_and_has_a_default() {
        assert_eq!(
            program_extensions(Some(OsString::from(".EXE; .CMD;;bad;."))),
            [".EXE", ".CMD"]
        );
        assert_eq!(program_extensions(None), [".COM", ".EXE", ".BAT", ".CMD"]);
        assert_eq!(
            program_extensions(Some(OsString::from(" "))),
            [".COM", ".EXE", ".BAT", ".CMD"]
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
