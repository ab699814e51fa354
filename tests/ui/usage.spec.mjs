// The context meter, the waterfall and the tokens per day in the built UI (Chromium, the Rust
// side mocked): a turn with two parallel reads and a command that waits for approval, replayed
// through the real Channel code path. Screenshots in English and Chinese, light and dark.
import assert from "node:assert/strict";
import { join } from "node:path";
import { axeViolations, launchBrowser, openApp, run, screenshots, test } from "./lib.mjs";

const workspace = { path: "/home/me/demo", name: "demo", watched: true };
const browser = await launchBrowser();
const shot = (page, name) => page.screenshot({ path: join(screenshots, `${name}.png`) });
const box = (locator) => locator.boundingBox();

async function ask(page, question) {
  const input = page.locator(".composer textarea");
  await input.fill(question);
  await input.press("Enter");
  await page.waitForFunction((q) => window.__mock.calls.some((c) => c.cmd === "send_message" && c.args.text === q), question);
}

/** The turn up to the approval, then (after `y`) the rest of it. */
async function playTurn(page) {
  await ask(page, "What does this project do?");
  // One stream, delivered in two parts, so its times are one clock's.
  await page.evaluate(() => {
    window.__turn = window.__mock.stream.approvedAndAnswered().events;
    window.__mock.deliver(window.__turn.slice(0, window.__mock.stream.answeredTurn().events.length));
  });
  await page.getByRole("region", { name: /Approval|审批/ }).waitFor();
}

async function finishTurn(page) {
  await page.keyboard.press("y");
  await page.waitForFunction(() => window.__mock.calls.some((c) => c.cmd === "answer_approval"));
  await page.evaluate(() => window.__mock.deliver(window.__turn.slice(window.__mock.stream.answeredTurn().events.length)));
}

test("the context meter follows the latest request, and the tokens are counted per question and in all", async () => {
  const { page, problems, context } = await openApp(browser, { workspace });
  await playTurn(page);
  const meter = page.getByRole("meter", { name: "Context window" });
  assert.equal(await meter.innerText(), "2,310 / 8,192 tokens");
  assert.match(await meter.getAttribute("class"), /level-ok/);
  await finishTurn(page);
  await page.getByTestId("turn-tokens").waitFor();
  assert.equal(await meter.innerText(), "5,480 / 8,192 tokens");
  assert.match(await meter.getAttribute("class"), /level-high/);
  assert.equal(await meter.getAttribute("title"), "The latest request to the model took 5,480 of its 8,192-token context window (67%).");
  assert.equal(await page.getByTestId("turn-tokens").innerText(), "540 tokens");
  assert.equal(await page.getByTestId("conversation-tokens").innerText(), "540 tokens in this conversation");
  assert.deepEqual(problems, []);
  await context.close();
});

test("the waterfall: parallel calls overlap, an approval's wait shows, hover tells the times, the choice is remembered", async () => {
  const { page, problems, context } = await openApp(browser, { workspace });
  await playTurn(page);
  await page.getByRole("radio", { name: "Waterfall" }).click();
  const waterfall = page.getByTestId("waterfall");
  await waterfall.waitFor();
  const bar = (callId, kind) => waterfall.locator(`[data-call-id="${callId}"] .wf-bar[data-kind="${kind}"]`);

  // The two reads ran side by side: two rows whose bars start together and overlap in time.
  const read = await box(bar("call_read", "run"));
  const grep = await box(bar("call_grep", "run"));
  assert.ok(Math.abs(read.x - grep.x) < 1, `${read.x} vs ${grep.x}`);
  assert.ok(read.y !== grep.y, "one row each");
  assert.ok(read.x + read.width > grep.x, "they overlap");

  // The command waits: its hatched wait grows while nobody answers.
  await bar("call_bash", "wait").waitFor();
  assert.equal(await bar("call_bash", "run").count(), 0);
  await shot(page, "waterfall-waiting");

  await finishTurn(page);
  await bar("call_bash", "run").waitFor();
  const wait = await box(bar("call_bash", "wait"));
  const ran = await box(bar("call_bash", "run"));
  assert.ok(Math.abs(wait.x + wait.width - ran.x) < 1.5, `the run begins where the wait ends: ${wait.x + wait.width} vs ${ran.x}`);
  assert.ok(wait.width > ran.width, "it waited 1.5 s and ran 0.34 s");

  await bar("call_bash", "run").hover();
  const tip = page.getByRole("tooltip");
  await tip.waitFor();
  const text = await tip.innerText();
  assert.match(text, /execute_bash go vet/);
  assert.match(text, /Duration: 340 ms/);
  assert.match(text, /Waited for approval: 1\.5 s/);
  assert.match(text, /Start: \+/);
  await shot(page, "waterfall-en-light");

  // Remembered: the window opens the waterfall next time.
  await page.reload();
  await page.getByRole("radio", { name: "Waterfall" }).waitFor();
  assert.equal(await page.getByRole("radio", { name: "Waterfall" }).getAttribute("aria-checked"), "true");
  assert.deepEqual(problems, []);
  await context.close();
});

for (const [lang, scheme] of [
  ["en", "dark"],
  ["zh", "light"],
  ["zh", "dark"],
]) {
  test(`the waterfall and the meter in ${lang === "zh" ? "Chinese" : "English"}, ${scheme}`, async () => {
    const { page, problems, context } = await openApp(browser, { workspace }, { locale: lang === "zh" ? "zh-CN" : "en-US", colorScheme: scheme });
    await playTurn(page);
    await page.getByRole("radio", { name: lang === "zh" ? "瀑布图" : "Waterfall" }).click();
    await finishTurn(page);
    await page.getByTestId("turn-tokens").waitFor();
    await page.getByTestId("waterfall").locator('[data-call-id="call_bash"] .wf-bar[data-kind="run"]').waitFor();
    if (lang === "zh") {
      assert.equal(await page.getByRole("meter", { name: "上下文窗口" }).innerText(), "5,480 / 8,192 词元");
      assert.equal(await page.getByTestId("turn-tokens").innerText(), "540 词元");
      await page.getByText("模型 · 第 3 轮").waitFor();
    }
    await shot(page, `waterfall-${lang}-${scheme}`);
    assert.deepEqual(problems, []);
    await context.close();
  });
}

test("stats: tokens per day, and their cost where the provider has prices", async () => {
  const day = (daysAgo) => {
    const date = new Date();
    date.setHours(0, 0, 0, 0);
    return date.getTime() - daysAgo * 86_400_000;
  };
  const tokens = [
    { day_start_ms: day(1), model: "gpt-4o-mini", prompt_tokens: 1_200_000, completion_tokens: 300_000, total_tokens: 1_500_000, requests: 240 },
    { day_start_ms: day(1), model: "qwen2.5-coder:7b", prompt_tokens: 52_000, completion_tokens: 8_100, total_tokens: 60_100, requests: 31 },
    { day_start_ms: day(0), model: "gpt-4o-mini", prompt_tokens: 400_000, completion_tokens: 100_000, total_tokens: 500_000, requests: 80 },
  ];
  const settings = await (async () => {
    const { page, context } = await openApp(browser, { workspace });
    const s = await page.evaluate(() => window.__TAURI_INTERNALS__.invoke("get_settings"));
    await context.close();
    return s;
  })();
  settings.providers.push({ id: "openai", name: "OpenAI", base_url: "https://api.openai.com/v1", model: "gpt-4o-mini", key_stored: true, active: false, tool_mode: null, price_input_per_mtok: 0.15, price_output_per_mtok: 0.6 });
  for (const [lang, scheme] of [
    ["en", "light"],
    ["zh", "dark"],
  ]) {
    const { page, problems, context } = await openApp(browser, { workspace, tokens, settings }, { locale: lang === "zh" ? "zh-CN" : "en-US", colorScheme: scheme });
    await page.getByRole("tab", { name: lang === "zh" ? "统计" : "Stats" }).click();
    const table = page.getByTestId("tokens-table");
    await table.waitFor();
    const cost = (row) => table.locator("tbody tr").nth(row).locator("td").last().innerText();
    // Chinese writes US dollars as US$.
    const usd = (amount) => (lang === "zh" ? `US$${amount}` : `$${amount}`);
    assert.equal(await cost(0), usd("0.36"));
    assert.equal(await cost(1), lang === "zh" ? "未设价格" : "No price set");
    assert.equal(await table.locator("tfoot td").last().innerText(), usd("0.48"));
    await shot(page, `stats-tokens-${lang}-${scheme}`);
    assert.deepEqual(problems, []);
    await context.close();
  }
});

test("an AGENTS.md left out is said with why in the empty chat and the context meter, in both languages, and passes axe", async () => {
  const instructions = {
    file: "CLAUDE.md",
    cut: true,
    limit_kib: 16,
    left_out: [{ file: "AGENTS.md", reason: "link_outside" }],
  };
  const cases = [
    { lang: "en-US", leftOut: "AGENTS.md was left out: it is a link to a file outside the folder.", cut: "CLAUDE.md is over 16 KiB: new conversations get only its beginning." },
    { lang: "zh-CN", leftOut: "未采用 AGENTS.md：它是指向文件夹外文件的链接。", cut: "CLAUDE.md 超过 16 KiB：新对话只读取它的开头部分。" },
  ];
  for (const { lang, leftOut, cut } of cases) {
    const { page, problems, context } = await openApp(browser, { workspace, instructions }, { locale: lang });
    const line = page.getByTestId("instructions-left-out");
    await line.waitFor();
    assert.equal(await line.innerText(), leftOut);
    assert.equal(await page.getByTestId("instructions-cut").innerText(), cut);
    const meter = page.getByTestId("meter-instructions-left-out");
    assert.equal(await meter.getAttribute("title"), leftOut);
    assert.deepEqual(await axeViolations(page, "main"), []);
    await shot(page, `instructions-left-out-${lang}`);
    assert.deepEqual(problems, []);
    await context.close();
  }
});

const failed = await run();
await browser.close();
process.exit(failed ? 1 : 0);
