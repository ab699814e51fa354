//! Opening a web page in the user's browser: the one way the app and the command line do it
//! (a sign-in's authorization page, a page an MCP server asks the user to visit).
//!
//! Only http and https addresses are opened, and the address always reaches the opener as one
//! argument of a program started directly, never through a shell: on Windows a `cmd /C start`
//! would cut the address at its first `&` and run what follows as a command. The address handed
//! over is the parsed URL's own serialization, in which spaces, quotes and control characters
//! are percent-encoded, so no command-line parser can split it either. Which program runs with
//! which arguments is worked out by [`system_launch`] and [`command_launch`], pure functions,
//! so every platform's construction is tested on any of them.

use reqwest::Url;

/// Why a page was not opened, as a sentence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LaunchError {
    /// Not an http or https address (a file, a script, a command-line option...).
    #[error(
        "the address was not opened: only web pages (http and https addresses) are opened in the browser"
    )]
    NotWeb,
    /// The `BROWSER` command names nothing to run.
    #[error("the browser command is empty")]
    EmptyCommand,
    /// The opener could not be started.
    #[error("the browser could not be opened ({program}: {reason})")]
    Start { program: String, reason: String },
}

/// The platforms whose system opener differs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Platform {
    /// `system_root` is the Windows folder (`%SystemRoot%`), where `rundll32.exe` is found
    /// without looking through `PATH`.
    Windows {
        system_root: String,
    },
    MacOs,
    /// Linux and the BSDs: the freedesktop opener.
    Unix,
}

impl Platform {
    /// The platform this build runs on.
    pub fn current() -> Self {
        if cfg!(windows) {
            Self::Windows {
                system_root: std::env::var("SystemRoot")
                    .unwrap_or_else(|_| r"C:\Windows".to_string()),
            }
        } else if cfg!(target_os = "macos") {
            Self::MacOs
        } else {
            Self::Unix
        }
    }
}

/// A program and its arguments, started directly (no shell).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    pub program: String,
    pub args: Vec<String>,
}

/// `url` as an address the browser may be given: an absolute http or https URL with a host,
/// written as it starts (no leading space or `-`). The result's text has its spaces, quotes and
/// control characters percent-encoded.
pub fn web_address(url: &str) -> Result<Url, LaunchError> {
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    if !(lower.starts_with("http://") || lower.starts_with("https://")) {
        return Err(LaunchError::NotWeb);
    }
    let parsed = Url::parse(url).map_err(|_| LaunchError::NotWeb)?;
    match parsed.scheme() {
        "http" | "https" if parsed.host_str().is_some_and(|host| !host.is_empty()) => Ok(parsed),
        _ => Err(LaunchError::NotWeb),
    }
}

/// The system's opener for `url`: `rundll32.exe url.dll,FileProtocolHandler URL` on Windows
/// (the shell's URL handler, no command interpreter), `open URL` on macOS, `xdg-open URL`
/// elsewhere.
pub fn system_launch(platform: &Platform, url: &Url) -> Launch {
    let url = url.as_str().to_string();
    match platform {
        Platform::Windows { system_root } => Launch {
            program: format!(
                r"{}\System32\rundll32.exe",
                system_root.trim_end_matches(['\\', '/'])
            ),
            args: vec!["url.dll,FileProtocolHandler".to_string(), url],
        },
        Platform::MacOs => Launch {
            program: "open".to_string(),
            args: vec![url],
        },
        Platform::Unix => Launch {
            program: "xdg-open".to_string(),
            args: vec![url],
        },
    }
}

/// A browser command as the `BROWSER` variable gives one (words separated by spaces, a word in
/// double quotes kept whole, as `"C:\Program Files\Mozilla Firefox\firefox.exe"`; `%s` stands
/// for the address, else the address is added at the end), for `url`.
pub fn command_launch(command: &str, url: &Url) -> Result<Launch, LaunchError> {
    let mut words = command_words(command);
    if words.is_empty() {
        return Err(LaunchError::EmptyCommand);
    }
    if words.iter().any(|word| word.contains("%s")) {
        for word in &mut words {
            *word = word.replace("%s", url.as_str());
        }
    } else {
        words.push(url.as_str().to_string());
    }
    let program = words.remove(0);
    if is_batch_file(&program) {
        return Err(LaunchError::Start {
            program,
            reason: "Windows runs a batch file through cmd.exe, which never opens the browser"
                .to_string(),
        });
    }
    Ok(Launch {
        program,
        args: words,
    })
}

/// `command` cut at spaces outside double quotes; the quotes themselves are dropped. The
/// address is put in after the cut, so nothing in it is ever cut or unquoted.
fn command_words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quoted = false;
    for ch in command.chars() {
        match ch {
            '"' => {
                quoted = !quoted;
                word.get_or_insert_with(String::new);
            }
            ch if ch.is_whitespace() && !quoted => words.extend(word.take()),
            ch => word.get_or_insert_with(String::new).push(ch),
        }
    }
    words.extend(word);
    words.retain(|word| !word.is_empty());
    words
}

/// Whether Windows would start `program` through `cmd.exe`: a `.bat` or `.cmd` file, in any
/// case and with the trailing dots and spaces Windows drops from a name. Refused on every
/// system, so a `BROWSER` set for Windows is checked the same wherever it is tested.
fn is_batch_file(program: &str) -> bool {
    let name = program.trim_end_matches(['.', ' ']).to_ascii_lowercase();
    name.ends_with(".bat") || name.ends_with(".cmd")
}

/// The commands a `BROWSER` value lists: separated by `;` on Windows, where `:` is a drive's
/// (`C:\Program Files\...`), and by `:` elsewhere, as the PATH is.
pub fn browser_commands<'a>(value: &'a str, platform: &Platform) -> Vec<&'a str> {
    let separator = match platform {
        Platform::Windows { .. } => ';',
        Platform::MacOs | Platform::Unix => ':',
    };
    value
        .split(separator)
        .filter(|one| !one.trim().is_empty())
        .collect()
}

/// Opens `url` in the user's browser: the `BROWSER` variable's command when set (several may
/// be listed, as [`browser_commands`] reads them; the first that starts wins), else the
/// system's opener.
pub fn open_web_page(url: &str) -> Result<(), LaunchError> {
    let url = web_address(url)?;
    let platform = Platform::current();
    match std::env::var("BROWSER") {
        Ok(commands) if !commands.trim().is_empty() => {
            let mut last = LaunchError::EmptyCommand;
            for command in browser_commands(&commands, &platform) {
                match command_launch(command, &url).and_then(|launch| start(&launch)) {
                    Ok(()) => return Ok(()),
                    Err(err) => last = err,
                }
            }
            Err(last)
        }
        _ => start(&system_launch(&platform, &url)),
    }
}

/// Opens `url` with this browser command (words as [`command_launch`] takes them).
pub fn open_web_page_with(command: &str, url: &str) -> Result<(), LaunchError> {
    let url = web_address(url)?;
    start(&command_launch(command, &url)?)
}

fn start(launch: &Launch) -> Result<(), LaunchError> {
    std::process::Command::new(&launch.program)
        .args(&launch.args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(|_| ())
        .map_err(|err| LaunchError::Start {
            program: launch.program.clone(),
            reason: err.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    /// What a hostile authorization server may put in its authorization endpoint: a command
    /// after an `&`, quotes to break out of a quoted argument, spaces to split one.
    const HOSTILE: &str = "https://auth.example.com/authorize?client_id=a&x=\" & calc.exe & \"&redirect_uri=http://127.0.0.1:1/callback&note=two words&q='quoted'";

    fn platforms() -> Vec<Platform> {
        vec![
            Platform::Windows {
                system_root: r"C:\Windows".into(),
            },
            Platform::MacOs,
            Platform::Unix,
        ]
    }

    #[test]
    fn attack_signin_launcher_refuses_what_is_not_a_web_page() {
        for url in [
            "file:///etc/passwd",
            "javascript:alert(1)",
            "-a Calculator https://example.com",
            "--help",
            " https://example.com",
            "calc.exe",
            "ms-settings:",
            "smb://10.0.0.1/share",
            "data:text/html,<script>alert(1)</script>",
            "https://",
            "",
        ] {
            assert_eq!(web_address(url), Err(LaunchError::NotWeb), "{url}");
            assert_eq!(open_web_page(url), Err(LaunchError::NotWeb), "{url}");
        }
        assert_eq!(
            LaunchError::NotWeb.to_string(),
            "the address was not opened: only web pages (http and https addresses) are opened in the browser"
        );
        assert!(web_address("HTTPS://example.com/a").is_ok());
        assert!(web_address("http://127.0.0.1:8080/callback").is_ok());
    }

    #[test]
    fn attack_signin_launcher_gives_the_whole_address_as_one_argument_on_every_platform() {
        let url = web_address(HOSTILE).unwrap();
        let text = url.as_str();
        // Spaces and quotes are percent-encoded; the `&`s stay, as the query needs them.
        assert!(!text.contains(' ') && !text.contains('"'), "{text}");
        assert!(text.contains("&x=%22%20&%20calc.exe%20&%20%22&"), "{text}");
        for platform in platforms() {
            let launch = system_launch(&platform, &url);
            // The address is the last argument, whole, and nothing else carries any of it.
            assert_eq!(launch.args.last().map(String::as_str), Some(text));
            assert_eq!(
                launch
                    .args
                    .iter()
                    .filter(|arg| arg.contains("calc"))
                    .count(),
                1
            );
            // No command interpreter anywhere: nothing parses `&`.
            for shell in ["cmd", "powershell", "sh", "bash", "start"] {
                let program = launch.program.to_ascii_lowercase();
                assert!(
                    !program.ends_with(shell) && !program.ends_with(&format!("{shell}.exe")),
                    "{platform:?}: {program}"
                );
                assert!(!launch.args.iter().any(|arg| arg.eq_ignore_ascii_case("/c")));
            }
            // Every argument is passed as it is: none holds what a command line splits on or
            // unquotes (Windows builds its command line from them).
            for arg in &launch.args {
                assert!(
                    !arg.contains(char::is_whitespace) && !arg.contains('"'),
                    "{arg}"
                );
            }
        }
        assert_eq!(
            system_launch(
                &Platform::Windows {
                    system_root: r"C:\Windows\".into()
                },
                &url
            ),
            Launch {
                program: r"C:\Windows\System32\rundll32.exe".into(),
                args: vec!["url.dll,FileProtocolHandler".into(), text.into()],
            }
        );
        assert_eq!(
            system_launch(&Platform::MacOs, &url),
            Launch {
                program: "open".into(),
                args: vec![text.into()],
            }
        );
        assert_eq!(
            system_launch(&Platform::Unix, &url),
            Launch {
                program: "xdg-open".into(),
                args: vec![text.into()],
            }
        );
    }

    #[test]
    fn attack_signin_browser_command_takes_the_address_as_one_argument() {
        let url = web_address(HOSTILE).unwrap();
        assert_eq!(
            command_launch("firefox --new-window", &url).unwrap(),
            Launch {
                program: "firefox".into(),
                args: vec!["--new-window".into(), url.as_str().into()],
            }
        );
        assert_eq!(
            command_launch("chromium --app=%s", &url).unwrap(),
            Launch {
                program: "chromium".into(),
                args: vec![format!("--app={}", url.as_str())],
            }
        );
        assert_eq!(command_launch("  ", &url), Err(LaunchError::EmptyCommand));
    }

    #[test]
    fn attack_signin_browser_command_never_runs_a_batch_file_through_cmd() {
        let url = web_address(HOSTILE).unwrap();
        for command in [
            r"C:\tools\open.bat",
            "open.CMD",
            "open.cmd. . --new-window",
            r"C:\tools\open.Bat %s",
        ] {
            match command_launch(command, &url) {
                Err(LaunchError::Start { reason, .. }) => {
                    assert!(reason.contains("cmd.exe"), "{command}: {reason}");
                }
                other => panic!("{command}: {other:?}"),
            }
        }
        assert!(command_launch(r"C:\tools\firefox.exe", &url).is_ok());
        assert!(command_launch("batcher", &url).is_ok());
    }

    #[test]
    fn a_browser_path_with_spaces_is_kept_whole_in_double_quotes() {
        let url = web_address(HOSTILE).unwrap();
        assert_eq!(
            command_launch(
                r#""C:\Program Files\Mozilla Firefox\firefox.exe" -new-tab "%s""#,
                &url
            )
            .unwrap(),
            Launch {
                program: r"C:\Program Files\Mozilla Firefox\firefox.exe".into(),
                args: vec!["-new-tab".into(), url.as_str().into()],
            }
        );
        assert_eq!(command_words(r#"  a  "b c"d "" e "#), ["a", "b cd", "e"]);
        assert_eq!(
            command_launch(r#""" "#, &url),
            Err(LaunchError::EmptyCommand)
        );
    }

    #[test]
    fn browser_commands_are_listed_with_the_platform_separator() {
        let windows = Platform::Windows {
            system_root: r"C:\Windows".into(),
        };
        assert_eq!(
            browser_commands(
                r"C:\Browsers\firefox.exe;;chrome.exe --new-window",
                &windows
            ),
            [r"C:\Browsers\firefox.exe", "chrome.exe --new-window"]
        );
        assert_eq!(
            browser_commands("firefox:: chromium %s", &Platform::Unix),
            ["firefox", " chromium %s"]
        );
        assert_eq!(
            browser_commands("open -a Safari", &Platform::MacOs),
            ["open -a Safari"]
        );
    }
}
