//! Programs that only read, and the options that would make some of them write or run other
//! programs.

/// `Ok` when `program args…` only reads; otherwise why it needs approval.
pub(crate) fn check(program: &str, args: &[String]) -> Result<(), String> {
    match program {
        "ls" | "cat" | "head" | "tail" | "wc" | "cut" | "tr" | "file" | "stat" | "du" | "df"
        | "pwd" | "echo" | "printf" | "nl" | "tac" | "rev" | "paste" | "column" | "fold"
        | "expand" | "unexpand" | "join" | "comm" | "diff" | "cmp" | "basename" | "dirname"
        | "realpath" | "readlink" | "which" | "type" | "whoami" | "id" | "uname" | "true"
        | "false" | "seq" | "sleep" | "md5sum" | "sha1sum" | "sha224sum" | "sha256sum"
        | "sha384sum" | "sha512sum" | "b2sum" | "cksum" | "sum" | "strings" | "od" | "hexdump"
        | "grep" | "egrep" | "fgrep" | "jq" | "tokei" | "cloc" | "printenv" | "cd" | "nproc"
        | "locale" | "getconf" | "lsb_release" | "uptime" | "free" | "groups" | "cal" | "look"
        | "wait" => Ok(()),
        "sort" => refuse_options(
            program,
            args,
            &["-o", "--output"],
            "writes its output to a file",
        ),
        "tree" => refuse_options(program, args, &["-o"], "writes its output to a file"),
        "date" => refuse_options(program, args, &["-s", "--set"], "sets the clock"),
        "uniq" => {
            if positionals(args).len() > 1 {
                Err("`uniq` with two file names writes the second one".to_string())
            } else {
                Ok(())
            }
        }
        "find" => find(args),
        "rg" => refuse_options(program, args, &["--pre"], "runs a preprocessor program"),
        "fd" | "fdfind" => refuse_options(
            program,
            args,
            &["-x", "--exec", "-X", "--exec-batch"],
            "runs other programs",
        ),
        "sed" => sed(args),
        "git" => git(args),
        "python" | "python2" | "python3" | "node" | "nodejs" | "deno" | "bun" | "perl" | "ruby"
        | "php" | "lua" | "luajit" | "Rscript" | "R" | "julia" | "awk" | "gawk" | "mawk"
        | "nawk" | "bash" | "sh" | "zsh" | "dash" | "ksh" | "fish" | "csh" | "tcsh" | "pwsh"
        | "powershell" | "osascript" | "tclsh" | "expect" | "gdb" | "vim" | "vi" | "nvim"
        | "emacs" => Err(format!(
            "`{program}` is an interpreter and can run any code"
        )),
        "xargs" | "env" | "nice" | "nohup" | "timeout" | "exec" | "eval" | "command"
        | "builtin" | "time" | "watch" | "parallel" | "stdbuf" | "ionice" | "setsid" | "flock"
        | "chroot" | "unshare" | "source" | "." | "busybox" | "script" => {
            Err(format!("`{program}` runs other programs"))
        }
        "rm" | "rmdir" | "mv" | "cp" | "mkdir" | "touch" | "chmod" | "chown" | "chgrp" | "ln"
        | "tee" | "dd" | "truncate" | "install" | "shred" | "unlink" | "patch" | "tar"
        | "unzip" | "zip" | "gzip" | "gunzip" | "split" | "csplit" | "mkfifo" | "mknod" => {
            Err(format!("`{program}` can change files"))
        }
        "curl" | "wget" | "ssh" | "scp" | "rsync" | "nc" | "ncat" | "telnet" | "ftp" => {
            Err(format!("`{program}` uses the network"))
        }
        "kill" | "pkill" | "killall" => Err(format!("`{program}` stops other processes")),
        _ => Err(format!("`{program}` is not on the read-only list")),
    }
}

/// Refuses any of `options`, also written `--opt=value`, `-ovalue` or inside a cluster of
/// short options (`-uo`).
fn refuse_options(
    program: &str,
    args: &[String],
    options: &[&str],
    does: &str,
) -> Result<(), String> {
    for arg in args {
        if arg == "--" {
            break;
        }
        for option in options {
            let hit = if option.starts_with("--") {
                arg == option || arg.starts_with(&format!("{option}="))
            } else {
                let letter = option.trim_start_matches('-');
                arg.starts_with('-') && !arg.starts_with("--") && arg[1..].contains(letter)
            };
            if hit {
                return Err(format!("`{program} {option}` {does}"));
            }
        }
    }
    Ok(())
}

fn positionals(args: &[String]) -> Vec<&String> {
    let mut out = Vec::new();
    let mut options_done = false;
    for arg in args {
        if !options_done && arg == "--" {
            options_done = true;
        } else if options_done || !arg.starts_with('-') || arg == "-" {
            out.push(arg);
        }
    }
    out
}

fn find(args: &[String]) -> Result<(), String> {
    for arg in args {
        match arg.as_str() {
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                return Err(format!("`find {arg}` runs other programs"));
            }
            "-delete" => return Err("`find -delete` removes files".to_string()),
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" => {
                return Err(format!("`find {arg}` writes to a file"));
            }
            _ => {}
        }
    }
    Ok(())
}

/// `sed` reads unless it edits in place (`-i`) or its script writes (`w`, `W`) or executes
/// (`e`, the `e` flag of `s`). Scripts from files (`-f`) are not looked into.
fn sed(args: &[String]) -> Result<(), String> {
    let mut scripts = Vec::new();
    let mut explicit = false;
    let mut iter = args.iter().peekable();
    let mut first_positional = None;
    while let Some(arg) = iter.next() {
        if arg == "--in-place" || arg.starts_with("--in-place=") {
            return Err("`sed -i` edits files in place".to_string());
        }
        if arg == "-f" || arg.starts_with("--file") {
            return Err("`sed -f` runs a script from a file".to_string());
        }
        if arg == "-e" || arg == "--expression" {
            explicit = true;
            if let Some(script) = iter.next() {
                scripts.push(script.clone());
            }
            continue;
        }
        if let Some(script) = arg.strip_prefix("--expression=") {
            explicit = true;
            scripts.push(script.to_string());
            continue;
        }
        if arg.starts_with('-') && !arg.starts_with("--") && arg.len() > 1 {
            let letters = &arg[1..];
            if letters.contains('i') {
                return Err("`sed -i` edits files in place".to_string());
            }
            if letters.contains('f') {
                return Err("`sed -f` runs a script from a file".to_string());
            }
            if let Some(at) = letters.find('e') {
                explicit = true;
                let inline = &letters[at + 1..];
                if inline.is_empty() {
                    if let Some(script) = iter.next() {
                        scripts.push(script.clone());
                    }
                } else {
                    scripts.push(inline.to_string());
                }
            }
            continue;
        }
        if first_positional.is_none() && !arg.starts_with('-') {
            first_positional = Some(arg.clone());
        }
    }
    if !explicit && let Some(script) = first_positional {
        scripts.push(script);
    }
    for script in &scripts {
        sed_script(script)?;
    }
    Ok(())
}

fn sed_script(script: &str) -> Result<(), String> {
    let bytes = script.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            // Addresses, separators and blocks.
            b' '
            | b'\t'
            | b'\n'
            | b';'
            | b'{'
            | b'}'
            | b','
            | b'!'
            | b'$'
            | b'~'
            | b'+'
            | b'0'..=b'9' => i += 1,
            b'/' | b'\\' => {
                // A regex address: `/re/` or `\%re%`.
                let delimiter = if c == b'\\' {
                    i += 1;
                    bytes.get(i).copied().unwrap_or(b'/')
                } else {
                    b'/'
                };
                i = skip_delimited(bytes, i + 1, delimiter);
                // Flags of an address (`I`, `M`).
                while i < bytes.len() && matches!(bytes[i], b'I' | b'M') {
                    i += 1;
                }
            }
            b's' | b'y' => {
                let Some(&delimiter) = bytes.get(i + 1) else {
                    return Ok(());
                };
                i = skip_delimited(bytes, i + 2, delimiter);
                i = skip_delimited(bytes, i, delimiter);
                if c == b's' {
                    while i < bytes.len() && !matches!(bytes[i], b';' | b'\n' | b'}') {
                        match bytes[i] {
                            b'w' | b'W' => {
                                return Err("the `sed` script writes to a file".to_string());
                            }
                            b'e' => {
                                return Err("the `sed` script runs commands".to_string());
                            }
                            _ => i += 1,
                        }
                    }
                }
            }
            b'w' | b'W' => return Err("the `sed` script writes to a file".to_string()),
            b'e' => return Err("the `sed` script runs commands".to_string()),
            // Commands that take the rest of the line as text or a label.
            b'a' | b'i' | b'c' | b'b' | b't' | b'T' | b':' | b'r' | b'R' | b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'p' | b'P' | b'd' | b'D' | b'q' | b'Q' | b'n' | b'N' | b'g' | b'G' | b'h' | b'H'
            | b'x' | b'l' | b'=' | b'z' | b'F' => i += 1,
            other => {
                return Err(format!(
                    "the `sed` script uses `{}`, which is not known to only read",
                    other as char
                ));
            }
        }
    }
    Ok(())
}

/// Index just past the next unescaped `delimiter` from `start`.
fn skip_delimited(bytes: &[u8], mut i: usize, delimiter: u8) -> usize {
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            i += 2;
            continue;
        }
        if bytes[i] == delimiter {
            return i + 1;
        }
        i += 1;
    }
    i
}

fn git(args: &[String]) -> Result<(), String> {
    let i = git_global_options(args)?;
    let Some(sub) = args.get(i) else {
        return Ok(());
    };
    let rest = &args[i + 1..];
    // Options that write or run a program, whatever the subcommand.
    for arg in rest {
        if arg == "--output" || arg.starts_with("--output=") || arg == "-o" && sub == "archive" {
            return Err("`git --output` writes to a file".to_string());
        }
        if arg == "--ext-diff" || arg.starts_with("--exec") || arg.starts_with("--upload-pack") {
            return Err(format!("`git {sub} {arg}` runs other programs"));
        }
    }
    if git_subcommand_reads(sub, rest) {
        Ok(())
    } else {
        Err(format!(
            "`git {sub}` can change the repository or run other programs"
        ))
    }
}

/// Skips git's own options before the subcommand, refusing those that could run a program or
/// that are not known; the index of the subcommand.
fn git_global_options(args: &[String]) -> Result<usize, String> {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        match arg.as_str() {
            "--no-pager" | "-P" | "--no-optional-locks" | "--literal-pathspecs" | "--bare" => {
                i += 1;
            }
            "-C" => i += 2,
            _ if arg.starts_with("--git-dir=") || arg.starts_with("--work-tree=") => i += 1,
            "-c" | "--config-env" => {
                return Err("`git -c` can set options that run programs".to_string());
            }
            _ if arg.starts_with('-') => {
                return Err(format!("`git {arg}` is not known to only read"));
            }
            _ => break,
        }
    }
    Ok(i)
}

/// Whether `git sub rest...` only reads: some subcommands always do, others only in their
/// listing forms.
fn git_subcommand_reads(sub: &str, rest: &[String]) -> bool {
    let first = rest.first().map(String::as_str);
    match sub {
        "status" | "log" | "diff" | "show" | "ls-files" | "blame" | "annotate" | "rev-parse"
        | "describe" | "shortlog" | "ls-tree" | "cat-file" | "grep" | "rev-list"
        | "whatchanged" | "diff-tree" | "diff-files" | "diff-index" | "merge-base" | "name-rev"
        | "for-each-ref" | "count-objects" | "show-ref" | "show-branch" | "check-ignore"
        | "check-attr" | "version" | "var" | "cherry" | "range-diff" => true,
        "branch" => git_branch_reads(rest),
        "tag" => first.is_none() || matches!(first, Some("-l" | "--list")),
        "remote" => {
            rest.iter()
                .all(|a| matches!(a.as_str(), "-v" | "--verbose"))
                || matches!(first, Some("show" | "get-url"))
        }
        "config" => git_config_reads(rest),
        "stash" => matches!(first, Some("list" | "show")),
        "worktree" => matches!(first, Some("list")),
        "submodule" => matches!(first, Some("status")),
        "reflog" => matches!(first, None | Some("show")),
        "notes" => matches!(first, None | Some("list" | "show")),
        _ => false,
    }
}

/// `git branch` lists when it is given no name, or a listing option, and nothing that writes.
fn git_branch_reads(rest: &[String]) -> bool {
    const WRITES: [&str; 15] = [
        "-d",
        "-D",
        "-m",
        "-M",
        "-c",
        "-C",
        "-f",
        "-u",
        "--delete",
        "--move",
        "--copy",
        "--force",
        "--set-upstream-to",
        "--unset-upstream",
        "--edit-description",
    ];
    let listing = rest.iter().any(|a| {
        matches!(
            a.as_str(),
            "-l" | "--list"
                | "--contains"
                | "--no-contains"
                | "--merged"
                | "--no-merged"
                | "--points-at"
        )
    });
    !rest.iter().any(|a| WRITES.contains(&a.as_str())) && (listing || positionals(rest).is_empty())
}

/// `git config` reads with one of its getting options and none of its changing ones.
fn git_config_reads(rest: &[String]) -> bool {
    rest.iter().any(|a| {
        matches!(
            a.as_str(),
            "--get" | "--get-all" | "--get-regexp" | "--list" | "-l"
        )
    }) && !rest.iter().any(|a| {
        a.starts_with("--add")
            || a.starts_with("--unset")
            || a.starts_with("--replace")
            || a.starts_with("--rename")
            || a.starts_with("--remove")
            || a == "-e"
            || a == "--edit"
    })
}
