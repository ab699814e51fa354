//! The hard deny list: commands refused even when the user would approve them.
//!
//! Words are read loosely here (quotes dropped, `$IFS` as a space, `$HOME` as `~`) so that the
//! usual disguises still match, and every command in the tree is checked: inside pipelines,
//! substitutions, subshells, function bodies, after wrappers such as `env` or `xargs`, and in
//! the script of `bash -c` or `eval`.

use tree_sitter::{Node, Tree};

use super::syntax::{loose, parse, text};

/// Nesting of `bash -c "…"` followed before giving up (and refusing).
const MAX_DEPTH: usize = 4;

const PRIVILEGE: &str = "`sudo` and other ways to change user are never run";
const POWER: &str = "shutting down or rebooting the machine is never allowed";
const FORMAT: &str = "formatting disks is never allowed";
const DEVICE: &str = "writing to a disk device is never allowed";
const RM_ROOT: &str =
    "removing the root folder, a system folder or the home folder is never allowed";
const CHMOD_ROOT: &str =
    "changing owners or permissions of the root or home folder recursively is never allowed";
const FORK_BOMB: &str = "fork bombs are never run";

/// Why the command is refused, if it is.
pub(crate) fn check(source: &str, tree: Option<&Tree>, depth: usize) -> Option<String> {
    if depth > MAX_DEPTH {
        return Some("the command nests shells too deeply to be checked".to_string());
    }
    if is_fork_bomb(source) {
        return Some(FORK_BOMB.to_string());
    }
    match tree {
        Some(tree) => {
            let root = tree.root_node();
            let found = check_node(root, source.as_bytes(), depth);
            if found.is_some() || !root.has_error() {
                return found;
            }
            // Part of the command did not parse: check it as text too, split at every shell
            // separator, so that a syntax error cannot hide a denied command.
            check_text(source, depth)
        }
        None => check_text(source, depth),
    }
}

fn check_node(node: Node<'_>, source: &[u8], depth: usize) -> Option<String> {
    match node.kind() {
        "command" => {
            // The span from the program name to its last argument, read loosely as a whole:
            // the grammar splits words like `-rf$IFS/` at odd places.
            let mut start = None;
            let mut end = None;
            let mut cursor = node.walk();
            for (index, child) in node.children(&mut cursor).enumerate() {
                if matches!(
                    node.field_name_for_child(index as u32),
                    Some("name" | "argument")
                ) {
                    start = start.or(Some(child.start_byte()));
                    end = Some(child.end_byte());
                }
            }
            if let (Some(start), Some(end)) = (start, end) {
                let span = source.get(start..end).unwrap_or_default();
                let words = split_loose(&String::from_utf8_lossy(span));
                if let Some(reason) = check_words(&words, depth) {
                    return Some(reason);
                }
            }
        }
        "file_redirect" => {
            let is_input = {
                let mut cursor = node.walk();
                node.children(&mut cursor)
                    .any(|child| !child.is_named() && text(child, source).starts_with('<'))
            };
            if !is_input
                && let Some(destination) = node.child_by_field_name("destination")
                && is_disk_device(&loose(text(destination, source)))
            {
                return Some(DEVICE.to_string());
            }
        }
        _ => {}
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if let Some(reason) = check_node(child, source, depth) {
            return Some(reason);
        }
    }
    None
}

fn check_text(source: &str, depth: usize) -> Option<String> {
    let separators = [';', '&', '|', '\n', '(', ')', '`', '{', '}'];
    for segment in source.replace("$(", "(").split(separators.as_slice()) {
        let words: Vec<String> = segment.split_whitespace().flat_map(split_loose).collect();
        if let Some(reason) = check_words(&words, depth) {
            return Some(reason);
        }
        if let Some(target) = segment.split('>').nth(1)
            && is_disk_device(&loose(target.trim()))
        {
            return Some(DEVICE.to_string());
        }
    }
    None
}

fn split_loose(raw: &str) -> Vec<String> {
    loose(raw).split_whitespace().map(str::to_string).collect()
}

/// Checks one simple command given as loose words, looking through wrappers.
fn check_words(words: &[String], depth: usize) -> Option<String> {
    let mut rest = words;
    // Leading `VAR=value` assignments.
    while let Some(first) = rest.first()
        && is_assignment(first)
    {
        rest = &rest[1..];
    }
    let (program, args) = rest.split_first()?;
    let name = basename(program);
    match name {
        "sudo" | "su" | "doas" | "pkexec" | "run0" | "sudoedit" => Some(PRIVILEGE.to_string()),
        "shutdown" | "reboot" | "halt" | "poweroff" => Some(POWER.to_string()),
        "init" | "telinit" if args.iter().any(|a| a == "0" || a == "6") => Some(POWER.to_string()),
        "systemctl"
            if args
                .iter()
                .any(|a| matches!(a.as_str(), "poweroff" | "reboot" | "halt" | "kexec")) =>
        {
            Some(POWER.to_string())
        }
        "mke2fs" | "mkswap" | "wipefs" => Some(FORMAT.to_string()),
        _ if name.starts_with("mkfs") => Some(FORMAT.to_string()),
        "dd" if args.iter().any(|a| {
            a.strip_prefix("of=")
                .is_some_and(|target| target.starts_with("/dev/") && !is_harmless_device(target))
        }) =>
        {
            Some(DEVICE.to_string())
        }
        "rm" if is_recursive(args)
            && (args.iter().any(|a| a == "--no-preserve-root")
                || args.iter().any(|a| is_precious(a))) =>
        {
            Some(RM_ROOT.to_string())
        }
        "chmod" | "chown" | "chgrp"
            if is_recursive(args) && args.iter().any(|a| is_precious(a)) =>
        {
            Some(CHMOD_ROOT.to_string())
        }
        // `find / -delete`, `find ~ -exec rm …`.
        "find"
            if args
                .iter()
                .any(|a| a == "-delete" || a == "-exec" || a == "-execdir")
                && args
                    .iter()
                    .take_while(|a| !a.starts_with('-'))
                    .any(|a| is_precious(a)) =>
        {
            Some(RM_ROOT.to_string())
        }
        "cp" | "mv" | "tee" | "shred" | "truncate" | "blkdiscard"
            if args.iter().any(|a| is_disk_device(a)) =>
        {
            Some(DEVICE.to_string())
        }
        "bash" | "sh" | "zsh" | "dash" | "ksh" | "mksh" | "fish" | "busybox" | "eval" => {
            // The script of `bash -c SCRIPT` (or everything after `eval`) is a command too.
            let script = if name == "eval" {
                Some(args.join(" "))
            } else {
                args.iter()
                    .position(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('c'))
                    .map(|at| args[at + 1..].join(" "))
            };
            match script {
                Some(script) => check(&script, parse(&script).as_ref(), depth + 1),
                // `busybox rm -rf /` and the like.
                None if name == "busybox" => check_words(args, depth),
                None => None,
            }
        }
        _ => {
            let skipped = wrapped(name, args)?;
            check_words(skipped, depth)
        }
    }
}

/// The command a wrapper runs (`env X=1 rm …`, `xargs -0 rm …`, `timeout 5 rm …`), if `name`
/// is a wrapper.
fn wrapped<'a>(name: &str, args: &'a [String]) -> Option<&'a [String]> {
    // Options of each wrapper that take a separate value.
    let valued: &[&str] = match name {
        "env" => &["-u", "--unset", "-C", "--chdir", "-S", "--split-string"],
        "nice" => &["-n", "--adjustment"],
        "timeout" => &["-s", "--signal", "-k", "--kill-after"],
        "xargs" => &["-I", "-n", "-P", "-d", "-E", "-L", "-s", "-a", "--arg-file"],
        "ionice" => &["-c", "-n", "-p"],
        "stdbuf" | "nohup" | "command" | "exec" | "builtin" | "time" | "then" | "do" | "else"
        | "chroot" | "unshare" | "setsid" | "flock" | "watch" => &[],
        _ => return None,
    };
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if arg == "--" {
            i += 1;
            break;
        }
        if arg.starts_with('-') {
            i += if valued.contains(&arg.as_str()) { 2 } else { 1 };
        } else if name == "env" && is_assignment(arg) {
            i += 1;
        } else {
            break;
        }
    }
    // `timeout DURATION cmd`, `chroot DIR cmd`, `flock FILE cmd`.
    if matches!(name, "timeout" | "chroot" | "flock") {
        i += 1;
    }
    args.get(i..)
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

fn is_recursive(args: &[String]) -> bool {
    args.iter().any(|a| {
        a == "--recursive"
            || (a.starts_with('-') && !a.starts_with("--") && (a.contains('r') || a.contains('R')))
    })
}

/// The root folder, a folder directly below it, or the home folder (`/`, `/*`, `/usr`, `~`,
/// `~/`, `~/*`, `$HOME` read as `~`).
fn is_precious(target: &str) -> bool {
    if target.starts_with('-') {
        return false;
    }
    let mut path = target;
    loop {
        let trimmed = path
            .strip_suffix("/*")
            .or_else(|| path.strip_suffix("/."))
            .or_else(|| path.strip_suffix('/'))
            .or_else(|| (path.len() > 1).then(|| path.strip_suffix('*')).flatten());
        match trimmed {
            Some(shorter) => path = shorter,
            None => break,
        }
    }
    if path.is_empty() || path == "~" || path == "/" || path == "*" && target.starts_with('/') {
        return true;
    }
    if let Some(home_user) = path.strip_prefix('~') {
        // `~user`, or a climb out of the home folder (`~/..`).
        return !home_user.contains('/') || home_user.split('/').any(|part| part == "..");
    }
    // The home folder written out in full.
    if let Some(home) = std::env::var_os("HOME")
        && !home.is_empty()
        && std::path::Path::new(path) == std::path::Path::new(&home)
    {
        return true;
    }
    match path.strip_prefix('/') {
        Some(below) => {
            let parts: Vec<&str> = below
                .split('/')
                .filter(|p| !p.is_empty() && *p != ".")
                .collect();
            parts.len() <= 1 || parts.contains(&"..")
        }
        None => false,
    }
}

fn is_harmless_device(target: &str) -> bool {
    matches!(
        target,
        "/dev/null" | "/dev/zero" | "/dev/stdout" | "/dev/stderr" | "/dev/tty"
    )
}

fn is_disk_device(target: &str) -> bool {
    const DISKS: [&str; 11] = [
        "/dev/sd",
        "/dev/hd",
        "/dev/vd",
        "/dev/xvd",
        "/dev/nvme",
        "/dev/mmcblk",
        "/dev/disk",
        "/dev/mem",
        "/dev/kmem",
        "/dev/port",
        "/dev/dm-",
    ];
    DISKS.iter().any(|disk| target.starts_with(disk))
}

/// `:(){ :|:& };:` and its renamings: a function whose body pipes into itself.
fn is_fork_bomb(source: &str) -> bool {
    let compact: String = source.chars().filter(|c| !c.is_whitespace()).collect();
    let mut search = compact.as_str();
    while let Some(at) = search.find("(){") {
        let before = &search[..at];
        let name_start = before
            .rfind([';', '&', '|', '(', ')', '{', '}', '\n'])
            .map(|i| i + 1)
            .unwrap_or(0);
        let name = before[name_start..].trim_start_matches("function");
        let body = &search[at + 3..];
        if !name.is_empty()
            && (body.contains(&format!("{name}|{name}")) || body.contains(&format!("{name}&")))
        {
            return true;
        }
        search = body;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precious_targets() {
        for target in [
            "/", "/*", "//", "/.", "~", "~/", "~/*", "~root", "/usr", "/etc/", "/home/*", "/..",
            "/usr/..",
        ] {
            assert!(is_precious(target), "{target}");
        }
        for target in [
            "build",
            "./target",
            "/tmp/x/y",
            "~/project/build",
            "-rf",
            "*",
        ] {
            assert!(!is_precious(target), "{target}");
        }
    }

    #[test]
    fn fork_bombs() {
        assert!(is_fork_bomb(":(){ :|:& };:"));
        assert!(is_fork_bomb("bomb() { bomb | bomb & }; bomb"));
        assert!(is_fork_bomb("function f(){ f|f& }; f"));
        assert!(!is_fork_bomb("f() { echo hi; }; f"));
    }
}
