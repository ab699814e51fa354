// The real app in a real window (Xvfb, WebKitWebDriver), from a fresh machine to a first
// answer: empty config and data folders and nothing listening, so the start screen is the
// guide; a scripted model server then listed through `detect_urls` in config.toml is found,
// picked and used, and a question is answered. Then "Run a model on this computer": a GGUF is
// imported and used, and Settings → Models lists it as in use; when `scripts/real-llm` has
// built llama-server and fetched the Gemma 3 270M GGUF, a question is answered by it and the
// running model is stopped from Settings → Models (skipped, saying why, when they are absent).
// Once in English and light, once in Chinese and dark, with screenshots.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dependencyMissing, repo, run, screenshots, tempDir, test } from "./lib.mjs";
import { appEnv, gtkTheme, ownWindowState, Session, setLanguage, shoot as shootWindow, startDriver, startScriptedModel } from "./webdriver.mjs";

const app = process.env.TOOLTRAIL_APP ?? join(repo, "target/debug/tooltrail-app");
const scriptedModel = process.env.SCRIPTED_MODEL ?? join(repo, "target/debug/scripted-model");
// Screenshots need WebKit's DMA-BUF renderer (see app.e2e.mjs).
process.env.WEBKIT_DISABLE_DMABUF_RENDERER ??= "0";

const shoot = (session, name) => shootWindow(session, `app-e2e-${name}`);

/** The real llama-server and Gemma GGUF of scripts/real-llm, or why there are none. */
function realRuntime() {
  try {
    const out = execFileSync(join(repo, "scripts/real-llm"), ["paths"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
    const paths = Object.fromEntries(out.trim().split("\n").map((line) => line.trim().split(/\s+/, 2)));
    if (!paths.server || !existsSync(paths.server)) return { why: `no llama-server at ${paths.server ?? "(none)"}; scripts/real-llm setup builds one` };
    if (!paths.model || !existsSync(paths.model)) return { why: `no Gemma GGUF at ${paths.model ?? "(none)"}; scripts/real-llm setup fetches it` };
    return paths;
  } catch (error) {
    return { why: `scripts/real-llm paths failed: ${error.message}` };
  }
}

/** A small GGUF file (a header and one tensor): all the models folder reads of a model. */
function tinyGguf() {
  const parts = [];
  const u32 = (n) => parts.push(Buffer.from(new Uint32Array([n]).buffer));
  const u64 = (n) => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(n));
    parts.push(b);
  };
  const str = (s) => {
    u64(Buffer.byteLength(s));
    parts.push(Buffer.from(s, "utf8"));
  };
  parts.push(Buffer.from("GGUF"));
  u32(3); // version
  u64(1); // tensors
  u64(2); // key-value pairs
  str("general.architecture");
  u32(8); // string
  str("llama");
  str("llama.context_length");
  u32(4); // u32
  u32(2048);
  str("token_embd.weight");
  u32(1);
  u64(64);
  u32(0); // F32
  u64(0);
  const head = Buffer.concat(parts);
  return Buffer.concat([head, Buffer.alloc((32 - (head.length % 32)) % 32), Buffer.alloc(64 * 4)]);
}

/** Clicks the first element matching `css` whose text includes `text`. */
async function clickText(session, css, text) {
  const target = await session.until(`${css} “${text}”`, async () => {
    for (const element of await session.findAll(css)) {
      if ((await session.text(element)).includes(text)) return element;
    }
    return undefined;
  });
  await session.click(target);
}

const TEXT = {
  en: { lookAgain: "Look again", ready: "Questions go to scripted-model", models: "in use", stop: "Stop", none: "No model is running" },
  zh: { lookAgain: "重新查找", ready: "问题现在发送到 scripted-model", models: "使用中", stop: "停止", none: "没有模型在运行" },
};

for (const [lang, theme] of [
  ["en", "light"],
  ["zh", "dark"],
]) {
  test(`a fresh machine: the guide, a server found through detect_urls, a first answer; a model imported and used (${lang}, ${theme})`, async () => {
    const text = TEXT[lang];
    const folder = join(tempDir("tooltrail-e2e-"), "demo-project");
    cpSync(join(repo, "tests/ui/fixtures/demo-project"), folder, { recursive: true });
    const configDir = tempDir("tooltrail-config-");
    const dataDir = join(configDir, "data");
    // The folder to ask about is a recent one, so the start screen opens it without the
    // native dialog; config.toml does not exist yet.
    writeFileSync(join(configDir, "recent-workspaces.json"), JSON.stringify([{ path: folder, name: "demo-project", opened_ms: Date.now() }]));
    const script = join(configDir, "script.json");
    writeFileSync(script, JSON.stringify([{ text: "The demo project is a **small Go service**." }]));
    const model = await startScriptedModel(scriptedModel, script);
    const real = realRuntime();
    // Nothing listens where Ollama would be.
    const driver = await startDriver(appEnv(configDir, { ...ownWindowState(configDir), ...gtkTheme(theme), OLLAMA_HOST: "127.0.0.1:9" }));
    let session;
    try {
      session = await Session.start(driver.base, app, []);
      // No endpoint answers: the start screen is the guide.
      const guide = await session.waitFor('[data-testid="model-guide"] [data-testid="guide-servers"]');
      await setLanguage(session, lang);
      await session.until("the guide's look to end", async () => (await session.script("return document.querySelector('[data-testid=\"model-guide\"]').getAttribute('aria-busy')")) === "false");
      assert.equal((await session.findAll(`[data-server="${model.url}"]`)).length, 0);
      assert.ok((await session.text(guide)).length > 0);
      await shoot(session, `guide-empty-${theme}-${lang}`);

      // The scripted server, listed in config.toml, is found when the guide looks again.
      // Few rounds of short answers: a 270M base model may write until the limit, on two busy
      // cores.
      writeFileSync(join(configDir, "config.toml"), `max_rounds = 2\nmax_tokens = 64\ndetect_urls = [${JSON.stringify(model.url)}]\n`);
      await clickText(session, '[data-testid="guide-servers"] button', text.lookAgain);
      const server = await session.waitFor(`[data-server="${model.url}"]`);
      assert.match(await session.text(server), /scripted-model/);
      await shoot(session, `guide-servers-${theme}-${lang}`);
      await session.click(await session.find(`[data-server="${model.url}"] button.primary`));
      const ready = await session.waitFor('[data-testid="guide-ready"]');
      assert.match(await session.text(ready), new RegExp(text.ready));

      // The recent folder opens; the first question is answered by the chosen server.
      await session.click(await session.find(".recent-list button"));
      const box = await session.waitFor(".composer textarea");
      await session.type(box, "What does this project do?\uE007");
      await session.until("the answer", async () => (await session.text(await session.find('[data-testid="chat"]'))).includes("small Go service"));
      await shoot(session, `first-answer-${theme}-${lang}`);

      // Run a model on this computer: a GGUF imported (the native dialog is the OS's, so the
      // path is handed to the same command its button calls) and used at once.
      let gguf = real.model;
      if (!gguf) {
        dependencyMissing(`the real model is absent (${real.why}); importing a small test GGUF instead`);
        gguf = join(configDir, "Tiny-Test.gguf");
        writeFileSync(gguf, tinyGguf());
      }
      const imported = await session.scriptAsync(
        "const done = arguments[arguments.length - 1]; window.__TAURI_INTERNALS__.invoke('import_model', { path: arguments[0], useAfter: true }).then(done, (e) => done({ error: e }));",
        [gguf],
      );
      assert.equal(imported.error, undefined, JSON.stringify(imported.error));
      assert.equal(imported.used, true);
      await session.type(await session.find("body"), "\uE009,"); // Ctrl+,
      const row = await session.waitFor(`[data-testid="mdl-installed"] [data-model="${imported.model.name}"]`);
      await session.until("the model in use", async () => (await session.text(await session.find(`[data-testid="mdl-installed"] [data-model="${imported.model.name}"]`))).includes(text.models));
      assert.ok(row);
      await session.script("document.querySelector('[data-testid=\"cfg-section-models\"]').scrollIntoView()");
      await shoot(session, `settings-models-${theme}-${lang}`);

      if (!real.model || !real.server) {
        dependencyMissing(`no question for the local model (${real.why})`);
        return;
      }
      // A question for the model Tooltrail runs itself: llama-server starts, and the turn ends
      // without an error (a 270M base model's words are not checked).
      await session.type(await session.find("body"), "\uE0091"); // Ctrl+1
      const again = await session.waitFor(".composer textarea");
      await session.type(again, "List the files here.\uE007");
      await session.until(
        "the local model's turn to end",
        async () => (await session.findAll(".composer button.primary")).length === 1 && (await session.findAll(".turn")).length === 2,
        420_000,
      );
      const errors = await session.script("return [...document.querySelectorAll('.turn:last-child .turn-error')].map(e => e.textContent)");
      assert.deepEqual(errors, []);
      await shoot(session, `local-answer-${theme}-${lang}`);

      // Settings → Models shows it running, and Stop stops it.
      await session.type(await session.find("body"), "\uE009,");
      const runtime = await session.waitFor('[data-testid="mdl-runtime"] button');
      await shoot(session, `settings-models-running-${theme}-${lang}`);
      await session.click(runtime);
      await session.until("the model to stop", async () => (await session.text(await session.find('[data-testid="mdl-runtime"]'))).includes(text.none), 20_000);
    } finally {
      // Whatever happened, no llama-server is left running for this data folder.
      if (session) {
        await session.scriptAsync("const done = arguments[arguments.length - 1]; window.__TAURI_INTERNALS__.invoke('stop_runtime').then(done, done);").catch(() => {});
      }
      await session?.end();
      driver.child.kill();
      model.child.kill();
    }
  });
}

process.exit((await run()) ? 1 : 0);
