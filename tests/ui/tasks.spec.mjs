// A call the MCP server runs as a task (MCP Tasks), on its timeline card in the built UI
// (Chromium, the Rust side mocked): the task's state as it changes (working with the server's
// words, needs your answer, done), in both themes and both languages, with axe-core finding
// nothing. Screenshots go to target/screenshots/tasks-*.png.
import assert from "node:assert/strict";
import { join } from "node:path";
import { axeViolations, launchBrowser, LOOKS, openApp, run, screenshots, test } from "./lib.mjs";

const browser = await launchBrowser();
const workspace = { path: "/home/me/demo", name: "demo", watched: true };
const shot = (page, name) => page.screenshot({ path: join(screenshots, `tasks-${name}.png`) });

async function axe(page, what) {
  const found = await axeViolations(page);
  assert.deepEqual(found, [], `axe found problems in ${what}:\n  ${found.join("\n  ")}`);
}

async function ask(page, question) {
  const box = page.locator(".composer textarea");
  await box.fill(question);
  await box.press("Enter");
  await page.waitForFunction((q) => window.__mock.calls.some((c) => c.cmd === "send_message" && c.args.text === q), question);
}

/** Delivers the task's states from the `from`-th on (the turn's start comes with the first). */
function deliver(page, states, from) {
  return page.evaluate(
    ({ states, from }) => {
      const events = window.__mock.stream.taskTurn(states).events;
      const head = window.__mock.stream.taskTurn([]).events.length;
      window.__mock.deliver(from === 0 ? events : events.slice(head + from));
    },
    { states, from },
  );
}

test("a task's state shows on its call's card as it changes, in every look", async () => {
  for (const look of LOOKS) {
    const { page, problems, context } = await openApp(browser, { workspace }, look.options);
    await page.getByRole("tab").first().waitFor({ timeout: 90_000 });
    await ask(page, "Research tides");
    const states = [
      ["working", "Gathering sources..."],
      ["working", "Analyzing content..."],
      ["input_required", 'Found multiple interpretations for "tides". Requesting clarification...'],
      ["working", "Generating report..."],
      ["completed"],
    ];
    await deliver(page, states.slice(0, 2), 0);
    const task = page.locator(".timeline-card .card-task");
    const working = look.zh ? "任务：进行中" : "Task: working";
    await page.getByRole("status", { name: working }).waitFor();
    assert.match(await task.innerText(), /Analyzing content\.\.\./);
    assert.match(await task.innerText(), /6669aa9e2ad37722/);
    await shot(page, `working-${look.file}`);
    await axe(page, `a working task's card (${look.file})`);

    await deliver(page, states.slice(0, 3), 2);
    await page.getByRole("status", { name: look.zh ? "任务：等待你的回答" : "Task: needs your answer" }).waitFor();
    await shot(page, `input-required-${look.file}`);
    await axe(page, `a task waiting for an answer (${look.file})`);

    await deliver(page, states, 3);
    await page.getByRole("status", { name: look.zh ? "任务：已完成" : "Task: done" }).waitFor();
    assert.deepEqual(problems, []);
    await context.close();
  }
});

const server = { name: "research", command: "research-mcp", args: [], url: null, env: {}, cwd: null, approval: "ask", tools: {}, disabled: false, timeout_secs: 60, tool_timeouts_secs: { crawl: 7200 } };
const settings = {
  providers: [],
  active_provider: null,
  limits: { max_rounds: 10, max_result_bytes: 32 * 1024, request_timeout_secs: 120, command_timeout_secs: 30 },
  tools: [],
  config_path: "/home/me/.config/tooltrail/config.toml",
  endpoint: { base_url: "http://localhost:11434/v1", model: null, api_key_set: false, config_path: "/home/me/.config/tooltrail/config.toml", problem: null },
  keychain: { available: true, message: null },
  learned_tool_modes: [],
};

test("Settings → MCP edits a tool's own time limit beside the server's, and says the defaults", async () => {
  for (const look of [LOOKS[0], LOOKS[3]]) {
    const config = { workspace, settings, mcpConfig: { path: "/home/me/.config/tooltrail/mcp.json", servers: [server], problem: null }, mcp: { servers: [{ name: "research", state: "idle", tools: 0 }] } };
    const { page, problems, context } = await openApp(browser, config, look.options);
    await page.getByRole("tab").first().waitFor({ timeout: 90_000 });
    await page.keyboard.press("Control+Comma");
    const mcp = page.getByTestId("cfg-section-mcp");
    await mcp.locator('[data-server="research"]').getByRole("button", { name: look.zh ? "编辑 research" : "Edit research" }).click();
    const form = page.getByRole("form", { name: look.zh ? "编辑 research" : "Edit research" });
    const text = await form.innerText();
    assert.match(text, look.zh ? /默认：60 秒/ : /Default: 60 seconds\./);
    assert.match(text, look.zh ? /任务最多可运行一小时/ : /a task may run for up to an hour/);
    const seconds = form.getByLabel(look.zh ? "工具 1 的时间上限（秒）" : "Time limit of tool 1, in seconds");
    assert.equal(await form.getByLabel(look.zh ? "时间上限 1 的工具名" : "Tool name of time limit 1").inputValue(), "crawl");
    assert.equal(await seconds.inputValue(), "7200");
    await form.getByRole("button", { name: look.zh ? "+ 添加时间上限" : "+ Add a time limit" }).click();
    await form.getByLabel(look.zh ? "时间上限 2 的工具名" : "Tool name of time limit 2").fill("summarise");
    await form.getByLabel(look.zh ? "工具 2 的时间上限（秒）" : "Time limit of tool 2, in seconds").fill("900");
    await form.locator("fieldset", { hasText: look.zh ? "按工具的时间上限" : "Per-tool time limit" }).scrollIntoViewIfNeeded();
    await shot(page, `settings-tool-time-limits-${look.file}`);
    const found = await axeViolations(page, '[data-testid="cfg-section-mcp"]');
    assert.deepEqual(found, [], `axe found problems in the server's form (${look.file}):\n  ${found.join("\n  ")}`);
    await form.getByRole("button", { name: look.zh ? "保存" : "Save" }).click();
    await page.waitForFunction(() => window.__mock.calls.some((c) => c.cmd === "save_mcp_server"));
    const saved = await page.evaluate(() => window.__mock.calls.filter((c) => c.cmd === "save_mcp_server").map((c) => c.args));
    assert.deepEqual(saved, [{ previousName: "research", server: { ...server, tool_timeouts_secs: { crawl: 7200, summarise: 900 } } }]);
    assert.deepEqual(problems, []);
    await context.close();
  }
});

test("History reads the calls again when tasks of an earlier run were picked up and ended", async () => {
  const { page, problems, context } = await openApp(browser, { workspace }, LOOKS[0].options);
  await page.getByRole("tab", { name: "History" }).click();
  const asked = () => page.evaluate(() => window.__mock.calls.filter((c) => c.cmd === "history_calls").length);
  await page.waitForFunction(() => window.__mock.calls.some((c) => c.cmd === "history_calls"));
  const before = await asked();
  await page.evaluate(() => window.__mock.emit("tasks-picked-up", 1));
  await page.waitForFunction((n) => window.__mock.calls.filter((c) => c.cmd === "history_calls").length > n, before);
  assert.deepEqual(problems, []);
  await context.close();
});

const failed = await run();
await browser.close();
process.exit(failed ? 1 : 0);
