// axe-core on every view of the built UI (Chromium, the Rust side mocked): the start screen, a
// chat with a turn and its timeline as a list and as a waterfall, an approval waiting, a turn
// that could not reach the model and the guide it opens, History with a call's detail, Stats,
// Snippets, each section of Settings (Models among them), and the first-run guide. Each is
// checked in the light theme in English and in the dark theme in Chinese against WCAG 2.0, 2.1
// and 2.2 A and AA and axe's best practices (lib.mjs AXE_TAGS), so contrast, names, labels,
// headings and target sizes stay at zero faults. Screenshots go to target/screenshots/a11y-*.png.
import assert from "node:assert/strict";
import { join } from "node:path";
import { axeViolations, launchBrowser, openApp, run, screenshots, test } from "./lib.mjs";

const browser = await launchBrowser();
const workspace = { path: "/home/me/demo", name: "demo", watched: true };
const THEMES = [
  { name: "light, English", file: "light-en", zh: false, options: { colorScheme: "light", locale: "en-US" } },
  { name: "dark, Chinese", file: "dark-zh", zh: true, options: { colorScheme: "dark", locale: "zh-CN" } },
];

const shot = (page, name) => page.screenshot({ path: join(screenshots, `a11y-${name}.png`) });

/** Fails with every fault axe finds in the page as it is now. */
async function axe(page, what, selector = null) {
  const found = await axeViolations(page, selector);
  assert.deepEqual(found, [], `axe found problems in ${what}:\n  ${found.join("\n  ")}`);
}

/** Opens the app and waits for its first tab, so the window is drawn. */
async function open(config, theme) {
  const opened = await openApp(browser, { workspace, ...config }, theme.options);
  await opened.page.getByRole("tab").first().waitFor();
  return opened;
}

/** Asks a question and plays the turn up to its approval. */
async function askUntilApproval(page) {
  const box = page.locator(".composer textarea");
  await box.fill("What does this project do?");
  await box.press("Enter");
  await page.waitForFunction(() => window.__mock.calls.some((c) => c.cmd === "send_message"));
  await page.evaluate(() => {
    window.__turn = window.__mock.stream.approvedAndAnswered().events;
    window.__mock.deliver(window.__turn.slice(0, window.__mock.stream.answeredTurn().events.length));
  });
  await page.locator(".approval-card, [role=region]").first().waitFor();
}

/** Allows the command and plays the rest of the turn to its answer. */
async function finishTurn(page) {
  await page.keyboard.press("y");
  await page.waitForFunction(() => window.__mock.calls.some((c) => c.cmd === "answer_approval"));
  await page.evaluate(() => window.__mock.deliver(window.__turn.slice(window.__mock.stream.answeredTurn().events.length)));
  await page.getByTestId("turn-tokens").waitFor();
}

const hour = 3_600_000;
const base = Date.now() - 3 * 24 * hour;
const call = (id, partial) => ({
  id,
  conversation_id: "conv_1",
  turn_id: "turn_1",
  workspace: workspace.path,
  call_id: `call_${id}`,
  round: 1,
  tool: "read_file",
  source: { kind: "builtin" },
  description: "",
  arguments: { path: "README.md" },
  started_ms: base,
  duration_ms: 8,
  status: "success",
  result_preview: "# Demo",
  result_size: 6,
  truncated_for_model: false,
  approval: { allowed: true, by: { kind: "policy" } },
  ...partial,
});
const history = [
  call("tc_3", { tool: "execute_bash", arguments: { command: "git push origin main" }, started_ms: base, duration_ms: 0, status: "denied", approval: { allowed: false, by: { kind: "rule", id: "rule_2" }, reason: "a rule refuses git push" }, error: { code: "denied", message: "refused by a rule: git push" } }),
  call("tc_2", { tool: "search_text", arguments: { pattern: "func main" }, started_ms: base - 60_000, duration_ms: 12, result_preview: "main.go:5: func main() {" }),
  call("tc_1", { started_ms: base - 120_000, status: "error", error: { code: "not_found", message: "README.md does not exist" } }),
];
const conversations = [
  { id: "conv_1", title: "What does this project do?", workspace: workspace.path, updated_ms: base, turns: 2, running: false },
  { id: "conv_2", title: "Flaky tests", workspace: workspace.path, updated_ms: base - 1, turns: 1, running: false },
];
const rules = [
  { id: "rule_1", workspace: workspace.path, kind: "allow", tool: "execute_bash", prefix: ["go", "test"], command: "go test", created_ms: base, revoked_ms: null },
  { id: "rule_2", workspace: workspace.path, kind: "deny", tool: "execute_bash", prefix: ["git", "push"], command: "git push", created_ms: base, revoked_ms: null },
];
const snippets = [
  { name: "release_build", language: "sh", description: "The release build with the bundled SQLite", content: "cargo build --release --locked -p tooltrail-cli", created_ms: base, updated_ms: base },
  { name: "notes", language: null, description: null, content: "crates/store/src/search.rs: fts_query turns words into an FTS5 query.", created_ms: base, updated_ms: base },
];
const tokens = [{ day_start_ms: new Date().setHours(0, 0, 0, 0), model: "qwen2.5-coder:7b", prompt_tokens: 52_000, completion_tokens: 8_100, total_tokens: 60_100, requests: 31 }];
const mcpConfig = {
  path: "/home/me/.config/tooltrail/mcp.json",
  servers: [
    { name: "fs", command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "."], url: null, env: {}, cwd: null, approval: "allow", tools: { write_file: "ask" }, disabled: false, timeout_secs: 60, tool_timeouts_secs: {} },
    { name: "db", command: "pg-mcp", args: ["--readonly"], url: null, env: {}, cwd: null, approval: "ask", tools: {}, disabled: false, timeout_secs: 60, tool_timeouts_secs: {} },
  ],
  problem: null,
};
const mcp = {
  servers: [
    { name: "fs", state: "running", tools: 14 },
    { name: "db", state: "failed", tools: 0, error: 'the MCP server "db" could not be started: "pg-mcp" was not found (searched the PATH)', stderr: ["error: connection refused"] },
  ],
};
const endpoint = { base_url: "http://localhost:11434/v1", model: null, api_key_set: false, config_path: "/home/me/.config/tooltrail/config.toml", problem: null, key_problem: null };
const guide = (servers) => ({ ready: false, problem: "Could not connect to the model endpoint http://localhost:11434/v1 (connection refused).", local: false, endpoint, servers, looked_ms: 12 });
const modelsView = {
  dir: "/home/me/.local/share/tooltrail/models",
  local_model: "gemma3-270m",
  local_active: true,
  installed: [
    { name: "gemma3-270m", size_bytes: 253_000_000, parameters: "270M", quantization: "Q4_K_M", context_length: 32768, has_chat_template: false, source: "copied from /home/me/Downloads/gemma3-270m.gguf", missing: false, chosen: true },
    { name: "qwen3-1.7b", size_bytes: 1_107_409_472, parameters: "1.7B", quantization: "Q4_K_M", context_length: 40960, has_chat_template: true, source: "catalogue (unsloth/Qwen3-1.7B-GGUF)", missing: false, chosen: false },
  ],
  unfinished: [],
  catalogue: [
    { name: "qwen3-1.7b", title: "Qwen3 1.7B", description: "Small and quick; calls tools reliably for its size.", size_bytes: 1107409472, memory_gb: 2.6, context_length: 40960, licence: "Apache-2.0", installed: true },
    { name: "qwen3-4b", title: "Qwen3 4B", description: "Better answers and tool use than 1.7B, at about half the speed.", size_bytes: 2497281312, memory_gb: 4.3, context_length: 40960, licence: "Apache-2.0", installed: false },
  ],
  runtime: { model: "gemma3-270m", pid: 41872, port: 36125, context_size: 8192, memory_bytes: 417_000_000, in_use: false, stops_in_secs: 540 },
  server_problem: null,
};
const servers = [
  {
    kind: "ollama",
    base_url: "http://127.0.0.1:11434/v1",
    needs_api_key: false,
    models: [
      { id: "qwen3:1.7b", tools: "yes", vision: "no", context_window: 4096, max_context_window: 40960 },
      { id: "phi4-mini", tools: "unknown", vision: "unknown", context_window: null, max_context_window: null },
    ],
  },
];

for (const theme of THEMES) {
  test(`the start screen without a folder (${theme.name})`, async () => {
    const { page, problems, context } = await openApp(browser, { recent: [{ path: "/home/me/other", name: "other", opened_ms: 1 }] }, theme.options);
    await page.getByTestId("endpoint").waitFor();
    await axe(page, `the start screen (${theme.name})`);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test(`a chat with a turn, its timeline as a list and as a waterfall (${theme.name})`, async () => {
    const { page, problems, context } = await open({ conversations }, theme);
    await askUntilApproval(page);
    await axe(page, `an approval waiting (${theme.name})`);
    await finishTurn(page);
    await page.locator('.timeline-card[data-call-id="call_grep"] .card-head').click();
    await page.locator('.timeline-card[data-call-id="call_grep"]').getByText("main.go:5: func main() {").waitFor();
    await page.mouse.move(0, 0);
    await shot(page, `chat-list-${theme.file}`);
    await axe(page, `the chat with a turn and the timeline as a list (${theme.name})`);
    await page.getByRole("radio", { name: theme.zh ? "瀑布图" : "Waterfall" }).click();
    await page.getByTestId("waterfall").locator('[data-call-id="call_bash"] .wf-bar[data-kind="run"]').waitFor();
    await page.mouse.move(0, 0);
    await shot(page, `chat-waterfall-${theme.file}`);
    await axe(page, `the chat with a turn and the timeline as a waterfall (${theme.name})`);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test(`a turn that could not reach the model, and the guide opened from it (${theme.name})`, async () => {
    const { page, problems, context } = await open({ guide: guide(servers) }, theme);
    const box = page.locator(".composer textarea");
    await box.fill("And the tests?");
    await box.press("Enter");
    await page.waitForFunction(() => window.__mock.calls.some((c) => c.cmd === "send_message"));
    await page.evaluate(() => window.__mock.deliver(window.__mock.stream.failedTurn().events));
    const choose = page.getByRole("alert").getByRole("button", { name: theme.zh ? "选择模型…" : "Choose a model…" });
    await choose.waitFor();
    await axe(page, `a turn that failed (${theme.name})`);
    await choose.click();
    await page.getByTestId("guide-servers").locator("[data-server]").first().waitFor();
    await shot(page, `guide-page-${theme.file}`);
    await axe(page, `the guide opened from a turn (${theme.name})`);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test(`History with a call's detail, and Stats (${theme.name})`, async () => {
    const { page, problems, context } = await open({ conversations, history: structuredClone(history), rules: structuredClone(rules), tokens }, theme);
    await page.getByRole("tab", { name: theme.zh ? "历史" : "History" }).click();
    await page.locator('.history-row[data-id="tc_3"]').click();
    await page.getByTestId("call-detail").getByTestId("decision").waitFor();
    await page.getByTestId("history-counts").getByRole("group").first().waitFor();
    await shot(page, `history-${theme.file}`);
    await axe(page, `History (${theme.name})`);
    await page.getByRole("tab", { name: theme.zh ? "统计" : "Stats" }).click();
    await page.getByTestId("stats-table").waitFor();
    await shot(page, `stats-${theme.file}`);
    await axe(page, `Stats (${theme.name})`);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test(`Snippets with one shown (${theme.name})`, async () => {
    const { page, problems, context } = await open({ snippets: structuredClone(snippets) }, theme);
    await page.keyboard.press("Control+4");
    await page.getByRole("option", { name: /release_build/ }).click();
    await page.getByTestId("snippet-detail").locator("code.language-sh").waitFor();
    await shot(page, `snippets-${theme.file}`);
    await axe(page, `Snippets (${theme.name})`);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test(`each section of Settings, a provider's form and a server's details open (${theme.name})`, async () => {
    const { page, problems, context } = await open({ rules: structuredClone(rules), mcpConfig: structuredClone(mcpConfig), mcp: structuredClone(mcp), modelsView: structuredClone(modelsView), testDelayMs: 0 }, theme);
    await page.keyboard.press("Control+Comma");
    await page.getByTestId("cfg-endpoint").waitFor();
    await page.getByTestId("cfg-section-mcp").locator('[data-server="db"]').waitFor();
    await page.getByTestId("cfg-section-models").getByTestId("mdl-installed").waitFor();
    await page.locator('[data-preset="openrouter"]').click();
    await page.getByRole("button", { name: theme.zh ? "测试连接" : "Test connection" }).click();
    await page.locator(".cfg-models").waitFor();
    await page.getByTestId("cfg-section-mcp").locator('[data-server="db"] summary').click();
    const sections = await page.locator('[data-testid^="cfg-section-"]').evaluateAll((all) => all.map((s) => s.dataset.testid));
    assert.ok(sections.length >= 6, `only ${sections.length} sections of Settings were found`);
    for (const id of sections) {
      // Each in view in turn: contrast is measured against what is drawn on screen.
      await page.getByTestId(id).evaluate((s) => s.scrollIntoView({ block: "start" }));
      await page.mouse.move(1270, 790);
      await shot(page, `settings-${id.replace("cfg-section-", "")}-${theme.file}`);
      await axe(page, `Settings, ${id} in view (${theme.name})`);
    }
    assert.deepEqual(problems, []);
    await context.close();
  });

  test(`the first-run guide, with nothing found and with a server found (${theme.name})`, async () => {
    for (const [found, label] of [[[], "nothing found"], [servers, "a server found"]]) {
      const { page, problems, context } = await openApp(browser, { guide: guide(found) }, theme.options);
      await page.getByTestId("model-guide").getByTestId("guide-local").locator("[data-model]").first().waitFor();
      if (found.length) await page.locator('[data-server="http://127.0.0.1:11434/v1"]').waitFor();
      await shot(page, `guide-${found.length ? "servers" : "empty"}-${theme.file}`);
      await axe(page, `the first-run guide, ${label} (${theme.name})`);
      assert.deepEqual(problems.filter((p) => !p.includes("connection refused")), []);
      await context.close();
    }
  });
}

const failed = await run();
await browser.close();
process.exit(failed ? 1 : 0);
