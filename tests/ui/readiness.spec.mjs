// What stands between a question and its answer, in Chromium with the Rust side mocked
// (ui/tests/mock-backend.ts): a folder opened where no model answers says so above the
// composer before any question fails, opens the guide, and goes once a model is chosen; a
// question waiting for the local model says it is starting, then being prepared, with the
// seconds; a long prompt shows how much of it the server has read, until the answer streams.
// Each state is checked with axe-core (WCAG 2.2 A and AA and best practice) and screenshotted
// to target/screenshots/readiness-*.png, light and dark, English and Chinese.
import assert from "node:assert/strict";
import { join } from "node:path";
import { axeViolations, launchBrowser, LOOKS, openApp, run, screenshots, test } from "./lib.mjs";

const browser = await launchBrowser();
const workspace = { path: "/home/me/demo", name: "demo", watched: true };

const shot = (page, name) => page.screenshot({ path: join(screenshots, `readiness-${name}.png`) });

/** Fails with every fault axe finds in the page as it is now. */
async function axe(page, what) {
  const found = await axeViolations(page);
  assert.deepEqual(found, [], `axe found problems in ${what}:\n  ${found.join("\n  ")}`);
}

const endpoint = { base_url: "http://localhost:11434/v1", model: null, api_key_set: false, config_path: "/home/me/.config/tooltrail/config.toml", problem: null, key_problem: null };
const refused = "Could not connect to the model endpoint http://localhost:11434/v1 (connection refused).";
const servers = [{ kind: "llama_cpp", base_url: "http://127.0.0.1:8080/v1", needs_api_key: false, models: [{ id: "Qwen2.5-Coder-1.5B", tools: "yes", vision: "no", context_window: 8192, max_context_window: 32768 }] }];
const nothingAnswers = () => ({ ready: false, problem: refused, local: false, endpoint, servers, looked_ms: 2 });

async function ask(page, question) {
  const box = page.locator(".composer textarea");
  await box.fill(question);
  await box.press("Enter");
  await page.waitForFunction((q) => window.__mock.calls.some((c) => c.cmd === "send_message" && c.args.text === q), question);
}

test("a folder opened where no model answers: said above the composer before any question, with the reason", async () => {
  for (const look of LOOKS) {
    const { page, problems, context } = await openApp(browser, { workspace, guide: nothingAnswers() }, look.options);
    const notice = page.getByTestId("no-model");
    await notice.waitFor();
    const text = await notice.innerText();
    assert.match(text, look.zh ? /还没有可以回答问题的模型。/ : /No model answers questions yet\./);
    assert.match(text, /connection refused/);
    assert.ok(await notice.getByRole("button", { name: look.zh ? "选择模型…" : "Choose a model…" }).isVisible());
    // Above the composer, and the composer still takes a question.
    const [noticeBox, composerBox] = await Promise.all([notice.boundingBox(), page.locator(".composer").boundingBox()]);
    assert.ok(noticeBox.y + noticeBox.height <= composerBox.y, `the notice (${JSON.stringify(noticeBox)}) is above the composer (${JSON.stringify(composerBox)})`);
    assert.equal(await page.locator(".composer textarea").isEditable(), true);
    await shot(page, `no-model-${look.file}`);
    await axe(page, `the no-model notice (${look.file})`);
    assert.deepEqual(problems, []);
    await context.close();
  }
});

test("the notice opens the guide; once a model is chosen there, it is gone", async () => {
  const { page, problems, context } = await openApp(browser, { workspace, guide: nothingAnswers() }, LOOKS[0].options);
  await page.getByTestId("no-model").getByRole("button", { name: "Choose a model…" }).click();
  const server = page.locator('[data-server="http://127.0.0.1:8080/v1"]');
  await server.getByRole("button", { name: /^Use / }).click();
  await page.getByTestId("guide-ready").getByRole("button", { name: "Back to the conversation" }).click();
  await page.getByTestId("chat").waitFor();
  await page.waitForFunction(() => !document.querySelector('[data-testid="no-model"]'));
  assert.deepEqual(await page.evaluate(() => window.__mock.config.usedServers), [{ baseUrl: "http://127.0.0.1:8080/v1", model: "Qwen2.5-Coder-1.5B" }]);
  assert.deepEqual(problems, []);
  await context.close();
});

test("Check again takes the notice away when a model has started answering meanwhile", async () => {
  const { page, problems, context } = await openApp(browser, { workspace, guide: nothingAnswers() }, LOOKS[0].options);
  const notice = page.getByTestId("no-model");
  await notice.waitFor();
  await page.evaluate(() => Object.assign(window.__mock.config.guide, { ready: true, problem: null }));
  await notice.getByRole("button", { name: "Check again" }).click();
  await page.waitForFunction(() => !document.querySelector('[data-testid="no-model"]'));
  assert.deepEqual(problems, []);
  await context.close();
});

test("a question waiting for the local model, then for a long prompt to be read", async () => {
  for (const look of LOOKS) {
    const { page, problems, context } = await openApp(browser, { workspace }, look.options);
    await page.getByRole("tab").first().waitFor();
    const question = look.zh ? "这个项目是做什么的？" : "What does this project do?";
    await ask(page, question);
    await page.evaluate(() => window.__mock.emit("local-model", { phase: "starting", model: "gemma3-270m" }));
    const wait = page.getByTestId("local-model-wait");
    await wait.getByText(look.zh ? "正在启动本地模型（gemma3-270m）…" : "Starting the local model (gemma3-270m)…").waitFor();
    assert.match(await wait.getByTestId("local-model-seconds").innerText(), look.zh ? /^\d+ 秒$/ : /^\d+ s$/);
    await shot(page, `local-start-${look.file}`);
    await axe(page, `the local model starting (${look.file})`);

    await page.evaluate(() => window.__mock.emit("local-model", { phase: "warming", model: "gemma3-270m" }));
    await wait.getByText(look.zh ? "正在准备模型（gemma3-270m）…" : "Preparing the model (gemma3-270m)…").waitFor();

    // The turn begins and the server reads the prompt: the wait gives way to the reading.
    await page.evaluate((q) => window.__mock.deliver(window.__mock.stream.longPromptTurn(undefined, q).events), question);
    const reading = page.getByTestId("prompt-progress");
    await reading.waitFor();
    assert.equal(await wait.count(), 0);
    assert.equal(
      await reading.innerText(),
      look.zh ? "正在读取提示：1,200 个词元中已读 640 个（300 个来自缓存）· 1.2 秒" : "Reading the prompt: 640 of 1,200 tokens (300 from cache) · 1.2 s",
    );
    const bar = page.getByRole("progressbar", { name: look.zh ? "提示读取进度" : "Prompt read" });
    assert.deepEqual(await bar.evaluate((el) => [el.value, el.max]), [640, 1200]);
    await shot(page, `prompt-progress-${look.file}`);
    await axe(page, `the prompt being read (${look.file})`);

    // The answer streams: the reading is gone.
    await page.evaluate(() => {
      const { longPromptAnswered, longPromptTurn } = window.__mock.stream;
      window.__mock.deliver(longPromptAnswered().events.slice(longPromptTurn().events.length));
    });
    await page.getByText("A small Go service.").waitFor();
    assert.equal(await reading.count(), 0);
    assert.deepEqual(problems, []);
    await context.close();
  }
});

test("a reopened conversation shows no reading of its prompt", async () => {
  const { page, problems, context } = await openApp(browser, { workspace, conversations: [{ id: "conv_1", title: "Loaded", workspace: workspace.path, updated_ms: 1, turns: 1, running: false }] }, LOOKS[0].options);
  // What the store keeps: the events without the text pieces.
  await page.evaluate(() => {
    window.__mock.config.loaded = { conv_1: window.__mock.stream.longPromptAnswered().events.filter((e) => e.type !== "text_delta") };
  });
  await page.getByRole("button", { name: /Loaded/ }).first().click();
  await page.getByText("A small Go service.").waitFor();
  assert.equal(await page.getByTestId("prompt-progress").count(), 0);
  assert.equal(await page.getByRole("progressbar").count(), 0);
  assert.deepEqual(problems, []);
  await context.close();
});

const failed = await run();
await browser.close();
process.exit(failed ? 1 : 0);
