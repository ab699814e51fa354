//! What the MCP command-line tests share: the reference servers from npm (`tests/mcp`,
//! installed once when missing), a workspace with config and data folders of its own, and
//! `tooltrail` run in it.

// Each test file uses the part it needs.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

use tooltrail_test_support::ScriptedServer;

/// Whether node runs; says so (failing under `CI=true`) when it does not.
pub fn node_installed() -> bool {
    let has_node = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success());
    if !has_node {
        tooltrail_test_support::dependency_missing(
            "node is not installed, so the MCP tests cannot run (scripts/setup --app installs it)",
        );
    }
    has_node
}

/// The entry point of `@modelcontextprotocol/PACKAGE` in tests/mcp; installs the npm packages
/// once when they are missing. `None` (after saying why) without node.
pub fn reference_server(package: &str) -> Option<PathBuf> {
    static READY: OnceLock<bool> = OnceLock::new();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp");
    let entry = dir
        .join("node_modules/@modelcontextprotocol")
        .join(package)
        .join("dist/index.js");
    let ready = *READY.get_or_init(|| {
        if !node_installed() {
            return false;
        }
        if !entry.exists() {
            let status = std::process::Command::new("npm")
                .args(["install", "--no-audit", "--no-fund"])
                .current_dir(&dir)
                .status()
                .unwrap();
            assert!(status.success(), "npm install in tests/mcp failed");
        }
        true
    });
    ready.then(|| entry.canonicalize().unwrap())
}

/// A workspace, and config and data folders, removed when dropped.
pub struct Setup {
    _dirs: Vec<tempfile::TempDir>,
    pub workspace: PathBuf,
    pub config: PathBuf,
    pub data: PathBuf,
    /// Variables (name, value) added to the environment of every `tooltrail` run in it.
    pub env: Vec<(String, String)>,
}

impl Setup {
    /// A workspace holding `files` (name, text), and a config folder whose mcp.json is what
    /// `mcp` makes of the workspace's path and whose config.toml is `config_toml`.
    pub fn new(
        files: &[(&str, &str)],
        mcp: impl FnOnce(&Path) -> serde_json::Value,
        config_toml: &str,
    ) -> Self {
        let ws = tempfile::tempdir().unwrap();
        let workspace = ws.path().canonicalize().unwrap();
        for (name, text) in files {
            std::fs::write(workspace.join(name), text).unwrap();
        }
        let config_dir = tempfile::tempdir().unwrap();
        let data_dir = tempfile::tempdir().unwrap();
        std::fs::write(
            config_dir.path().join("mcp.json"),
            serde_json::to_string_pretty(&mcp(&workspace)).unwrap(),
        )
        .unwrap();
        if !config_toml.is_empty() {
            std::fs::write(config_dir.path().join("config.toml"), config_toml).unwrap();
        }
        Self {
            config: config_dir.path().to_path_buf(),
            data: data_dir.path().to_path_buf(),
            workspace,
            env: Vec::new(),
            _dirs: vec![ws, config_dir, data_dir],
        }
    }

    /// The same, with `env` (name, value) in the environment of every `tooltrail` run in it.
    pub fn with_env(mut self, env: &[(&str, &str)]) -> Self {
        self.env.extend(
            env.iter()
                .map(|(name, value)| (name.to_string(), value.to_string())),
        );
        self
    }
}

/// Runs `tooltrail ARGS` in `setup`'s workspace, with no user settings and `setup.env` added
/// to its environment, and waits.
pub async fn tooltrail(args: &[&str], setup: &Setup) -> Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_tooltrail"))
        .args(args)
        .env_remove("TOOLTRAIL_BASE_URL")
        .env_remove("TOOLTRAIL_MODEL")
        .env_remove("TOOLTRAIL_API_KEY")
        .env("TOOLTRAIL_CONFIG_DIR", &setup.config)
        .env("TOOLTRAIL_DATA_DIR", &setup.data)
        .env("NO_COLOR", "1")
        .envs(setup.env.iter().map(|(name, value)| (name, value)))
        .current_dir(&setup.workspace)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap()
}

/// Runs `tooltrail ask --base-url MODEL --model m ARGS` in `setup`, and waits.
pub async fn ask(model: &ScriptedServer, args: &[&str], setup: &Setup) -> Output {
    let base_url = model.base_url();
    let mut all = vec!["ask", "--base-url", &base_url, "--model", "m"];
    all.extend_from_slice(args);
    tooltrail(&all, setup).await
}

/// The server called `name` in `servers`, what `tooltrail mcp list --json` printed.
pub fn listed_server(servers: &serde_json::Value, name: &str) -> serde_json::Value {
    servers
        .as_array()
        .unwrap()
        .iter()
        .find(|server| server["name"] == name)
        .unwrap()
        .clone()
}

/// What a stream printed, as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
