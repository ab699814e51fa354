// The real app in a real window (Xvfb, WebKitWebDriver): a model that repeats one call over and
// over in a single answer is stopped while it streams; the call runs once, the turn still
// answers, and the note under the turn says what was stopped. Once in English and light, once
// in Chinese and dark, with screenshots.
import assert from "node:assert/strict";
import { cpSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { repo, run, screenshots, tempDir, test } from "./lib.mjs";
import { appEnv, gtkTheme, ownWindowState, scriptedModelEnv, Session, setLanguage, shoot as shootWindow, startDriver, startScriptedModel } from "./webdriver.mjs";

const app = process.env.TOOLTRAIL_APP ?? join(repo, "target/debug/tooltrail-app");
const scriptedModel = process.env.SCRIPTED_MODEL ?? join(repo, "target/debug/scripted-model");
// Screenshots need WebKit's DMA-BUF renderer (see app.e2e.mjs).
process.env.WEBKIT_DISABLE_DMABUF_RENDERER ??= "0";

const shoot = (session, name) => shootWindow(session, `app-e2e-${name}`);

for (const [lang, theme] of [
  ["en", "light"],
  ["zh", "dark"],
]) {
  test(`a model repeating a call is stopped, the call runs once and the turn answers (${lang}, ${theme})`, async () => {
    const folder = join(tempDir("tooltrail-e2e-"), "demo-project");
    cpSync(join(repo, "tests/ui/fixtures/demo-project"), folder, { recursive: true });
    const configDir = tempDir("tooltrail-config-");
    const script = join(configDir, "script.json");
    const read = { name: "read_file", arguments: { path: "main.go" } };
    writeFileSync(
      script,
      JSON.stringify([{ tool_calls: Array.from({ length: 40 }, () => read) }, { text: "main.go starts an HTTP server." }]),
    );
    const model = await startScriptedModel(scriptedModel, script);
    const driver = await startDriver(appEnv(configDir, { ...scriptedModelEnv(model), ...ownWindowState(configDir), ...gtkTheme(theme) }));
    let session;
    try {
      session = await Session.start(driver.base, app, [folder]);
      const box = await session.waitFor(".composer textarea");
      await setLanguage(session, lang);
      // A fresh window starts with the timeline as a list.
      const listLabel = lang === "zh" ? "列表" : "List";
      await session.until(`the ${listLabel} view`, async () =>
        (await session.script("return document.querySelector('.timeline-modes [aria-checked=\"true\"]')?.textContent")) === listLabel,
      );
      await session.type(box, "What does main.go do?\uE007");
      await session.until("the answer", async () => (await session.text(await session.find('[data-testid="chat"]'))).includes("main.go starts an HTTP server."));
      const note = await session.script("return [...document.querySelectorAll('.turn-note')].map(n => n.textContent).join('\\n')");
      const expected =
        lang === "zh"
          ? /模型在第 1 轮重复调用 read_file（2 次）；Tooltrail 在约 \d+ 个词元后将其停止/
          : /The model repeated the call to read_file \(2 times\) in round 1; Tooltrail stopped it after about \d+ tokens/;
      assert.match(note, expected);
      const calls = await session.script(
        "return [...document.querySelectorAll('.timeline-card[data-call-id]')].map(c => c.querySelector('.card-tool').textContent + ':' + c.className.match(/phase-(\\w+)/)[1])",
      );
      assert.deepEqual(calls, ["read_file:success"], "the call ran once");
      await shoot(session, `loop-${theme}-${lang}`);
    } finally {
      await session?.end();
      driver.child.kill();
      model.child.kill();
    }
  });
}

process.exit((await run()) ? 1 : 0);
