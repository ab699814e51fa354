// The settings screen in Chromium, with the Rust side mocked (ui/tests/mock-settings.ts keeps
// the saved state): providers and their keys, their tool calling mode and the models found to
// need prompt mode, the connection test, limits, tools, the sandbox, approval rules and MCP
// servers. Screenshots in both themes and both languages go to
// target/screenshots/.
import assert from "node:assert/strict";
import { join } from "node:path";
import { launchBrowser, openApp, run, screenshots, test } from "./lib.mjs";

const workspace = { path: "/home/me/demo", name: "demo", watched: true };
const browser = await launchBrowser();

const shot = (page, name) => page.screenshot({ path: join(screenshots, `${name}.png`) });
const calls = (page, cmd) => page.evaluate((cmd) => window.__mock.calls.filter((c) => c.cmd === cmd).map((c) => c.args), cmd);
const count = async (page, cmd) => (await calls(page, cmd)).length;
const mockState = (page, key) => page.evaluate((key) => window.__mock.config[key], key);

const CONFIG_PATH = "/home/me/.config/tooltrail/config.toml";
const providers = [
  { id: "local-ollama", name: "Local Ollama", base_url: "http://localhost:11434/v1", model: "qwen2.5-coder:7b", key_stored: false, active: true, tool_mode: null },
  { id: "deepseek", name: "DeepSeek", base_url: "https://api.deepseek.com/v1", model: "deepseek-chat", key_stored: true, active: false, tool_mode: null },
];
// What auto mode wrote down: these refused native tools, so they get prompt mode from the start.
const learned = [
  { base_url: "http://localhost:11434/v1", model: "gemma3:270m", mode: "prompt" },
  { base_url: "http://gpu-box:8000/v1", model: "phi-2", mode: "prompt" },
];
const settings = (partial = {}) => ({
  providers,
  limits: { max_rounds: 10, max_result_bytes: 32 * 1024, request_timeout_secs: 120, command_timeout_secs: 30 },
  tools: [
    { name: "list_dir", description: "List a folder's entries with their type, size and modification time, sorted.", enabled: true },
    { name: "read_file", description: "Read a text file of the workspace.", enabled: true },
    { name: "search_files", description: "Find files by glob pattern.", enabled: true },
    { name: "search_text", description: "Search file contents for a regular expression or plain text.", enabled: true },
    { name: "count_lines", description: "Count lines (as wc -l) in a file, or in every file below a folder.", enabled: true },
    { name: "execute_bash", description: "Run a bash command in the workspace and return its stdout, stderr, exit code and duration.", enabled: true },
  ],
  config_path: CONFIG_PATH,
  endpoint: { base_url: "http://localhost:11434/v1", model: "qwen2.5-coder:7b", api_key_set: false, config_path: CONFIG_PATH, problem: null },
  keychain: { available: true, message: null },
  learned_tool_modes: [],
  ...partial,
});
const rules = [
  { id: "rule_1", workspace: "/home/me/demo", kind: "allow", tool: "execute_bash", prefix: ["go", "test"], command: "go test", created_ms: Date.UTC(2025, 2, 3, 9, 30), revoked_ms: null },
  { id: "rule_2", workspace: "/home/me/demo", kind: "deny", tool: "execute_bash", prefix: ["git", "push"], command: "git push", created_ms: Date.UTC(2025, 2, 4, 14, 5), revoked_ms: null },
];
const fsServer = { name: "fs", command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "."], url: null, env: { DEBUG: "1" }, cwd: null, approval: "allow", tools: { write_file: "ask" }, disabled: false, timeout_secs: 60, tool_timeouts_secs: {} };
const dbServer = { name: "db", command: "pg-mcp", args: ["--readonly"], url: null, env: {}, cwd: null, approval: "ask", tools: {}, disabled: false, timeout_secs: 60, tool_timeouts_secs: {} };
const mcpConfig = { path: "/home/me/.config/tooltrail/mcp.json", servers: [fsServer, dbServer], problem: null };
const mcp = {
  servers: [
    { name: "fs", state: "running", tools: 14 },
    { name: "db", state: "failed", tools: 0, error: 'the MCP server "db" could not be started: "pg-mcp" was not found (searched the PATH)', stderr: ["pg-mcp: connecting to postgres://localhost/demo", "error: connection refused"] },
  ],
};
const full = (partial = {}) => ({ workspace, settings: settings(), rules: structuredClone(rules), mcpConfig: structuredClone(mcpConfig), mcp: structuredClone(mcp), ...partial });

async function openSettings(config, contextOptions) {
  const opened = await openApp(browser, config, contextOptions);
  await opened.page.getByRole("tab").first().waitFor();
  // Ctrl+, opens the settings from anywhere.
  await opened.page.keyboard.press("Control+Comma");
  await opened.page.getByTestId("cfg-endpoint").waitFor();
  return opened;
}

const section = (page, id) => page.getByTestId(`cfg-section-${id}`);

test("a provider added from a preset keeps its key in the keychain, never in the page", async () => {
  const { page, problems, context } = await openSettings(full({ testDelayMs: 400 }));
  const providersSection = section(page, "providers");
  await providersSection.getByRole("button", { name: /^OpenAI/ }).click();
  const form = page.getByRole("form", { name: "New provider" });
  assert.equal(await form.getByLabel("Name").inputValue(), "OpenAI");
  assert.equal(await form.getByLabel("Base URL").inputValue(), "https://api.openai.com/v1");
  const key = form.getByLabel("API key");
  assert.equal(await key.getAttribute("type"), "password");
  assert.equal(await key.getAttribute("placeholder"), "Needed for this endpoint");
  const secret = "sk-test-SECRET-7f3a9c";
  await key.fill(secret);

  // The test runs with the typed key, shows its progress, then the models to pick from.
  await form.getByRole("button", { name: "Test connection" }).click();
  await form.getByRole("button", { name: /Testing/ }).waitFor();
  assert.equal(await form.locator(".spinner").count(), 1);
  await form.getByText("Connected: 3 models listed.").waitFor();
  assert.equal((await calls(page, "test_connection"))[0].provider.api_key, secret);
  await form.getByRole("button", { name: "llama3.1:8b" }).click();
  assert.equal(await form.getByLabel("Model (optional)").inputValue(), "llama3.1:8b");
  assert.equal(await form.locator("datalist option").count(), 3);
  await shot(page, "settings-provider-form");

  const infoCalls = await count(page, "app_info");
  await form.getByRole("button", { name: "Save and use" }).click();
  await page.getByRole("status").filter({ hasText: "Saved OpenAI; questions go to it now." }).waitFor();
  assert.deepEqual(await calls(page, "save_provider"), [
    { provider: { id: null, name: "OpenAI", base_url: "https://api.openai.com/v1", model: "llama3.1:8b", api_key: secret, tool_mode: null }, activate: true },
  ]);
  const row = providersSection.locator('[data-provider="OpenAI"]');
  assert.match(await row.innerText(), /in use/);
  assert.match(await row.innerText(), /key in keychain/);
  assert.match(await row.innerText(), /Model: llama3\.1:8b/);
  assert.doesNotMatch(await providersSection.locator('[data-provider="Local Ollama"]').innerText(), /in use/);
  assert.match(await page.getByTestId("cfg-endpoint").innerText(), /https:\/\/api\.openai\.com\/v1/);
  // The app is told where questions go now.
  await page.waitForFunction((n) => window.__mock.calls.filter((c) => c.cmd === "app_info").length > n, infoCalls);

  // The key reached the mocked keychain, and nothing on the page holds it.
  assert.equal((await mockState(page, "keys")).openai, secret);
  assert.equal((await page.content()).includes(secret), false);
  assert.equal(await page.evaluate((s) => [...document.querySelectorAll("input, textarea")].some((el) => el.value.includes(s)), secret), false);

  // Editing says a key is stored without showing it.
  await row.getByRole("button", { name: "Edit OpenAI" }).click();
  const edit = page.getByRole("form", { name: "Edit OpenAI" });
  assert.equal(await edit.getByLabel("API key").inputValue(), "");
  assert.equal(await edit.getByLabel("API key").getAttribute("placeholder"), "Stored in the keychain — leave empty to keep");
  await edit.getByRole("button", { name: "Remove key" }).click();
  await edit.getByRole("button", { name: "Save", exact: true }).click();
  await page.getByRole("status").filter({ hasText: "Saved OpenAI." }).waitFor();
  assert.equal((await calls(page, "save_provider"))[1].provider.api_key, "");
  assert.doesNotMatch(await row.innerText(), /key in keychain/);
  assert.deepEqual(problems, []);
  await context.close();
});

test("a failing connection test shows the endpoint's own words", async () => {
  const { page, problems, context } = await openSettings(full({ testDelayMs: 50 }));
  await page.getByRole("button", { name: /^Other…/ }).click();
  const form = page.getByRole("form", { name: "New provider" });
  await form.getByLabel("Name").fill("GPU box");
  await form.getByLabel("Base URL").fill("http://bad-host:8000/v1");
  await form.getByRole("button", { name: "Test connection" }).click();
  const alert = form.getByRole("alert");
  await alert.waitFor();
  assert.equal(await alert.innerText(), "Connection failed: Could not connect to http://bad-host:8000/v1/models: connection refused.");
  // A bad address is caught before anything is sent.
  await form.getByLabel("Base URL").fill("bad-host:8000");
  await form.getByRole("button", { name: "Save", exact: true }).click();
  await form.getByText("The address must start with http:// or https://.").waitFor();
  assert.equal(await count(page, "save_provider"), 0);
  assert.deepEqual(problems, []);
  await context.close();
});

test("using and deleting providers, with the environment's override and a missing keychain said plainly", async () => {
  const config = full({
    envBaseUrl: "http://gpu-box:8000/v1",
    settings: settings({ keychain: { available: false, message: "No Secret Service provider is running (org.freedesktop.secrets)." } }),
  });
  const { page, problems, context } = await openSettings(config);
  const warning = page.getByTestId("cfg-keychain");
  assert.match(await warning.innerText(), /API keys cannot be saved\.\s+No Secret Service provider is running/);
  assert.match(await page.getByTestId("cfg-endpoint").innerText(), /http:\/\/gpu-box:8000\/v1/);
  assert.match(await page.getByTestId("cfg-env-override").innerText(), /TOOLTRAIL_BASE_URL overrides the active provider Local Ollama/);

  await page.getByRole("button", { name: "Use DeepSeek" }).click();
  await page.getByRole("status").filter({ hasText: "Questions go to DeepSeek now." }).waitFor();
  assert.deepEqual(await calls(page, "activate_provider"), [{ id: "deepseek" }]);
  assert.match(await page.locator('[data-provider="DeepSeek"]').innerText(), /in use/);
  assert.match(await page.getByTestId("cfg-env-override").innerText(), /DeepSeek/);

  // The key field cannot take a key without a keychain.
  await page.getByRole("button", { name: "Edit Local Ollama" }).click();
  assert.equal(await page.getByLabel("API key").isDisabled(), true);
  await page.getByRole("button", { name: "Cancel" }).click();

  await page.getByRole("button", { name: "Delete Local Ollama" }).click();
  assert.equal(await count(page, "delete_provider"), 0);
  await page.getByRole("group", { name: "Delete Local Ollama and its key?" }).getByRole("button", { name: "Delete" }).click();
  await page.getByRole("status").filter({ hasText: "Deleted Local Ollama." }).waitFor();
  assert.deepEqual(await calls(page, "delete_provider"), [{ id: "local-ollama" }]);
  assert.equal(await page.locator('[data-provider="Local Ollama"]').count(), 0);
  assert.deepEqual(problems, []);
  await context.close();
});

test("tool calling: the mode is saved with the provider, and a model found to need prompt mode can be forgotten", async () => {
  const { page, problems, context } = await openSettings(full({ settings: settings({ learned_tool_modes: structuredClone(learned) }) }));
  const providersSection = section(page, "providers");
  const ollama = providersSection.locator('[data-provider="Local Ollama"]');
  assert.doesNotMatch(await ollama.innerText(), /prompt mode|native tools/, "auto, the default, has no badge");

  // From the keyboard: the select follows the key field, and its hint says what the mode does.
  await ollama.getByRole("button", { name: "Edit Local Ollama" }).click();
  const form = page.getByRole("form", { name: "Edit Local Ollama" });
  const mode = form.getByLabel("Tool calling");
  assert.equal(await mode.inputValue(), "auto");
  assert.deepEqual(await mode.locator("option").allInnerTexts(), ["Auto (default)", "Native function calling", "Prompt mode, for models without function calling"]);
  await form.getByLabel("API key").focus();
  await page.keyboard.press("Tab");
  assert.equal(await mode.evaluate((el) => el === document.activeElement), true);
  assert.match(await mode.evaluate((el) => document.getElementById(el.getAttribute("aria-describedby")).textContent), /prompt mode when the server does not support tools/);
  await mode.selectOption("prompt");
  assert.match(await mode.evaluate((el) => document.getElementById(el.getAttribute("aria-describedby")).textContent), /<tool_use> blocks/);
  await form.evaluate((el) => el.scrollIntoView({ block: "end" }));
  await page.mouse.move(1270, 790);
  await shot(page, "settings-tool-modes-form");
  await form.getByRole("button", { name: "Save", exact: true }).click();
  await page.getByRole("status").filter({ hasText: "Saved Local Ollama." }).waitFor();
  assert.equal((await calls(page, "save_provider"))[0].provider.tool_mode, "prompt");
  assert.equal((await mockState(page, "settings")).providers.find((p) => p.id === "local-ollama").tool_mode, "prompt");
  assert.match(await ollama.innerText(), /prompt mode/);

  // The models auto mode found to refuse native tools.
  const list = providersSection.getByRole("list", { name: "Found to need prompt mode" });
  assert.match(await providersSection.innerText(), /The server refused native tool calls for these models, so questions use prompt mode from the start\. Forget one to try native tools again\./);
  assert.deepEqual(await list.locator("[data-learned]").evaluateAll((items) => items.map((item) => item.dataset.learned)), ["gemma3:270m", "phi-2"]);
  assert.match(await list.locator('[data-learned="phi-2"]').innerText(), /phi-2\s+http:\/\/gpu-box:8000\/v1/);
  await page.locator("#cfg-providers-title").evaluate((el) => el.scrollIntoView({ block: "start" }));
  await page.mouse.move(1270, 790);
  await shot(page, "settings-tool-modes");

  const forget = list.getByRole("button", { name: "Forget gemma3:270m at http://localhost:11434/v1" });
  await forget.focus();
  await page.keyboard.press("Enter");
  await page.getByRole("status").filter({ hasText: "Forgot gemma3:270m: the next question tries native tools again." }).waitFor();
  assert.deepEqual(await calls(page, "forget_tool_mode"), [{ baseUrl: "http://localhost:11434/v1", model: "gemma3:270m" }]);
  assert.equal(await list.locator('[data-learned="gemma3:270m"]').count(), 0);
  assert.deepEqual((await mockState(page, "settings")).learned_tool_modes, [learned[1]]);

  // A refusal is said, and the entry stays.
  await page.evaluate(() => {
    window.__mock.config.forgetError = { code: "settings", message: "/home/me/.config/tooltrail/tool-modes.json could not be written: read-only file system." };
  });
  await list.getByRole("button", { name: "Forget phi-2 at http://gpu-box:8000/v1" }).click();
  assert.equal(await providersSection.getByRole("alert").innerText(), "phi-2 was not forgotten: /home/me/.config/tooltrail/tool-modes.json could not be written: read-only file system.");
  assert.equal(await list.locator('[data-learned="phi-2"]').count(), 1);

  // The last one forgotten, the list and its explanation go.
  await page.evaluate(() => {
    window.__mock.config.forgetError = null;
  });
  await list.getByRole("button", { name: "Forget phi-2 at http://gpu-box:8000/v1" }).click();
  await page.getByRole("status").filter({ hasText: "Forgot phi-2" }).waitFor();
  await list.waitFor({ state: "detached" });
  assert.doesNotMatch(await providersSection.innerText(), /Found to need prompt mode|The server refused native tool calls/);
  assert.deepEqual(problems, []);
  await context.close();

  // In Chinese, with the list and a provider in prompt mode.
  const zh = await openSettings(
    full({ settings: settings({ providers: [providers[0], { ...providers[1], tool_mode: "prompt" }], learned_tool_modes: structuredClone(learned) }) }),
    { locale: "zh-CN" },
  );
  const zhSection = section(zh.page, "providers");
  assert.match(await zhSection.locator('[data-provider="DeepSeek"]').innerText(), /提示词模式/);
  const zhList = zhSection.getByRole("list", { name: "需要提示词模式的模型" });
  assert.match(await zhSection.innerText(), /服务器拒绝了这些模型的原生工具调用/);
  await zhList.getByRole("button", { name: "忘记 http://gpu-box:8000/v1 上的 phi-2" }).waitFor();
  await zh.page.locator("#cfg-providers-title").evaluate((el) => el.scrollIntoView({ block: "start" }));
  await zh.page.mouse.move(1270, 790);
  await shot(zh.page, "settings-tool-modes-zh");
  // The form's select, in Chinese.
  await zhSection.getByRole("button", { name: "编辑 DeepSeek" }).click();
  const zhMode = zh.page.getByRole("form", { name: "编辑 DeepSeek" }).getByLabel("工具调用");
  assert.equal(await zhMode.inputValue(), "prompt");
  assert.deepEqual(await zhMode.locator("option").allInnerTexts(), ["自动（默认）", "原生函数调用", "提示词模式，适用于不支持函数调用的模型"]);
  await zhMode.scrollIntoViewIfNeeded();
  await zh.page.mouse.move(1270, 790);
  await shot(zh.page, "settings-tool-modes-form-zh");
  assert.deepEqual(zh.problems, []);
  await zh.context.close();
});

test("limits are checked before saving, saved in bytes, and the backend's refusal is shown", async () => {
  const { page, problems, context } = await openSettings(full());
  const limits = section(page, "limits");
  await page.getByRole("navigation", { name: "Settings sections" }).getByRole("button", { name: "Limits" }).click();
  const save = limits.getByRole("button", { name: "Save" });
  assert.equal(await save.isDisabled(), true, "nothing changed yet");
  assert.equal(await limits.getByLabel("Largest tool result").inputValue(), "32");

  await limits.getByLabel("Command time limit").fill("500");
  await limits.getByText("Must be between 1 and 120.").waitFor();
  assert.equal(await limits.getByLabel("Command time limit").getAttribute("aria-invalid"), "true");
  await limits.getByLabel("Tool rounds per question").fill("");
  await limits.getByText("Enter a whole number.").waitFor();
  assert.equal(await save.isDisabled(), true);
  await shot(page, "settings-limits-invalid");

  await limits.getByLabel("Command time limit").fill("90");
  await limits.getByLabel("Tool rounds per question").fill("25");
  await limits.getByLabel("Largest tool result").fill("64");
  await save.click();
  await limits.getByText("Saved.").waitFor();
  assert.deepEqual(await calls(page, "save_limits"), [{ limits: { max_rounds: 25, max_result_bytes: 65536, request_timeout_secs: 120, command_timeout_secs: 90 } }]);

  await page.evaluate(() => {
    window.__mock.config.limitsError = { code: "settings", message: "/home/me/.config/tooltrail/config.toml could not be written: read-only file system." };
  });
  await limits.getByLabel("Model wait limit").fill("300");
  await save.click();
  assert.equal(await limits.getByRole("alert").innerText(), "Not saved: /home/me/.config/tooltrail/config.toml could not be written: read-only file system.");
  assert.deepEqual(problems, []);
  await context.close();
});

test("a built-in tool switches off, and the sandbox says whether it is enforced", async () => {
  const { page, problems, context } = await openSettings(full());
  const bash = section(page, "tools").getByRole("switch", { name: "execute_bash" });
  assert.equal(await bash.isChecked(), true);
  await bash.focus();
  await page.keyboard.press("Space");
  await page.waitForFunction(() => window.__mock.calls.some((c) => c.cmd === "set_tool_enabled"));
  assert.deepEqual(await calls(page, "set_tool_enabled"), [{ name: "execute_bash", enabled: false }]);
  assert.equal(await bash.isChecked(), false);
  assert.equal((await mockState(page, "settings")).tools.find((t) => t.name === "execute_bash").enabled, false);

  const sandbox = page.getByTestId("cfg-sandbox");
  assert.match(await sandbox.innerText(), /Enforced\s+enforced \(Landlock ABI 5 and seccomp\)/);
  assert.match(await sandbox.innerText(), /Network access is blocked for commands\./);
  assert.equal(await sandbox.evaluate((el) => el.classList.contains("cfg-sandbox-on")), true);
  await context.close();

  const off = await openSettings(
    full({ sandbox: { enforced: false, summary: "not enforced: Landlock is not available on this kernel", details: ["Kernel 5.10 has no Landlock."], folders: [], hidden: [], read_only_folders: [], network_commands: [], skipped: [] } }),
  );
  const offBox = off.page.getByTestId("cfg-sandbox");
  assert.match(await offBox.innerText(), /Not enforced\s+not enforced: Landlock is not available/);
  const badge = offBox.locator(".cfg-badge");
  assert.equal(await badge.evaluate((el) => getComputedStyle(el).color), "rgb(194, 65, 12)");
  assert.deepEqual([...problems, ...off.problems], []);
  await off.context.close();
});

test("the sandbox lists what a command sees and saves extra read-only folders", async () => {
  const { page, problems, context } = await openSettings(full());
  await section(page, "sandbox").scrollIntoViewIfNeeded();
  const rows = page.getByTestId("cfg-sandbox-folder");
  await rows.first().waitFor();
  const visible = await rows.evaluateAll((els) => els.filter((el) => el.offsetParent !== null).map((el) => el.innerText.replace(/\s+/g, " ").trim()));
  assert.deepEqual(visible.slice(0, 4), [
    "write /home/me/demo Workspace",
    "write /tmp/tooltrail-home-XXXXXX Private temp folder of the call",
    "write /home/me/.local/share/tooltrail/sandbox-cache/demo-0123456789abcdef Build caches of this workspace",
    "read /home/me/.rustup Toolchain: rustup",
  ]);
  assert.match(await page.getByTestId("cfg-sandbox-hidden").innerText(), /\/home\/me\/\.cargo\/credentials\.toml\s+credentials/);
  const extra = page.getByTestId("cfg-sandbox-extra");
  await extra.fill("datasets");
  await page.getByRole("form", { name: "Extra read-only folders" }).getByRole("button", { name: "Save" }).click();
  await page.getByText('The read-only folder "datasets" must be a full path or start with ~/.').waitFor();
  await extra.fill("~/datasets\n/opt/sdk");
  await page.getByRole("form", { name: "Extra read-only folders" }).getByRole("button", { name: "Save" }).click();
  await page.getByText("Saved. Commands see these folders from the next one on.").waitFor();
  assert.deepEqual(await calls(page, "save_read_only_folders"), [{ folders: ["datasets"] }, { folders: ["~/datasets", "/opt/sdk"] }]);
  await page.getByText("/home/me/datasets").waitFor();

  const network = page.getByTestId("cfg-sandbox-network");
  const networkForm = page.getByRole("form", { name: "Commands that get the network" });
  await network.fill("npm install && curl x");
  await networkForm.getByRole("button", { name: "Save" }).click();
  await page.getByText('The network rule "npm install && curl x" must be plain words of one command, without `&`.').waitFor();
  await network.fill("npm install\ncargo fetch");
  await networkForm.getByRole("button", { name: "Save" }).click();
  await page.getByText("Saved. Applies from the next command on.").waitFor();
  assert.deepEqual(await calls(page, "save_network_commands"), [{ commands: ["npm install && curl x"] }, { commands: ["npm install", "cargo fetch"] }]);
  await networkForm.scrollIntoViewIfNeeded();
  await shot(page, "settings-sandbox-network");
  assert.deepEqual([...problems], []);
  await context.close();
});

test("approval rules: added, refused with the reason, revoked", async () => {
  const { page, problems, context } = await openSettings(full());
  const rulesSection = section(page, "rules");
  await rulesSection.locator('[data-rule="git push"]').waitFor();
  assert.match(await rulesSection.innerText(), /Commands that run in demo without asking/);
  assert.match(await rulesSection.locator('[data-rule="go test"]').innerText(), /allow\s+go test\s+added /);

  const command = rulesSection.getByLabel("Command's first words");
  await command.fill("cargo test");
  await rulesSection.getByRole("button", { name: "Add" }).click();
  await rulesSection.getByText("Commands starting with cargo test now run without asking.").waitFor();
  await rulesSection.locator('[data-rule="cargo test"]').waitFor();
  assert.deepEqual(await calls(page, "add_rule"), [{ kind: "allow", command: "cargo test" }]);
  assert.equal(await command.inputValue(), "");

  // The backend refuses what a rule could never allow, and says why.
  await command.fill("rm -rf /");
  await rulesSection.getByRole("button", { name: "Add" }).click();
  assert.equal(await rulesSection.getByRole("alert").innerText(), "Not added: It deletes the root or home folder, so it cannot be allowed.");
  // A deny rule of the same words is fine.
  await rulesSection.getByLabel("Kind").selectOption("deny");
  await rulesSection.getByRole("button", { name: "Add" }).click();
  await rulesSection.locator('[data-rule="rm -rf /"]').waitFor();
  assert.match(await rulesSection.locator('[data-rule="rm -rf /"]').innerText(), /^deny/);

  await rulesSection.getByRole("button", { name: "Revoke git push" }).click();
  await rulesSection.getByText("Revoked the rule for git push.").waitFor();
  assert.deepEqual(await calls(page, "revoke_rule"), [{ id: "rule_2" }]);
  assert.equal(await rulesSection.locator('[data-rule="git push"]').count(), 0);
  assert.deepEqual(problems, []);
  await context.close();
});

test("MCP servers: live status, add, edit, remove; a broken mcp.json blocks saving", async () => {
  const { page, problems, context } = await openSettings(full());
  const mcpSection = section(page, "mcp");
  const fs = mcpSection.locator('[data-server="fs"]');
  const db = mcpSection.locator('[data-server="db"]');
  await fs.waitFor();
  assert.match(await fs.innerText(), /running · 14 tools/);
  assert.match(await fs.innerText(), /npx -y @modelcontextprotocol\/server-filesystem \./);
  assert.match(await fs.innerText(), /approval: Run without asking/);
  assert.match(await db.innerText(), /failed/);
  assert.match(await db.innerText(), /"pg-mcp" was not found/);
  await db.getByText("Last output (2 lines)").click();
  await db.getByText("error: connection refused").waitFor();

  // Add a URL server with a per-tool rule.
  await mcpSection.getByRole("button", { name: "+ Add a server" }).click();
  let form = page.getByRole("form", { name: "New MCP server" });
  await form.getByLabel("Name", { exact: true }).fill("web");
  await form.getByLabel("Connects to a URL").check();
  await form.getByLabel("URL", { exact: true }).fill("https://example.com/mcp");
  await form.getByLabel("Default approval").selectOption("ask");
  await form.getByRole("button", { name: "+ Add a tool rule" }).click();
  await form.getByLabel("Tool name 1").fill("delete_page");
  await form.getByLabel("Approval of tool 1").selectOption("never");
  await shot(page, "settings-mcp-new-server");
  const serversAsked = await count(page, "mcp_servers");
  await form.getByRole("button", { name: "Save" }).click();
  await mcpSection.getByText("Saved web. It starts with the next question.").waitFor();
  assert.deepEqual(await calls(page, "save_mcp_server"), [
    { previousName: null, server: { name: "web", command: null, args: [], url: "https://example.com/mcp", env: {}, cwd: null, approval: "ask", tools: { delete_page: "never" }, disabled: false, timeout_secs: 60, tool_timeouts_secs: {} } },
  ]);
  const web = mcpSection.locator('[data-server="web"]');
  assert.match(await web.innerText(), /not started/);
  // The sidebar hears of the change too.
  await page.waitForFunction((n) => window.__mock.calls.filter((c) => c.cmd === "mcp_servers").length > n + 1, serversAsked);
  await page.getByTestId("mcp-servers").getByText("web").waitFor();

  // Edit fs: rename it, switch it off, change its environment; a bad env line is caught first.
  await fs.getByRole("button", { name: "Edit fs" }).click();
  form = page.getByRole("form", { name: "Edit fs" });
  assert.equal(await form.getByLabel("Arguments").inputValue(), "-y\n@modelcontextprotocol/server-filesystem\n.");
  assert.equal(await form.getByLabel("Environment").inputValue(), "DEBUG=1");
  assert.equal(await form.getByLabel("Tool name 1").inputValue(), "write_file");
  await form.getByLabel("Name", { exact: true }).fill("files");
  await form.getByLabel("Environment").fill("DEBUG=1\nnot a pair");
  await form.getByRole("button", { name: "Save" }).click();
  await form.getByText("Line 2: write it as NAME=value.").waitFor();
  assert.equal(await count(page, "save_mcp_server"), 1);
  await form.getByLabel("Environment").fill("DEBUG=1\nROOT=${HOME}/src");
  await form.getByRole("switch", { name: "Enabled" }).uncheck();
  await form.getByRole("button", { name: "Save" }).click();
  await mcpSection.getByText("Saved files. It starts with the next question.").waitFor();
  const edited = (await calls(page, "save_mcp_server"))[1];
  assert.equal(edited.previousName, "fs");
  assert.deepEqual(edited.server, { ...fsServer, name: "files", env: { DEBUG: "1", ROOT: "${HOME}/src" }, disabled: true });
  assert.match(await mcpSection.locator('[data-server="files"]').innerText(), /turned off/);
  assert.equal(await fs.count(), 0);

  // Remove, after a confirmation.
  await db.getByRole("button", { name: "Remove db" }).click();
  assert.equal(await count(page, "remove_mcp_server"), 0);
  await db.getByRole("group", { name: "Remove db from mcp.json?" }).getByRole("button", { name: "Remove" }).click();
  await mcpSection.getByText("Removed db.").waitFor();
  assert.deepEqual(await calls(page, "remove_mcp_server"), [{ name: "db" }]);
  assert.equal(await db.count(), 0);
  assert.deepEqual(problems, []);
  await context.close();

  const broken = await openSettings(full({ mcpConfig: { path: mcpConfig.path, servers: [fsServer], problem: "mcp.json: server \"fs\": \"args\" must be an array of strings." } }));
  const brokenSection = section(broken.page, "mcp");
  assert.match(await brokenSection.getByTestId("cfg-mcp-problem").innerText(), /cannot be changed here until it is fixed:\s+mcp\.json: server "fs": "args" must be an array/);
  assert.equal(await brokenSection.getByRole("button", { name: "+ Add a server" }).isDisabled(), true);
  assert.equal(await brokenSection.getByRole("button", { name: "Edit fs" }).isDisabled(), true);
  assert.deepEqual(broken.problems, []);
  await broken.context.close();
});

test("the sections are reachable from the keyboard", async () => {
  const { page, context } = await openSettings(full());
  const nav = page.getByRole("navigation", { name: "Settings sections" });
  await nav.getByRole("button", { name: "Providers" }).focus();
  // Models, Limits, Tools, Sandbox, Approval rules, then MCP servers.
  for (let i = 0; i < 6; i++) await page.keyboard.press("Tab");
  assert.equal(await page.evaluate(() => document.activeElement?.textContent), "MCP servers");
  await page.keyboard.press("Enter");
  assert.equal(await page.evaluate(() => document.activeElement?.id), "cfg-mcp-title");
  assert.equal(await nav.getByRole("button", { name: "MCP servers" }).getAttribute("aria-current"), "true");
  await context.close();
});

for (const [name, options] of [
  ["settings", {}],
  ["settings-dark", { colorScheme: "dark" }],
  ["settings-zh", { locale: "zh-CN" }],
  ["settings-dark-zh", { colorScheme: "dark", locale: "zh-CN" }],
]) {
  test(`screenshots: ${name}`, async () => {
    const { page, problems, context } = await openSettings(full({ testDelayMs: 0 }), options);
    const zh = Boolean(options.locale);
    await page.getByRole("heading", { name: zh ? "设置" : "Settings" }).waitFor();
    await section(page, "mcp").locator('[data-server="db"]').waitFor();
    // The provider form open, after a successful test.
    await page.locator('[data-preset="openrouter"]').click();
    await page.getByRole("button", { name: zh ? "测试连接" : "Test connection" }).click();
    await page.locator(".cfg-models").waitFor();
    await shot(page, `${name}-providers`);
    const nav = page.getByRole("navigation", { name: zh ? "设置分区" : "Settings sections" });
    const jump = async (label) => {
      await nav.getByRole("button", { name: label }).click();
      // Out of the way, so no hover outline shows.
      await page.mouse.move(1270, 790);
      await page.waitForTimeout(700);
    };
    await jump(zh ? "限制" : "Limits");
    await shot(page, `${name}-limits`);
    await jump(zh ? "沙箱" : "Sandbox");
    await shot(page, `${name}-sandbox`);
    await jump(zh ? "审批规则" : "Approval rules");
    await shot(page, `${name}-rules`);
    await section(page, "mcp").locator('[data-server="db"] summary').click();
    await jump(zh ? "MCP 服务器" : "MCP servers");
    await shot(page, `${name}-mcp`);
    await section(page, "mcp").getByRole("button", { name: zh ? "编辑 fs" : "Edit fs" }).click();
    await page.getByRole("form", { name: zh ? "编辑 fs" : "Edit fs" }).scrollIntoViewIfNeeded();
    await page.mouse.move(1270, 790);
    await shot(page, `${name}-mcp-form`);
    if (options.colorScheme === "dark") {
      assert.equal(await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor), "rgb(22, 24, 29)");
    }
    assert.deepEqual(problems, []);
    await context.close();
  });
}

const failed = await run();
await browser.close();
process.exit(failed ? 1 : 0);
