// Where Tooltrail cannot run models itself (Windows, for now: the backend says
// `runtime_supported: false`), in Chromium with the Rust side mocked (ui/tests/mock-models.ts):
// the first-run guide offers no download of a gigabyte or two that could not be used, and says
// why, while the other ways to a model stay; Settings → Models says it above its catalogue.
// Each against the same screens where the runtime is supported, which offer the download and
// say nothing of it. A hub reference the backend refuses is answered under its field, scrolled
// into view, with the text kept to correct. axe-core (WCAG 2.2 AA and best practice) in the light theme in
// English and the dark theme in Chinese; screenshots in target/screenshots/trust-*.png.
import assert from "node:assert/strict";
import { join } from "node:path";
import { axeViolations, launchBrowser, openApp, run, screenshots, test } from "./lib.mjs";

const browser = await launchBrowser();
const workspace = { path: "/home/me/demo", name: "demo", watched: true };
const CONFIG = "/home/me/.config/tooltrail/config.toml";
const THEMES = [
  { options: { colorScheme: "light", locale: "en-US" }, name: "light-en", lang: "en" },
  { options: { colorScheme: "dark", locale: "zh-CN" }, name: "dark-zh", lang: "zh" },
];

const TEXT = {
  en: {
    guideUnsupported:
      "Tooltrail cannot run models itself on this system yet, so it offers no model to download here: a download of 1 to 2.5 GB could not be used. Use a model server on this computer or a cloud provider above.",
    settingsUnsupported:
      "Tooltrail cannot run models itself on this system yet: a model downloaded here (1 to 2.5 GB) can only be used by a model server you run yourself.",
    download: /download/i,
    provider: "Provider",
  },
  zh: {
    guideUnsupported:
      "Tooltrail 目前还不能在此系统上自行运行模型，因此这里不提供模型下载：1 到 2.5 GB 的下载将无法使用。请使用上方本机上的模型服务器或云服务商。",
    settingsUnsupported: "Tooltrail 目前还不能在此系统上自行运行模型：在这里下载的模型（1 到 2.5 GB）只能由你自己运行的模型服务器使用。",
    download: /下载/,
    provider: "提供方",
  },
};

const shot = (page, name) => page.screenshot({ path: join(screenshots, `trust-${name}.png`), fullPage: true });
const calls = (page, cmd) => page.evaluate((cmd) => window.__mock.calls.filter((c) => c.cmd === cmd).map((c) => c.args), cmd);

/** Runs axe on the page and fails with every violation, named. */
async function axe(page, what) {
  const found = await axeViolations(page);
  assert.deepEqual(found, [], `axe found problems in ${what}:\n  ${found.join("\n  ")}`);
}

const CATALOGUE = [
  { name: "qwen3-1.7b", title: "Qwen3 1.7B", description: "Small and quick; calls tools reliably for its size. The one to start with.", size_bytes: 1107409472, memory_gb: 2.6, context_length: 40960, licence: "Apache-2.0", installed: false },
  { name: "qwen3-4b", title: "Qwen3 4B", description: "Better answers and tool use than 1.7B, at about half the speed.", size_bytes: 2497281312, memory_gb: 4.3, context_length: 40960, licence: "Apache-2.0", installed: false },
];
/** What list_models answers on a system where the runtime is (or is not) supported. */
const modelsView = (runtimeSupported) => ({
  dir: "C:\\Users\\me\\AppData\\Local\\tooltrail\\models",
  local_model: null,
  local_active: false,
  installed: [],
  unfinished: [],
  catalogue: structuredClone(CATALOGUE),
  runtime: null,
  server_problem: null,
  runtime_supported: runtimeSupported,
});
const endpoint = { base_url: "http://localhost:11434/v1", model: null, api_key_set: false, config_path: CONFIG, problem: null, key_problem: null };
const emptyGuide = () => ({ ready: false, problem: "Could not connect to the model endpoint http://localhost:11434/v1 (connection refused).", local: false, endpoint, servers: [], looked_ms: 2 });

async function openGuide(runtimeSupported, options) {
  const opened = await openApp(browser, { guide: emptyGuide(), modelsView: modelsView(runtimeSupported) }, options);
  const guide = opened.page.getByTestId("model-guide");
  await guide.waitFor();
  const local = guide.getByTestId("guide-local");
  await local.waitFor();
  return { ...opened, guide, local };
}

test("the first-run guide offers no model download where Tooltrail cannot run it, and says why", async () => {
  for (const { options, name, lang } of THEMES) {
    const say = TEXT[lang];
    // Where the runtime is supported, the guide offers the catalogue's downloads.
    const supported = await openGuide(true, options);
    await supported.local.locator("[data-model]").first().waitFor();
    assert.ok((await supported.local.getByRole("button", { name: say.download }).count()) >= 2, "the supported guide offers downloads");
    assert.equal(await supported.local.getByTestId("guide-local-unsupported").count(), 0);
    await supported.context.close();

    const { page, problems, context, guide, local } = await openGuide(false, options);
    const why = local.getByTestId("guide-local-unsupported");
    await why.waitFor();
    assert.equal((await why.innerText()).trim(), say.guideUnsupported);
    // Nothing to download: no catalogue entry, no button that would start one.
    assert.equal(await local.locator("[data-model]").count(), 0);
    assert.equal(await local.getByRole("button").count(), 0);
    assert.equal(await guide.getByRole("button", { name: say.download }).count(), 0);
    // The other ways to a model are still there: a cloud provider with a key.
    assert.ok(await guide.getByLabel(say.provider, { exact: true }).isVisible());
    assert.deepEqual(await calls(page, "pull_model"), []);
    await shot(page, `guide-unsupported-${name}`);
    await axe(page, `the guide where models cannot run (${name})`);
    assert.deepEqual(problems, []);
    await context.close();
  }
});

async function openModels(runtimeSupported, options) {
  const opened = await openApp(browser, { workspace, modelsView: modelsView(runtimeSupported) }, options);
  await opened.page.getByRole("tab").first().waitFor();
  await opened.page.keyboard.press("Control+Comma");
  const section = opened.page.getByTestId("cfg-section-models");
  await section.getByTestId("mdl-catalogue").locator("[data-model]").first().waitFor();
  return { ...opened, section };
}

test("Settings → Models says above its catalogue that a download could not be run here", async () => {
  for (const { options, name, lang } of THEMES) {
    const say = TEXT[lang];
    const supported = await openModels(true, options);
    assert.equal(await supported.section.getByTestId("mdl-runtime-unsupported").count(), 0);
    await supported.context.close();

    const { page, problems, context, section } = await openModels(false, options);
    const warning = section.getByTestId("mdl-runtime-unsupported");
    await warning.waitFor();
    assert.equal((await warning.innerText()).trim(), say.settingsUnsupported);
    // Above the catalogue: before it in the page and drawn over it, so it is read first.
    const placed = await page.evaluate(() => {
      const warning = document.querySelector('[data-testid="mdl-runtime-unsupported"]');
      const catalogue = document.querySelector('[data-testid="mdl-catalogue"]');
      return {
        before: Boolean(warning.compareDocumentPosition(catalogue) & Node.DOCUMENT_POSITION_FOLLOWING),
        bottom: warning.getBoundingClientRect().bottom,
        top: catalogue.getBoundingClientRect().top,
        visible: warning.getBoundingClientRect().height > 0,
      };
    });
    assert.ok(placed.before && placed.visible && placed.bottom <= placed.top, JSON.stringify(placed));
    await warning.scrollIntoViewIfNeeded();
    await shot(page, `settings-models-unsupported-${name}`);
    await axe(page, `Settings → Models where models cannot run (${name})`);
    assert.deepEqual(problems, []);
    await context.close();
  }
});

test("a refused hub reference is answered under its field, in view, with the text kept to correct", async () => {
  const reference = "hf.co/owner/repo/model.gguf@../../x";
  const sentence = `"${reference}" is not a model to pull: a revision cannot go up a folder. Give a name from \`tooltrail models list\`, or a file on the hub as hf.co/OWNER/REPO/FILE.gguf.`;
  for (const { options, name } of THEMES) {
    const opened = await openApp(browser, { workspace, modelsView: modelsView(true), pullError: { code: "bad_input", message: sentence } }, options);
    const { page, problems, context } = opened;
    await page.getByRole("tab").first().waitFor();
    await page.keyboard.press("Control+Comma");
    const form = page.getByTestId("cfg-section-models").locator("form.cfg-form-plain");
    await form.locator("input").fill(reference);
    await form.locator("button[type=submit]").click();
    const refused = form.getByTestId("mdl-reference-refused");
    await refused.waitFor();
    assert.equal((await refused.innerText()).trim(), sentence);
    assert.equal(await refused.getAttribute("role"), "alert");
    const box = await refused.boundingBox();
    const height = await page.evaluate(() => innerHeight);
    assert.ok(box && box.y >= 0 && box.y + box.height <= height, `the refusal is out of view: ${JSON.stringify(box)}`);
    assert.equal(await form.locator("input").inputValue(), reference);
    assert.deepEqual(await calls(page, "pull_model"), [{ reference, useAfter: false }]);
    assert.equal(await page.locator("[data-download]").count(), 0);
    await shot(page, `reference-refused-${name}`);
    await axe(page, `a refused hub reference (${name})`);
    assert.deepEqual(problems.filter((p) => !p.includes(sentence)), []);
    await context.close();
  }
});

const failed = await run();
await browser.close();
process.exit(failed ? 1 : 0);
