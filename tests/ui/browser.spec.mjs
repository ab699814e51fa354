// The built UI in Chromium, with the Rust side mocked (ui/tests/mock-backend.ts): a recorded-
// style event stream — text, parallel tool calls, an approval, an error, a cancel — replayed
// through the real Channel code path. Screenshots of the main states go to target/screenshots/.
import assert from "node:assert/strict";
import { join } from "node:path";
import { launchBrowser, openApp, run, screenshots, test } from "./lib.mjs";

const workspace = { path: "/home/me/demo", name: "demo", watched: true };
const browser = await launchBrowser();

const shot = (page, name) => page.screenshot({ path: join(screenshots, `${name}.png`) });
const calls = (page, cmd) => page.evaluate((cmd) => window.__mock.calls.filter((c) => c.cmd === cmd).map((c) => c.args), cmd);
const deliver = (page, build) => page.evaluate(`window.__mock.deliver((${build})(window.__mock.stream))`);

async function ask(page, question) {
  const box = page.getByRole("textbox", { name: /Ask about|就/ });
  await box.fill(question);
  await box.press("Enter");
  await page.waitForFunction((q) => window.__mock.calls.some((c) => c.cmd === "send_message" && c.args.text === q), question);
}

test("first run names the endpoint and how to change it", async () => {
  const { page, problems, context } = await openApp(browser, { recent: [{ path: "/home/me/other", name: "other", opened_ms: 1 }] });
  const endpoint = page.getByTestId("endpoint");
  await endpoint.waitFor();
  const text = await endpoint.innerText();
  assert.match(text, /http:\/\/localhost:11434\/v1/);
  assert.match(text, /config\.toml/);
  assert.match(text, /TOOLTRAIL_BASE_URL/);
  await page.getByRole("button", { name: "Open folder…" }).waitFor();
  await page.getByText("/home/me/other").waitFor();
  await shot(page, "first-run");
  assert.deepEqual(problems, []);
  await context.close();
});

test("a full turn: text, parallel calls, approval, streamed markdown answer, timeline", async () => {
  const { page, problems, context } = await openApp(browser, { workspace });
  await ask(page, "What does this project do?");
  await page.getByText("Thinking…").waitFor();

  // Up to the approval: text, two parallel reads, then a command waiting for the user.
  await deliver(page, "(s) => s.answeredTurn().events");
  const card = page.getByRole("region", { name: "Approval" });
  await card.waitFor();
  assert.match(await card.innerText(), /go vet \.\/\.\.\. > vet\.txt/);
  assert.match(await card.innerText(), /in the workspace folder/);
  assert.match(await card.innerText(), /redirection/);
  assert.equal(await page.locator(".timeline-card").count(), 3);
  assert.equal(await page.locator(".timeline-card.phase-success").count(), 2);
  assert.equal(await page.locator(".timeline-card.phase-waiting").count(), 1);
  await shot(page, "approval");

  // Nothing happens by itself: a while later the card still waits.
  await page.waitForTimeout(300);
  assert.deepEqual(await calls(page, "answer_approval"), []);

  // Y allows once.
  await page.keyboard.press("y");
  await page.waitForFunction(() => window.__mock.calls.some((c) => c.cmd === "answer_approval"));
  assert.deepEqual(await calls(page, "answer_approval"), [{ callId: "call_bash", reply: { decision: "allow_once" } }]);

  // The rest streams: the command runs, then the answer arrives piece by piece.
  const rest = await page.evaluate(() => {
    const all = window.__mock.stream.approvedAndAnswered().events;
    return all.slice(window.__mock.stream.answeredTurn().events.length);
  });
  const half = Math.floor(rest.length * 0.6);
  await page.evaluate((events) => window.__mock.deliver(events), rest.slice(0, half));
  await page.locator(".call-time.live, .timeline-card.phase-success").first().waitFor();
  await page.getByRole("button", { name: /Stop/ }).waitFor();
  await shot(page, "streaming");
  await page.evaluate((events) => window.__mock.deliver(events), rest.slice(half));

  const chat = page.getByTestId("chat");
  await chat.getByRole("heading", { name: "What it does" }).waitFor();
  assert.equal(await chat.locator("pre code .hljs-keyword").first().innerText(), "func");
  // The model's raw HTML is never rendered: its tags are dropped, its text stays text.
  assert.equal(await chat.locator("script").count(), 0);
  assert.equal(await page.evaluate(() => window.__alerted ?? false), false);
  assert.equal(await page.locator(".timeline-card.phase-success").count(), 3);
  await page.getByRole("button", { name: "Send" }).waitFor();

  // Expand a card: full arguments and result with copy buttons.
  await page.locator('.timeline-card[data-call-id="call_grep"] .card-head').click();
  const expanded = page.locator('.timeline-card[data-call-id="call_grep"]');
  await expanded.getByText("main.go:5: func main() {").waitFor();
  assert.match(await expanded.innerText(), /"pattern": "func main"/);
  assert.equal(await expanded.getByRole("button", { name: /Copy/ }).count(), 2);
  await shot(page, "timeline-expanded");

  // Card → message and message → card.
  await expanded.getByRole("button", { name: "Show in chat" }).click();
  await page.locator('.call-chip.selected[data-chip-id="call_grep"]').waitFor();
  await page.locator('.call-chip[data-chip-id="call_read"]').click();
  await page.locator('.timeline-card.selected[data-call-id="call_read"]').waitFor();
  assert.deepEqual(problems, []);
  await context.close();
});

test("MCP servers are listed with their state, and their calls name the server", async () => {
  const mcp = {
    servers: [
      { name: "fs", state: "running", tools: 14 },
      { name: "db", state: "failed", tools: 0, error: 'the MCP server "db" could not be started: "pg-mcp" was not found (searched the PATH)' },
    ],
  };
  const { page, problems, context } = await openApp(browser, { workspace, mcp });
  const servers = page.getByTestId("mcp-servers");
  await servers.waitFor();
  assert.match(await servers.innerText(), /fs\s+running · 14 tools/);
  assert.match(await servers.innerText(), /db\s+failed[\s\S]*pg-mcp" was not found/);
  await ask(page, "What is in the README?");
  const events = await page.evaluate(() => {
    const b = new window.__mock.stream.StreamBuilder().start("t1", "What is in the README?");
    const args = { path: "README.md" };
    b.callDelta(1, 0, "call_fs", "fs__read_text_file", args).started(1, "call_fs", "fs__read_text_file", args);
    b.finished(1, "call_fs", "fs__read_text_file", args, "success", 9, "# Demo");
    return b.text(2, "It is a small Go service.").finish("completed", 2, "It is a small Go service.").events;
  });
  await page.evaluate((events) => window.__mock.deliver(events), events.slice(0, -1));
  await page.locator('.timeline-card.phase-success[data-call-id="call_fs"] .card-head').click();
  const card = page.locator('.timeline-card[data-call-id="call_fs"]');
  await card.getByText("from MCP server fs").waitFor();
  await shot(page, "mcp");
  // The list is asked for again once a turn ends (a turn may start or lose a server).
  const before = (await calls(page, "mcp_servers")).length;
  await page.evaluate((events) => window.__mock.deliver(events), events.slice(-1));
  await page.waitForFunction((n) => window.__mock.calls.filter((c) => c.cmd === "mcp_servers").length > n, before);
  assert.deepEqual(problems, []);
  await context.close();
});

test("an error is shown in place with a retry that asks again", async () => {
  const { page, problems, context } = await openApp(browser, { workspace });
  await ask(page, "And the tests?");
  await deliver(page, "(s) => s.failedTurn().events");
  const alert = page.getByRole("alert");
  await alert.waitFor();
  assert.match(await alert.innerText(), /Could not reach the model/);
  await shot(page, "error");
  await alert.getByRole("button", { name: "Retry" }).click();
  await page.waitForFunction(() => window.__mock.calls.filter((c) => c.cmd === "send_message").length === 2);
  const sends = await calls(page, "send_message");
  assert.equal(sends[1].text, "And the tests?");
  assert.equal(sends[1].conversationId, "conv_1");
  assert.deepEqual(problems, []);
  await context.close();
});

test("a question that cannot be sent says why and offers a retry", async () => {
  const { page, context } = await openApp(browser, { workspace, sendError: { code: "model", message: "Could not connect to http://localhost:11434/v1." } });
  await ask(page, "Hello?");
  const alert = page.getByRole("alert");
  await alert.waitFor();
  assert.match(await alert.innerText(), /could not be sent: Could not connect/);
  await alert.getByRole("button", { name: "Retry" }).waitFor();
  await context.close();
});

test("Esc stops a running turn; the calls it left end as cancelled", async () => {
  const { page, problems, context } = await openApp(browser, { workspace });
  await ask(page, "Count every line of code");
  const events = await page.evaluate(() => window.__mock.stream.cancelledTurn().events);
  await page.evaluate((e) => window.__mock.deliver(e), events.slice(0, 5));
  await page.locator(".timeline-card.phase-running").waitFor();
  await page.waitForTimeout(400); // the live timer ticks
  assert.match(await page.locator(".timeline-card.phase-running .call-time.live").innerText(), /\d+ ms|\d\.\d s/);
  await shot(page, "running");
  await page.keyboard.press("Escape");
  await page.waitForFunction(() => window.__mock.calls.some((c) => c.cmd === "cancel_turn"));
  assert.deepEqual(await calls(page, "cancel_turn"), [{ conversationId: "conv_1" }]);
  await page.evaluate((e) => window.__mock.deliver(e), events.slice(5));
  await page.getByText("Stopped. What was said so far is kept.").waitFor();
  await page.locator(".timeline-card.phase-cancelled").waitFor();
  assert.deepEqual(problems, []);
  await context.close();
});

test("deny with a reason for the model, from the keyboard", async () => {
  const { page, context } = await openApp(browser, { workspace });
  await ask(page, "What does this project do?");
  await deliver(page, "(s) => s.answeredTurn().events");
  await page.getByRole("region", { name: "Approval" }).waitFor();
  await page.keyboard.press("n");
  const reason = page.getByRole("textbox", { name: "Reason for the model (optional)" });
  await reason.waitFor();
  await reason.fill("do not write files");
  await reason.press("Enter");
  await page.waitForFunction(() => window.__mock.calls.some((c) => c.cmd === "answer_approval"));
  assert.deepEqual(await calls(page, "answer_approval"), [{ callId: "call_bash", reply: { decision: "deny", reason: "do not write files" } }]);
  await context.close();
});

test("files changed since the last answer are announced", async () => {
  const { page, context } = await openApp(browser, { workspace });
  await page.getByRole("textbox").waitFor();
  await page.evaluate(() => window.__mock.emit("files-changed", { workspace: "/home/me/demo", paths: ["main.go", "README.md"], count: 2 }));
  await page.getByTestId("files-changed").getByText("2 files changed since the last answer").waitFor();
  await context.close();
});

test("a stored conversation redraws in the dark theme", async () => {
  const loaded = { conv_1: null };
  const { page, context } = await openApp(
    browser,
    { workspace, conversations: [{ id: "conv_1", title: "What does this project do?", workspace: "/home/me/demo", updated_ms: 1, turns: 2, running: false }], loaded },
    { colorScheme: "dark" },
  );
  await page.evaluate(() => {
    const s = window.__mock.stream;
    const b = s.approvedAndAnswered();
    s.failedTurn(b);
    window.__mock.config.loaded = { conv_1: b.events };
  });
  await page.getByRole("button", { name: /What does this project do\?/ }).click();
  await page.getByRole("heading", { name: "What it does" }).waitFor();
  await page.locator('.timeline-card[data-call-id="call_bash"] .card-head').click();
  const background = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
  assert.equal(background, "rgb(22, 24, 29)");
  await shot(page, "dark");
  await context.close();
});

test("Simplified Chinese throughout, approval included", async () => {
  const { page, context } = await openApp(browser, { workspace }, { locale: "zh-CN" });
  await page.getByText("还没有对话。").waitFor();
  await ask(page, "这个项目是做什么的？");
  await deliver(page, "(s) => s.answeredTurn().events");
  const card = page.getByRole("region", { name: "审批" });
  await card.waitFor();
  await card.getByRole("button", { name: /允许一次/ }).waitFor();
  await page.getByText("时间线").waitFor();
  await shot(page, "chinese");
  await context.close();
});

test("always allowing a command in the folder: offered with the rule it keeps, key W (Chinese)", async () => {
  const { page, problems, context } = await openApp(browser, { workspace }, { locale: "zh-CN" });
  await ask(page, "运行测试");
  await deliver(page, "(s) => s.ruleOffered().events");
  const card = page.getByRole("region", { name: "审批" });
  await card.waitFor();
  await card.getByRole("button", { name: /在此文件夹中始终允许/ }).waitFor();
  assert.match(await card.innerText(), /以“go test \.\/\.\.\.”开头的命令在此文件夹中运行时不再询问/);
  await shot(page, "chinese-always-allow");
  await page.keyboard.press("w");
  await page.waitForFunction(() => window.__mock.calls.some((c) => c.cmd === "answer_approval"));
  assert.deepEqual(await calls(page, "answer_approval"), [{ callId: "call_test", reply: { decision: "allow_in_workspace" } }]);
  assert.deepEqual(problems, []);
  await context.close();
});

const failed = await run();
await browser.close();
process.exit(failed ? 1 : 0);
