// The real app in a real window (Xvfb, WebKitWebDriver), started with a folder the way
// `scripts/run ~/project` starts it, on a machine where no model answers: empty config and data
// folders, nothing listening where Ollama would be. Before any question the chat says above the
// composer that no model answers, with the backend's reason, and the composer still takes a
// question; the notice opens the guide, a scripted model server listed through `detect_urls`
// is found and used, and the notice is gone. Then, when `scripts/real-llm` has built
// llama-server and fetched the Gemma 3 270M GGUF, the model is imported and used, its server is
// stopped, and a question says in the turn that the local model is starting before it is
// answered, leaving no wait or prompt reading in the finished turn (skipped, saying why, when
// they are absent). English and light, Chinese and dark, with screenshots and axe.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dependencyMissing, repo, run, tempDir, test } from "./lib.mjs";
import { appEnv, axe, gtkTheme, ownWindowState, Session, setLanguage, shoot as shootWindow, startDriver, startScriptedModel } from "./webdriver.mjs";

const app = process.env.TOOLTRAIL_APP ?? join(repo, "target/debug/tooltrail-app");
const scriptedModel = process.env.SCRIPTED_MODEL ?? join(repo, "target/debug/scripted-model");
// Screenshots need WebKit's DMA-BUF renderer (see app.e2e.mjs).
process.env.WEBKIT_DISABLE_DMABUF_RENDERER ??= "0";

const shoot = (session, name) => shootWindow(session, `readiness-e2e-${name}`);

const TEXT = {
  en: { title: "No model answers questions yet.", why: "Why: ", lookAgain: "Look again", starting: "Starting the local model" },
  zh: { title: "还没有可以回答问题的模型。", why: "原因：", lookAgain: "重新查找", starting: "正在启动本地模型" },
};

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

/** Whether the turn has ended: the composer offers Send again. */
const turnEnded = async (session, turns) =>
  (await session.findAll(".composer button.primary")).length === 1 && (await session.findAll(".turn")).length === turns;

for (const [lang, theme] of [
  ["en", "light"],
  ["zh", "dark"],
]) {
  test(`started with a folder where no model answers: said above the composer, then a model chosen; the local model's start in the turn (${lang}, ${theme})`, async () => {
    const text = TEXT[lang];
    const folder = join(tempDir("tooltrail-e2e-"), "demo-project");
    cpSync(join(repo, "tests/ui/fixtures/demo-project"), folder, { recursive: true });
    const configDir = tempDir("tooltrail-config-");
    const script = join(configDir, "script.json");
    writeFileSync(script, JSON.stringify([{ text: "The demo project is a **small Go service**." }]));
    const model = await startScriptedModel(scriptedModel, script);
    const real = realRuntime();
    // Nothing listens where Ollama would be.
    const driver = await startDriver(appEnv(configDir, { ...ownWindowState(configDir), ...gtkTheme(theme), OLLAMA_HOST: "127.0.0.1:9" }));
    let session;
    try {
      session = await Session.start(driver.base, app, [folder]);
      await session.waitFor(".composer textarea");
      await setLanguage(session, lang);
      // Before any question: the notice, above the composer, with the backend's reason.
      const notice = await session.waitFor('[data-testid="no-model"]', 60_000);
      assert.match(await session.text(notice), new RegExp(text.title.replace(/[.]/g, "\\.")));
      const problem = await session.text(await session.find('[data-testid="no-model-problem"]'));
      assert.ok(problem.startsWith(text.why) && problem.length > text.why.length + 10, `the reason is a sentence: ${problem}`);
      assert.equal((await session.findAll(".turn")).length, 0);
      const [noticeBottom, composerTop] = await session.script(
        "const n = document.querySelector('[data-testid=\"no-model\"]').getBoundingClientRect(); const c = document.querySelector('.composer').getBoundingClientRect(); return [n.bottom, c.top];",
      );
      assert.ok(noticeBottom <= composerTop, `the notice (bottom ${noticeBottom}) is above the composer (top ${composerTop})`);
      assert.equal(await session.script("return document.querySelector('.composer textarea').disabled"), false);
      await shoot(session, `no-model-${theme}-${lang}`);
      await axe(session, "main.chat", `the chat with the no-model notice (${theme}, ${lang})`);

      // The scripted server, listed in config.toml, is found from the guide the notice opens.
      // Few rounds of short answers for the local model's question below: what it waits on is
      // the model's start, not its words, and a 270M base model may write until the limit.
      writeFileSync(join(configDir, "config.toml"), `max_rounds = 2\nmax_tokens = 64\ndetect_urls = [${JSON.stringify(model.url)}]\n`);
      await session.click(await session.find('[data-testid="no-model"] button.primary'));
      await clickText(session, '[data-testid="guide-servers"] button', text.lookAgain);
      await session.waitFor(`[data-server="${model.url}"]`);
      await session.click(await session.find(`[data-server="${model.url}"] button.primary`));
      await session.click(await session.waitFor('[data-testid="guide-ready"] button.primary'));
      const box = await session.waitFor(".composer textarea");
      await session.until("the notice to go", async () => (await session.findAll('[data-testid="no-model"]')).length === 0);
      await session.type(box, "What does this project do?\uE007");
      await session.until("the answer", async () => (await session.text(await session.find('[data-testid="chat"]'))).includes("small Go service"));

      if (!real.model || !real.server) {
        dependencyMissing(`no question for the local model (${real.why})`);
        return;
      }
      // The model Tooltrail runs itself: imported and used (the native dialog is the OS's, so
      // the path goes to the same command its button calls), its server stopped, so that the
      // next question has to start it.
      const imported = await session.scriptAsync(
        "const done = arguments[arguments.length - 1]; window.__TAURI_INTERNALS__.invoke('import_model', { path: arguments[0], useAfter: true }).then(done, (e) => done({ error: e }));",
        [real.model],
      );
      assert.equal(imported.error, undefined, JSON.stringify(imported.error));
      const stopped = () =>
        session.scriptAsync(
          "const done = arguments[arguments.length - 1]; const i = window.__TAURI_INTERNALS__; i.invoke('stop_runtime').then(() => i.invoke('list_models')).then((v) => done(v.runtime === null), (e) => done({ error: e }));",
        );
      await session.until("the local model's server to be stopped", async () => (await stopped()) === true, 60_000);
      // What the turn says while it waits, recorded as it appears (it may last only seconds).
      await session.script(
        `window.__waits = []; window.__readings = [];
         new MutationObserver(() => {
           const wait = document.querySelector('[data-testid="local-model-wait"] [role="status"]')?.textContent;
           if (wait && !window.__waits.includes(wait)) window.__waits.push(wait);
           const reading = document.querySelector('[data-testid="prompt-progress"]')?.textContent;
           if (reading) window.__readings.push(reading);
         }).observe(document.body, { childList: true, subtree: true, characterData: true });`,
      );
      await session.type(await session.find(".composer textarea"), "List the files here.\uE007");
      await session.until("the local model's turn to end", () => turnEnded(session, 2), 420_000);
      const waits = await session.script("return window.__waits");
      assert.ok(
        waits.some((wait) => wait.startsWith(text.starting)),
        `the turn said the local model was starting: ${JSON.stringify(waits)}`,
      );
      const readings = await session.script("return window.__readings");
      console.log(`    waits shown: ${JSON.stringify(waits)}; prompt readings shown: ${readings.length}${readings.length ? ` (last: ${readings.at(-1)})` : ""}`);
      // The finished turn keeps neither the wait nor a reading of its prompt.
      assert.equal((await session.findAll('[data-testid="local-model-wait"]')).length, 0);
      assert.equal((await session.findAll('[data-testid="prompt-progress"]')).length, 0);
      const errors = await session.script("return [...document.querySelectorAll('.turn:last-child .turn-error')].map(e => e.textContent)");
      assert.deepEqual(errors, []);
      await shoot(session, `local-answer-${theme}-${lang}`);
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
