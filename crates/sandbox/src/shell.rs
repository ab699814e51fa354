//! Which bash runs a command. On Linux and macOS it is the `bash` on the `PATH`. On Windows it
//! is Git for Windows' bash, the one Windows developers have: beside the `git` on the `PATH`
//! (`…\Git\cmd\git.exe` → `…\Git\bin\bash.exe`), else in its usual install folders. Never
//! `C:\Windows\System32\bash.exe`, which is WSL's: it would run the command in a Linux of its
//! own, on another file system, outside every limit set here. Without Git for Windows a command
//! fails with a sentence saying what to install.
//!
//! The search is portable and tested everywhere; only its inputs are Windows' (see
//! [`Places::from_env`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// What the search looks at: the `PATH`, and the folders programs are installed in.
#[derive(Debug, Clone, Default)]
pub struct Places {
    /// The folders of `PATH`, in order.
    pub path: Vec<PathBuf>,
    /// `%ProgramFiles%`, `%ProgramW6432%`, `%ProgramFiles(x86)%`.
    pub program_files: Vec<PathBuf>,
    /// `%LOCALAPPDATA%` (a per-user install goes in `Programs\Git`).
    pub local_app_data: Option<PathBuf>,
}

impl Places {
    /// This process's.
    pub fn from_env() -> Self {
        let var = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
        Self {
            path: var("PATH")
                .map(|path| std::env::split_paths(&path).collect())
                .unwrap_or_default(),
            program_files: ["ProgramFiles", "ProgramW6432", "ProgramFiles(x86)"]
                .into_iter()
                .filter_map(var)
                .map(PathBuf::from)
                .collect(),
            local_app_data: var("LOCALAPPDATA").map(PathBuf::from),
        }
    }

    /// Git for Windows' `bash.exe`, where `exists` finds one; else the sentence a command
    /// fails with.
    pub fn git_bash(&self, exists: impl Fn(&Path) -> bool) -> Result<PathBuf, String> {
        let beside_git = self.path.iter().filter_map(|folder| {
            let git = folder.join("git.exe");
            // `…\Git\cmd\git.exe` or `…\Git\bin\git.exe`: the install's root is the parent.
            exists(&git).then(|| {
                folder
                    .parent()
                    .map(|root| root.join("bin").join("bash.exe"))
            })?
        });
        let installed = self
            .program_files
            .iter()
            .map(|folder| folder.join("Git"))
            .chain(
                self.local_app_data
                    .iter()
                    .map(|folder| folder.join("Programs").join("Git")),
            )
            .map(|root| root.join("bin").join("bash.exe"));
        let mut looked: Vec<PathBuf> = Vec::new();
        for candidate in beside_git.chain(installed) {
            if exists(&candidate) {
                return Ok(candidate);
            }
            if !looked.contains(&candidate) {
                looked.push(candidate);
            }
        }
        let looked: Vec<String> = looked
            .iter()
            .map(|path| path.display().to_string())
            .collect();
        Err(format!(
            "commands on Windows run in Git for Windows' bash, and none was found ({}); install Git for Windows from https://git-scm.com/download/win and ask again",
            if looked.is_empty() {
                "no git on the PATH and no Program Files folder".to_string()
            } else {
                format!("looked for {}", looked.join(", "))
            }
        ))
    }
}

/// The bash a command runs in on this system, or why there is none.
pub fn bash() -> Result<OsString, String> {
    if cfg!(windows) {
        Places::from_env()
            .git_bash(Path::is_file)
            .map(PathBuf::into_os_string)
    } else {
        Ok(OsString::from("bash"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn places(root: &Path) -> Places {
        Places {
            path: vec![root.join("Windows/System32"), root.join("Tools/Git/cmd")],
            program_files: vec![root.join("Program Files"), root.join("Program Files (x86)")],
            local_app_data: Some(root.join("Users/me/AppData/Local")),
        }
    }

    #[test]
    fn git_for_windows_bash_is_found_beside_git_then_where_it_is_installed() {
        let root = Path::new("/c");
        let on = |files: &'static [&'static str]| {
            move |path: &Path| files.iter().any(|file| root.join(file) == path)
        };
        // Beside the git on the PATH, wherever it was installed.
        let found = places(root).git_bash(on(&["Tools/Git/cmd/git.exe", "Tools/Git/bin/bash.exe"]));
        assert_eq!(found.unwrap(), root.join("Tools/Git/bin/bash.exe"));
        // Else in Program Files, then the per-user install.
        let found = places(root).git_bash(on(&["Program Files (x86)/Git/bin/bash.exe"]));
        assert_eq!(
            found.unwrap(),
            root.join("Program Files (x86)/Git/bin/bash.exe")
        );
        let found =
            places(root).git_bash(on(&["Users/me/AppData/Local/Programs/Git/bin/bash.exe"]));
        assert_eq!(
            found.unwrap(),
            root.join("Users/me/AppData/Local/Programs/Git/bin/bash.exe")
        );
    }

    #[test]
    fn wsl_bash_is_never_taken_and_no_git_is_a_sentence() {
        let root = Path::new("/c");
        // WSL's bash in System32 (on the PATH) is not Git's.
        let wsl = |path: &Path| path == root.join("Windows/System32/bash.exe");
        let error = places(root).git_bash(wsl).unwrap_err();
        assert!(
            error.starts_with(
                "commands on Windows run in Git for Windows' bash, and none was found (looked for "
            ),
            "{error}"
        );
        assert!(
            error.contains(
                &root
                    .join("Program Files/Git/bin/bash.exe")
                    .display()
                    .to_string()
            ),
            "{error}"
        );
        assert!(
            error.ends_with(
                "install Git for Windows from https://git-scm.com/download/win and ask again"
            ),
            "{error}"
        );
        assert!(!error.contains("System32"), "{error}");
        let nothing = Places::default().git_bash(|_| true);
        assert!(nothing.unwrap_err().contains("no git on the PATH"));
    }

    #[cfg(not(windows))]
    #[test]
    fn elsewhere_it_is_the_bash_on_the_path() {
        assert_eq!(bash().unwrap(), OsString::from("bash"));
    }
}
