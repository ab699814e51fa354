//! What the MCP client's integration tests share: the reference servers from npm (installed
//! into `tests/mcp/node_modules` on first run, as `scripts/mcp-setup` does), the fixtures beside
//! them, and a manager and registry over a workspace of the test's own. Each test file uses a
//! part of it.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use tooltrail_mcp::{McpConfig, McpManager, McpOptions, ServerConfig};
use tooltrail_tools::ToolRegistry;

pub fn interop_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp")
}

/// The entry point of `@modelcontextprotocol/PACKAGE`.
pub fn package_entry(package: &str) -> PathBuf {
    interop_dir()
        .join("node_modules/@modelcontextprotocol")
        .join(package)
        .join("dist/index.js")
}

/// The path of `tests/mcp/fixtures/NAME`.
pub fn fixture(name: &str) -> String {
    interop_dir()
        .join("fixtures")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// Whether node is here; installs the npm packages once when they are missing.
pub fn node_ready() -> bool {
    static READY: OnceLock<bool> = OnceLock::new();
    *READY.get_or_init(|| {
        let has_node = Command::new("node")
            .arg("--version")
            .output()
            .is_ok_and(|out| out.status.success());
        if !has_node {
            tooltrail_test_support::dependency_missing(
                "node is not installed, so the MCP interop tests cannot run (scripts/setup --app installs it)",
            );
            return false;
        }
        if !package_entry("server-everything").exists()
            || !package_entry("server-filesystem").exists()
        {
            let status = Command::new("npm")
                .args(["install", "--no-audit", "--no-fund"])
                .current_dir(interop_dir())
                .status()
                .expect("npm runs");
            assert!(status.success(), "npm install in tests/mcp failed");
        }
        true
    })
}

/// Returns from the test (which passes, having said why) when node is not here.
macro_rules! require_node {
    () => {
        if !support::node_ready() {
            return;
        }
    };
}

/// server-everything over stdio, as `everything`.
pub fn everything() -> ServerConfig {
    let entry = package_entry("server-everything");
    ServerConfig::stdio("everything", "node", &[entry.to_str().unwrap(), "stdio"])
}

/// A manager of `servers` for `workspace`, with the PATH as it is (no login shell).
pub fn manager(servers: Vec<ServerConfig>, workspace: &Path) -> McpManager {
    let mut config = McpConfig::default();
    for server in servers {
        config.servers.insert(server.name.clone(), server);
    }
    let mut options = McpOptions::for_workspace(workspace);
    options.login_shell_path = false;
    McpManager::new(config, options)
}

/// The built-in tools and the manager's, which must all have registered.
pub async fn registry_with(manager: &McpManager) -> ToolRegistry {
    let mut registry = ToolRegistry::with_builtins();
    let failures = manager.register_into(&mut registry).await;
    assert!(
        failures.is_empty(),
        "{:?}",
        failures
            .iter()
            .map(|f| f.error.to_string())
            .collect::<Vec<_>>()
    );
    registry
}

/// An empty workspace folder, removed with the guard.
pub fn workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    (dir, root)
}
