//! Secrets a command never sees, even inside a folder it may read.
//!
//! Landlock only allows, it cannot carve a hole into an allowed folder. So an allowed folder
//! (a toolchain's, or one the user added) is never allowed whole: its entries are allowed one
//! by one, secrets left out, and a sub-folder that holds a secret is split the same way, down
//! to the secret. Entries created later at a split level (a `cargo login` writing
//! `~/.cargo/credentials.toml`) are covered by no rule, so they stay invisible too.
//!
//! Secrets are found by name anywhere (`.ssh`, `.netrc`, `credentials.toml`, shell histories,
//! ...), by their place in the home folder (`.config/gh`, keychains, browser profiles), and by a
//! bounded look inside each allowed folder, so that a credential file a few levels down (an npm
//! `etc/npmrc` inside an nvm Node) is found too. What the look does not reach (past
//! [`SCAN_DEPTH`] levels, or past [`SCAN_BUDGET`] folders, or inside a folder of more than
//! [`SCAN_WIDE`] entries, such as a package registry) is matched by name only when it sits at
//! a split level.

use std::path::{Path, PathBuf};

/// File and folder names that hold credentials, keys or private history wherever they are,
/// with what they are in words.
const SECRET_NAMES: &[(&str, &str)] = &[
    (".ssh", "SSH keys"),
    (".gnupg", "GnuPG keys"),
    (".aws", "AWS credentials"),
    (".azure", "Azure credentials"),
    (".kube", "Kubernetes credentials"),
    (".docker", "Docker registry logins"),
    (".password-store", "pass passwords"),
    (".netrc", "netrc logins"),
    ("_netrc", "netrc logins"),
    (".git-credentials", "git credentials"),
    (".npmrc", "npm tokens"),
    ("npmrc", "npm tokens"),
    (".yarnrc.yml", "yarn tokens"),
    (".pypirc", "PyPI tokens"),
    (".pgpass", "PostgreSQL passwords"),
    (".my.cnf", "MySQL passwords"),
    ("credentials", "credentials"),
    ("credentials.toml", "credentials"),
    (".credentials", "credentials"),
    (".bash_history", "shell history"),
    (".zsh_history", "shell history"),
    (".zhistory", "shell history"),
    (".history", "shell history"),
    ("fish_history", "shell history"),
    (".python_history", "shell history"),
    (".node_repl_history", "shell history"),
    (".psql_history", "shell history"),
    (".mysql_history", "shell history"),
    (".sqlite_history", "shell history"),
    (".lesshst", "shell history"),
    (".viminfo", "editor history"),
    (".mozilla", "browser profiles"),
    ("keyrings", "keychains"),
    ("Keychains", "keychains"),
];

/// Places in the home folder that hold secrets under names too common to hide everywhere.
const SECRET_HOME_PATHS: &[(&str, &str)] = &[
    (".config/gh", "GitHub CLI token"),
    (".config/hub", "GitHub CLI token"),
    (".config/glab-cli", "GitLab CLI token"),
    (".config/gcloud", "Google Cloud credentials"),
    (".config/op", "1Password CLI"),
    (".config/git/credentials", "git credentials"),
    (".config/google-chrome", "browser profiles"),
    (".config/chromium", "browser profiles"),
    (".config/BraveSoftware", "browser profiles"),
    (".config/microsoft-edge", "browser profiles"),
    (".config/vivaldi", "browser profiles"),
    (".config/opera", "browser profiles"),
    (".local/share/keyrings", "keychains"),
    (".local/share/fish/fish_history", "shell history"),
    ("snap/firefox", "browser profiles"),
    ("snap/chromium", "browser profiles"),
    (".var/app/org.mozilla.firefox", "browser profiles"),
    (".var/app/com.google.Chrome", "browser profiles"),
    ("Library/Keychains", "keychains"),
    ("Library/Cookies", "browser cookies"),
    (
        "Library/Application Support/Google/Chrome",
        "browser profiles",
    ),
    ("Library/Application Support/Firefox", "browser profiles"),
    (
        "Library/Application Support/BraveSoftware",
        "browser profiles",
    ),
    ("Library/Safari", "browser profiles"),
    ("AppData/Roaming/Mozilla", "browser profiles"),
    ("AppData/Local/Google/Chrome", "browser profiles"),
];

/// Levels below an allowed folder that the look for secrets reaches.
pub(crate) const SCAN_DEPTH: usize = 6;
/// Folders the look reads, at most, per allowed folder.
pub(crate) const SCAN_BUDGET: usize = 500;
/// A folder with more entries than this (a package registry, a build tree) is not looked into.
pub(crate) const SCAN_WIDE: usize = 256;

/// A secret left out of an allowed folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hidden {
    pub path: PathBuf,
    /// What it is, e.g. `SSH keys`.
    pub what: &'static str,
}

/// What a name is, when it is a secret wherever it is.
pub(crate) fn secret_name(name: &str) -> Option<&'static str> {
    SECRET_NAMES
        .iter()
        .find(|(secret, _)| *secret == name)
        .map(|(_, what)| *what)
        .or_else(|| {
            // ~/.cargo/credentials, credentials.toml and whatever a later cargo names them.
            name.starts_with("credentials").then_some("credentials")
        })
        .or_else(|| name.ends_with("_history").then_some("shell history"))
}

/// The secrets at fixed places in `home`, whether or not they exist.
pub(crate) fn home_secrets(home: &Path) -> Vec<Hidden> {
    SECRET_HOME_PATHS
        .iter()
        .map(|(relative, what)| Hidden {
            path: home.join(relative),
            what,
        })
        .collect()
}

/// Allows `root` with secrets left out: `allow` is called for each path to allow whole, and
/// every secret found is returned. `known` are secrets at fixed places (see [`home_secrets`]).
pub(crate) fn allow_except_secrets(
    root: &Path,
    known: &[Hidden],
    allow: &mut dyn FnMut(PathBuf),
) -> Vec<Hidden> {
    let mut hidden = Vec::new();
    if let Some(what) = file_name_secret(root).or_else(|| known_secret(root, known)) {
        hidden.push(Hidden {
            path: root.to_path_buf(),
            what,
        });
        return hidden;
    }
    let mut found = Vec::new();
    scan(root, &mut found);
    let mut secrets: Vec<Hidden> = known.to_vec();
    secrets.extend(found);
    split(root, &secrets, allow, &mut hidden, true);
    hidden.sort_by(|a, b| a.path.cmp(&b.path));
    hidden.dedup_by(|a, b| a.path == b.path);
    hidden
}

fn file_name_secret(path: &Path) -> Option<&'static str> {
    path.file_name()
        .and_then(|name| name.to_str())
        .and_then(secret_name)
}

fn known_secret(path: &Path, known: &[Hidden]) -> Option<&'static str> {
    known
        .iter()
        .find(|secret| path.starts_with(&secret.path))
        .map(|secret| secret.what)
}

/// Allows the entries of `dir` one by one, leaving out secrets and splitting the folders that
/// hold one. `top`: the allowed folder itself, always split so that new entries stay hidden.
fn split(
    dir: &Path,
    secrets: &[Hidden],
    allow: &mut dyn FnMut(PathBuf),
    hidden: &mut Vec<Hidden>,
    top: bool,
) {
    let holds_secret = secrets
        .iter()
        .any(|secret| secret.path.starts_with(dir) && secret.path != dir);
    if !top && !holds_secret {
        allow(dir.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        // Not listable here: the command could not list it either; what lies below is
        // reached only by name, and names of secrets below were looked for above.
        if !holds_secret {
            allow(dir.to_path_buf());
        }
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if let Some(what) = file_name_secret(&path).or_else(|| known_secret(&path, secrets)) {
            hidden.push(Hidden { path, what });
            continue;
        }
        let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
        if is_dir {
            split(&path, secrets, allow, hidden, false);
        } else {
            // A symbolic link is allowed as the link: what it points to needs its own rule.
            allow(path);
        }
    }
}

/// Looks for secrets by name below `dir`, within the bounds above, level by level, so that
/// the bounds cut off the deepest folders first (an `etc/npmrc` four levels down is found
/// before the budget goes into a package tree).
fn scan(dir: &Path, found: &mut Vec<Hidden>) {
    let mut level = vec![dir.to_path_buf()];
    let mut budget = SCAN_BUDGET;
    for _ in 0..SCAN_DEPTH {
        let mut next = Vec::new();
        for dir in level {
            if budget == 0 {
                return;
            }
            budget -= 1;
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let entries: Vec<_> = entries.flatten().take(SCAN_WIDE + 1).collect();
            if entries.len() > SCAN_WIDE {
                continue;
            }
            for entry in entries {
                let path = entry.path();
                if let Some(what) = file_name_secret(&path) {
                    found.push(Hidden { path, what });
                } else if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                    next.push(path);
                }
            }
        }
        level = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn names_of_secrets_are_known_wherever_they_are() {
        for name in [
            ".ssh",
            ".netrc",
            "credentials",
            "credentials.toml",
            ".npmrc",
            ".pypirc",
            ".bash_history",
            ".zsh_history",
            ".git-credentials",
        ] {
            assert!(secret_name(name).is_some(), "{name}");
        }
        for name in ["bin", "registry", "env", "config.toml", "toolchains"] {
            assert_eq!(secret_name(name), None, "{name}");
        }
    }

    #[test]
    fn an_allowed_folder_is_split_around_its_secrets() {
        let dir = tempfile::tempdir().unwrap();
        let cargo = dir.path().join(".cargo");
        for folder in ["bin", "registry/src/x", "deep/a/b"] {
            std::fs::create_dir_all(cargo.join(folder)).unwrap();
        }
        for file in ["env", "credentials.toml", "deep/a/b/.npmrc", "deep/a/keep"] {
            std::fs::write(cargo.join(file), "x").unwrap();
        }
        let mut allowed = Vec::new();
        let hidden = allow_except_secrets(&cargo, &[], &mut |path| allowed.push(path));
        allowed.sort();
        let relative = |paths: Vec<PathBuf>| -> Vec<String> {
            paths
                .iter()
                .map(|path| path.strip_prefix(&cargo).unwrap().display().to_string())
                .collect()
        };
        assert_eq!(relative(allowed), ["bin", "deep/a/keep", "env", "registry"]);
        assert_eq!(
            relative(hidden.into_iter().map(|hidden| hidden.path).collect()),
            ["credentials.toml", "deep/a/b/.npmrc"]
        );
    }

    #[test]
    fn a_folder_that_is_itself_a_secret_is_not_allowed_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let ssh = dir.path().join(".ssh");
        std::fs::create_dir_all(&ssh).unwrap();
        let mut allowed = Vec::new();
        let hidden = allow_except_secrets(&ssh, &[], &mut |path| allowed.push(path));
        assert!(allowed.is_empty());
        assert_eq!(hidden.len(), 1);
        let gh = dir.path().join(".config/gh");
        std::fs::create_dir_all(&gh).unwrap();
        std::fs::create_dir_all(dir.path().join(".config/other")).unwrap();
        let known = home_secrets(dir.path());
        let mut allowed = Vec::new();
        let hidden = allow_except_secrets(&dir.path().join(".config"), &known, &mut |path| {
            allowed.push(path)
        });
        assert_eq!(allowed, [dir.path().join(".config/other")]);
        assert_eq!(hidden[0].path, gh);
    }
}
