// The first-run guide and Settings → Models in Chromium, with the Rust side mocked
// (ui/tests/mock-models.ts): a new machine where nothing answers, servers found with what their
// models can do, one picked and used; a download whose progress card survives moving between
// views and whose Cancel keeps the bytes; an import; the installed models, Use, Remove after a
// yes, the running model with Stop. Every state is checked with axe-core (WCAG 2.2 A and AA and
// best practice: contrast, labels, names, headings) in the light theme in English and the dark theme in Chinese, and
// screenshotted to target/screenshots/.
import assert from "node:assert/strict";
import { join } from "node:path";
import { axeViolations, launchBrowser, openApp, run, screenshots, test } from "./lib.mjs";

const browser = await launchBrowser();
const workspace = { path: "/home/me/demo", name: "demo", watched: true };
const CONFIG = "/home/me/.config/tooltrail/config.toml";
const LIGHT_EN = { colorScheme: "light", locale: "en-US" };
const DARK_ZH = { colorScheme: "dark", locale: "zh-CN" };

const shot = (page, name) => page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: true });
const calls = (page, cmd) => page.evaluate((cmd) => window.__mock.calls.filter((c) => c.cmd === cmd).map((c) => c.args), cmd);
const emit = (page, payload) => page.evaluate((p) => window.__mock.emit("model-pull", p), payload);

/** Runs axe on the page and fails with every violation, named. */
async function axe(page, what) {
  const found = await axeViolations(page);
  assert.deepEqual(found, [], `axe found problems in ${what}:\n  ${found.join("\n  ")}`);
}

const endpoint = { base_url: "http://localhost:11434/v1", model: null, api_key_set: false, config_path: CONFIG, problem: null, key_problem: null };
const unreachable = "Could not connect to the model endpoint http://localhost:11434/v1 (connection refused).";
const emptyGuide = () => ({ ready: false, problem: unreachable, local: false, endpoint, servers: [], looked_ms: 2 });
const servers = [
  {
    kind: "ollama",
    base_url: "http://127.0.0.1:11434/v1",
    needs_api_key: false,
    models: [
      { id: "qwen3:1.7b", tools: "yes", vision: "no", context_window: 4096, max_context_window: 40960 },
      { id: "gemma3:4b", tools: "no", vision: "yes", context_window: null, max_context_window: 131072 },
      { id: "phi4-mini", tools: "unknown", vision: "unknown", context_window: null, max_context_window: null },
    ],
  },
  { kind: "llama_cpp", base_url: "http://127.0.0.1:8080/v1", needs_api_key: false, models: [{ id: "Qwen2.5-Coder-1.5B", tools: "yes", vision: "no", context_window: 8192, max_context_window: 32768 }] },
];
const guideWithServers = () => ({ ...emptyGuide(), servers, looked_ms: 41 });

async function openGuide(config, options) {
  const opened = await openApp(browser, config, options);
  await opened.page.getByTestId("model-guide").waitFor();
  return opened;
}

test("a new machine where nothing answers: the start screen is a guide, not an error", async () => {
  for (const [options, name] of [[LIGHT_EN, "guide-empty-light-en"], [DARK_ZH, "guide-empty-dark-zh"]]) {
    const { page, problems, context } = await openGuide({ guide: emptyGuide() }, options);
    const guide = page.getByTestId("model-guide");
    await guide.getByTestId("guide-local").locator("[data-model]").first().waitFor();
    if (options === LIGHT_EN) {
      assert.match(await guide.innerText(), /Nothing answered at http:\/\/localhost:11434\/v1/);
      assert.match(await guide.getByTestId("guide-problem").innerText(), /connection refused/);
      assert.match(await guide.getByTestId("guide-servers").innerText(), /No model server answered \(looked for Ollama, LM Studio, llama\.cpp, vLLM and Jan at their usual addresses in 2 ms\)/);
      // The three ways: servers (none), a cloud model with a key, a model run here.
      assert.equal(await guide.getByLabel("Provider").inputValue(), "openai");
      assert.equal(await guide.getByLabel("API key for OpenAI").getAttribute("type"), "password");
      const local = await guide.getByTestId("guide-local").innerText();
      assert.match(local, /Qwen3 1\.7B/);
      assert.match(local, /1\.1 GB download · needs 2\.6 GB of memory · 40,960 tokens of context/);
      assert.ok(await guide.getByRole("button", { name: "Download and use Qwen3 1.7B" }).isVisible());
      assert.ok(await guide.getByRole("button", { name: "Import a GGUF file…" }).isVisible());
      // The endpoint's paragraph gave way to the guide.
      assert.equal(await page.getByTestId("endpoint").count(), 0);
    } else {
      assert.match(await guide.innerText(), /选择一个回答问题的模型/);
      assert.match(await guide.innerText(), /在本机运行模型/);
    }
    await shot(page, name);
    await axe(page, name);
    assert.deepEqual(problems, []);
    await context.close();
  }
});

test("servers found on this computer: what each model can do, one picked by keyboard and used", async () => {
  const { page, problems, context } = await openGuide({ guide: guideWithServers() }, LIGHT_EN);
  const ollama = page.locator('[data-server="http://127.0.0.1:11434/v1"]');
  const rows = await ollama.locator("tbody tr").allInnerTexts();
  assert.deepEqual(
    rows.map((row) => row.split("\t").map((cell) => cell.trim())),
    [
      ["qwen3:1.7b", "yes", "no", "4,096 of 40,960 tokens"],
      ["gemma3:4b", "no", "yes", "up to 131,072 tokens"],
      ["phi4-mini", "not said", "not said", "not said"],
    ],
  );
  // The first model that calls tools is picked; the arrow keys pick another.
  assert.equal(await ollama.getByRole("radio", { name: "qwen3:1.7b" }).isChecked(), true);
  await shot(page, "guide-servers-light-en");
  await axe(page, "the guide with servers (light, English)");
  await ollama.getByRole("radio", { name: "qwen3:1.7b" }).focus();
  await page.keyboard.press("ArrowDown");
  assert.equal(await ollama.getByRole("radio", { name: "gemma3:4b" }).isChecked(), true);
  await page.keyboard.press("Tab");
  const use = ollama.getByRole("button", { name: "Use gemma3:4b at Ollama" });
  assert.equal(await use.evaluate((el) => el === document.activeElement), true);
  const before = (await calls(page, "app_info")).length;
  await page.keyboard.press("Enter");
  await page.getByTestId("guide-ready").waitFor();
  assert.deepEqual(await calls(page, "use_server"), [{ baseUrl: "http://127.0.0.1:11434/v1", model: "gemma3:4b" }]);
  assert.match(await page.getByTestId("guide-ready").innerText(), /Questions go to gemma3:4b \(Ollama\) now\./);
  assert.ok(await page.getByTestId("guide-ready").getByRole("button", { name: "Open a folder and ask" }).isVisible());
  // The app reads where questions go again.
  await page.waitForFunction((n) => window.__mock.calls.filter((c) => c.cmd === "app_info").length > n, before);
  assert.deepEqual(problems, []);
  await context.close();

  const dark = await openGuide({ guide: guideWithServers() }, DARK_ZH);
  await dark.page.locator('[data-server="http://127.0.0.1:8080/v1"]').waitFor();
  assert.match(await dark.page.getByTestId("guide-servers").innerText(), /llama\.cpp server/);
  await shot(dark.page, "guide-servers-dark-zh");
  await axe(dark.page, "the guide with servers (dark, Chinese)");
  await dark.context.close();
});

test("a cloud model: the key is tested with the existing connection test and saved to the keychain", async () => {
  const { page, problems, context } = await openGuide({ guide: emptyGuide(), testDelayMs: 50 }, LIGHT_EN);
  const cloud = page.getByTestId("guide-cloud");
  await cloud.getByLabel("Provider").selectOption("openrouter");
  await cloud.getByRole("button", { name: "Test" }).click();
  await cloud.getByText("Paste the key first.").waitFor();
  await cloud.getByLabel("API key for OpenRouter").fill("sk-or-secret");
  await cloud.getByRole("button", { name: "Test" }).click();
  await cloud.getByText(/Connected: \d+ models listed\./).waitFor();
  assert.equal((await calls(page, "test_connection"))[0].provider.base_url, "https://openrouter.ai/api/v1");
  await cloud.getByRole("button", { name: "Save and use" }).click();
  // The mocked endpoint still does not answer, so the guide says what was chosen and why it
  // is not ready yet.
  await page.getByTestId("guide-chosen").getByText("Questions go to OpenRouter now.").waitFor();
  const saved = await calls(page, "save_provider");
  assert.equal(saved.length, 1);
  assert.equal(saved[0].activate, true);
  assert.equal(saved[0].provider.api_key, "sk-or-secret");
  assert.equal(await cloud.getByLabel("API key for OpenRouter").inputValue(), "");
  assert.deepEqual(problems, []);
  await context.close();
});

test("a download's progress card survives moving between views, and Cancel keeps the bytes", async () => {
  const config = { workspace, sendError: { code: "unreachable", message: unreachable }, guide: emptyGuide() };
  for (const [options, suffix] of [[LIGHT_EN, "light-en"], [DARK_ZH, "dark-zh"]]) {
    const { page, problems, context } = await openApp(browser, structuredClone(config), options);
    const english = options === LIGHT_EN;
    // The first question cannot be sent: the error links to the guide.
    await page.getByRole("textbox").first().fill("What is in here?");
    await page.keyboard.press("Enter");
    await page.getByRole("alert").getByRole("button", { name: english ? "Choose a model…" : "选择模型…" }).click();
    const guide = page.getByTestId("model-guide");
    await guide.waitFor();
    await guide.getByRole("button", { name: english ? "Download and use Qwen3 1.7B" : "下载并使用 Qwen3 1.7B" }).click();
    const card = page.locator('[data-download="qwen3-1.7b"]');
    await card.waitFor();
    assert.deepEqual(await calls(page, "pull_model"), [{ reference: "qwen3-1.7b", useAfter: true }]);
    await emit(page, { name: "qwen3-1.7b", reference: "qwen3-1.7b", phase: "downloading", done: 412_000_000, total: 1_107_409_472, bytes_per_sec: 12_300_000, seconds_left: 57 });
    await card.getByText(english ? "412 MB of 1.1 GB · 12 MB/s · 57 s left" : "412 MB / 1.1 GB · 12 MB/秒 · 剩余 57 秒").waitFor();
    assert.equal(Math.round(await card.locator("progress").evaluate((el) => el.value)), 37);
    await shot(page, `download-progress-${suffix}`);
    await axe(page, `the download card (${suffix})`);

    // To the history and on to Settings → Models: the same download, further on.
    await page.keyboard.press("Control+2");
    await page.keyboard.press("Control+Comma");
    const section = page.getByTestId("cfg-section-models");
    await section.waitFor();
    await emit(page, { name: "qwen3-1.7b", reference: "qwen3-1.7b", phase: "downloading", done: 600_000_000, total: 1_107_409_472, bytes_per_sec: 12_300_000, seconds_left: 41 });
    const again = section.locator('[data-download="qwen3-1.7b"]');
    await again.getByText(english ? "600 MB of 1.1 GB · 12 MB/s · 41 s left" : "600 MB / 1.1 GB · 12 MB/秒 · 剩余 41 秒").waitFor();
    await again.getByRole("button", { name: english ? "Cancel the download of qwen3-1.7b" : "取消 qwen3-1.7b 的下载" }).click();
    await again.getByRole("status").waitFor();
    if (english) {
      assert.match(await again.innerText(), /Stopped\. The 412 MB downloaded are kept; downloading qwen3-1\.7b again carries on from there\./);
      // The kept bytes are listed, with the way to carry on.
      await section.getByTestId("mdl-unfinished").getByRole("button", { name: "Carry on downloading qwen3-1.7b" }).waitFor();
    }
    assert.deepEqual(await page.evaluate(() => window.__mock.config.cancelled), ["qwen3-1.7b"]);
    assert.deepEqual(problems.filter((p) => !p.includes("unreachable") && !p.includes(unreachable)), []);
    await context.close();
  }
});

test("a download that fails says why in a sentence", async () => {
  const { page, context } = await openApp(browser, { workspace, guide: emptyGuide() }, LIGHT_EN);
  await page.getByRole("tab").first().waitFor();
  await page.keyboard.press("Control+Comma");
  const section = page.getByTestId("cfg-section-models");
  await section.getByRole("button", { name: "Download Qwen3 4B" }).click();
  const card = section.locator('[data-download="qwen3-4b"]');
  await card.waitFor();
  await emit(page, { name: "qwen3-4b", reference: "qwen3-4b", phase: "failed", message: "There is not enough free space in /home/me/.local/share/tooltrail/models for qwen3-4b: it needs 2.5 GB more and 1.2 GB is free." });
  await card.getByText("The download of qwen3-4b failed: There is not enough free space in /home/me/.local/share/tooltrail/models for qwen3-4b: it needs 2.5 GB more and 1.2 GB is free.").waitFor();
  await card.getByRole("button", { name: "Dismiss" }).click();
  assert.equal(await card.count(), 0);
  await context.close();
});

const installed = [
  { name: "gemma3-270m", size_bytes: 253_000_000, parameters: "270M", quantization: "Q4_K_M", context_length: 32768, has_chat_template: false, source: "copied from /home/me/Downloads/gemma3-270m.gguf", missing: false, chosen: true },
  { name: "qwen3-1.7b", size_bytes: 1_107_409_472, parameters: "1.7B", quantization: "Q4_K_M", context_length: 40960, has_chat_template: true, source: "catalogue (unsloth/Qwen3-1.7B-GGUF)", missing: false, chosen: false },
];
const modelsView = () => ({
  dir: "/home/me/.local/share/tooltrail/models",
  local_model: "gemma3-270m",
  local_active: true,
  installed: structuredClone(installed),
  unfinished: [],
  catalogue: [
    { name: "qwen3-1.7b", title: "Qwen3 1.7B", description: "Small and quick; calls tools reliably for its size. The one to start with.", size_bytes: 1107409472, memory_gb: 2.6, context_length: 40960, licence: "Apache-2.0", installed: true },
    { name: "qwen3-4b", title: "Qwen3 4B", description: "Better answers and tool use than 1.7B, at about half the speed.", size_bytes: 2497281312, memory_gb: 4.3, context_length: 40960, licence: "Apache-2.0", installed: false },
  ],
  runtime: { model: "gemma3-270m", pid: 41872, port: 36125, context_size: 8192, memory_bytes: 417_000_000, in_use: false, stops_in_secs: 540 },
  server_problem: null,
});

async function openModels(config, options) {
  const opened = await openApp(browser, config, options);
  await opened.page.getByRole("tab").first().waitFor();
  await opened.page.keyboard.press("Control+Comma");
  const section = opened.page.getByTestId("cfg-section-models");
  await section.getByTestId("mdl-installed").waitFor();
  return { ...opened, section };
}

test("Settings → Models: installed models, the one in use, Use, Remove after a yes, the running model and Stop", async () => {
  const { page, problems, context, section } = await openModels({ workspace, modelsView: modelsView() }, LIGHT_EN);
  const gemma = section.locator('[data-model="gemma3-270m"]').first();
  assert.match(await gemma.innerText(), /in use/);
  assert.match(await gemma.innerText(), /253 MB · 270M · Q4_K_M · context 32,768/);
  assert.match(await gemma.innerText(), /no chat template \(tools go in the prompt\)/);
  const qwen = section.getByTestId("mdl-installed").locator('[data-model="qwen3-1.7b"]');
  assert.match(await qwen.innerText(), /chat template · catalogue/);
  assert.match(await section.getByTestId("mdl-runtime").innerText(), /gemma3-270m · process 41872 · port 36125 · context 8,192 · memory 398 MiB · stops in 9 min unless used/);
  await section.scrollIntoViewIfNeeded();
  await shot(page, "settings-models-light-en");
  await axe(page, "Settings → Models (light, English)");

  await qwen.getByRole("button", { name: "Use qwen3-1.7b" }).click();
  await section.getByRole("status").filter({ hasText: "Questions go to qwen3-1.7b now." }).waitFor();
  assert.deepEqual(await calls(page, "use_model"), [{ name: "qwen3-1.7b" }]);
  await section.getByTestId("mdl-installed").locator('[data-model="qwen3-1.7b"]').getByText("in use").waitFor();

  // Remove asks first; Cancel (which has the focus) keeps it.
  const gemmaRow = section.getByTestId("mdl-installed").locator('[data-model="gemma3-270m"]');
  await gemmaRow.getByRole("button", { name: "Remove gemma3-270m" }).click();
  await gemmaRow.getByRole("group", { name: "Remove gemma3-270m (253 MB)?" }).waitFor();
  await page.keyboard.press("Enter");
  assert.equal((await calls(page, "remove_model")).length, 0);
  await gemmaRow.getByRole("button", { name: "Remove gemma3-270m" }).click();
  await gemmaRow.getByRole("button", { name: "Remove", exact: true }).click();
  await section.getByRole("status").filter({ hasText: "Removed gemma3-270m." }).waitFor();
  assert.deepEqual(await calls(page, "remove_model"), [{ name: "gemma3-270m" }]);

  await section.getByRole("button", { name: "Stop gemma3-270m" }).click();
  await section.getByRole("status").filter({ hasText: "Stopped gemma3-270m." }).waitFor();
  assert.match(await section.getByTestId("mdl-runtime").innerText(), /No model is running/);

  // A file on the hub by its reference; an empty field says what to give.
  await section.getByRole("button", { name: "Download", exact: true }).click();
  await section.getByText("Give a model's name or an hf.co/… file.").waitFor();
  await section.getByLabel("Download from Hugging Face").fill("hf.co/bartowski/Qwen_Qwen3-1.7B-GGUF/Qwen_Qwen3-1.7B-Q4_K_M.gguf");
  await section.getByRole("button", { name: "Download", exact: true }).click();
  await section.locator('[data-download="qwen_qwen3-1.7b-q4_k_m"]').waitFor();
  assert.deepEqual(await calls(page, "pull_model"), [{ reference: "hf.co/bartowski/Qwen_Qwen3-1.7B-GGUF/Qwen_Qwen3-1.7B-Q4_K_M.gguf", useAfter: false }]);
  assert.deepEqual(problems, []);
  await context.close();

  const dark = await openModels({ workspace, modelsView: modelsView() }, DARK_ZH);
  assert.match(await dark.section.getByTestId("mdl-runtime").innerText(), /正在运行/);
  await dark.section.scrollIntoViewIfNeeded();
  await shot(dark.page, "settings-models-dark-zh");
  await axe(dark.page, "Settings → Models (dark, Chinese)");
  await dark.context.close();
});

test("import from the guide: the model is used at once and the guide says so", async () => {
  const { page, context } = await openGuide({ guide: emptyGuide(), importPick: "/home/me/Downloads/Gemma3-270M.gguf" }, LIGHT_EN);
  await page.getByRole("button", { name: "Import a GGUF file…" }).click();
  await page.getByTestId("guide-ready").waitFor();
  assert.deepEqual(await calls(page, "import_model"), [{ path: null, useAfter: true }]);
  assert.match(await page.getByTestId("guide-ready").innerText(), /Imported gemma3-270m; questions go to it now\./);
  await context.close();
});

test("a turn whose endpoint could not be reached offers the guide beside Retry", async () => {
  const { page, context } = await openApp(browser, { workspace, guide: guideWithServers() }, LIGHT_EN);
  await page.getByRole("textbox").first().fill("And the tests?");
  await page.keyboard.press("Enter");
  await page.evaluate(() => window.__mock.deliver(window.__mock.stream.failedTurn().events));
  const alert = page.getByRole("alert").filter({ hasText: "Could not reach the model" });
  await alert.getByRole("button", { name: "Retry" }).waitFor();
  await alert.getByRole("button", { name: "Choose a model…" }).click();
  await page.getByTestId("guide-servers").locator("[data-server]").first().waitFor();
  await page.locator('[data-server="http://127.0.0.1:8080/v1"]').getByRole("button", { name: /^Use / }).click();
  await page.getByTestId("guide-ready").getByRole("button", { name: "Back to the conversation" }).click();
  await page.getByTestId("chat").waitFor();
  await context.close();
});

const failed = await run();
await browser.close();
process.exit(failed ? 1 : 0);
