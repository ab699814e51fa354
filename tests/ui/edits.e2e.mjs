// The real app in a real window (Xvfb, WebKitWebDriver): the model asks the user a question on
// the chat's question card, answered from the keyboard; then proposes an edit whose diff waits
// on the approval card, approved with the keyboard; the file changes on disk; and "Undo these
// changes" puts it back. Once in English and light, once in Chinese and dark, with screenshots.
import assert from "node:assert/strict";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
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
  test(`a question answered on its card, an edit approved from its diff and undone (${lang}, ${theme})`, async () => {
    const folder = join(tempDir("tooltrail-e2e-"), "demo-project");
    cpSync(join(repo, "tests/ui/fixtures/demo-project"), folder, { recursive: true });
    const mainGo = join(folder, "main.go");
    const before = readFileSync(mainGo, "utf8");
    const after = before.replace('":8080"', '":9090"');
    assert.notEqual(after, before);

    const configDir = tempDir("tooltrail-config-");
    // file_write is off until turned on.
    writeFileSync(join(configDir, "config.toml"), 'enabled_tools = ["file_write"]\n');
    const script = join(configDir, "script.json");
    writeFileSync(
      script,
      JSON.stringify([
        { tool_calls: [{ name: "ask_user", arguments: { question: "Which port should the service listen on?", choices: ["8080", "9090"] } }] },
        { tool_calls: [{ name: "file_write", arguments: { path: "main.go", content: after } }] },
        { text: "The service now listens on port 9090." },
      ]),
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
      await session.type(box, "Move the service to another port.\uE007");

      // The question waits on its card, with the choices; "2" picks the second.
      const question = await session.waitFor(".question-card");
      assert.match(await session.text(question), /Which port should the service listen on\?/);
      await shoot(session, `question-${theme}-${lang}`);
      await session.type(await session.find(".question-card input"), "2");

      // The edit waits with its diff; nothing is written yet.
      const card = await session.waitFor(".approval-card .diff");
      const rows = await session.script(
        "return [...document.querySelectorAll('.approval-card tr.diff-line')].filter(r => !r.classList.contains('diff-context')).map(r => [...r.querySelectorAll('td')].map(c => c.textContent).join('|'))",
      );
      assert.deepEqual(rows, ['11||−|\tlog.Fatal(http.ListenAndServe(":8080", nil))', '|11|+|\tlog.Fatal(http.ListenAndServe(":9090", nil))']);
      assert.equal(await session.script("return document.querySelectorAll('.approval-card .approval-actions button').length"), 2);
      assert.equal(readFileSync(mainGo, "utf8"), before);
      assert.ok(card);
      await shoot(session, `diff-${theme}-${lang}`);

      // Approved with the keyboard: the file changes on disk.
      await session.type(await session.find(".approval-card"), "y");
      await session.until("the answer", async () => (await session.text(await session.find('[data-testid="chat"]'))).includes("port 9090"));
      assert.equal(readFileSync(mainGo, "utf8"), after);
      const asked = await session.script(
        "return [...document.querySelectorAll('.timeline-card[data-call-id]')].map(c => c.querySelector('.card-tool').textContent + ':' + c.className.match(/phase-(\\w+)/)[1])",
      );
      assert.deepEqual(asked.sort(), ["ask_user:success", "file_write:success"]);

      // Undone from the app.
      const undo = await session.waitFor('[data-testid="turn-undo"] button');
      // The chat followed the turn to its end: the offer to undo is in view, not below it.
      const inView = await session.script(
        "const b = arguments[0].getBoundingClientRect(), c = document.querySelector('[data-testid=\"chat\"]').getBoundingClientRect(); return b.top >= c.top && b.bottom <= c.bottom",
        [{ "element-6066-11e4-a52e-4f735466cecf": undo }],
      );
      assert.equal(inView, true, "the undo button is scrolled into the chat's view when the turn ends");
      await shoot(session, `undo-${theme}-${lang}`);
      await session.click(undo);
      let undoRow = "";
      await session.until(
        "the undone note",
        async () => {
          undoRow = await session.text(await session.find('[data-testid="turn-undo"]'));
          return /undone|已撤销/i.test(undoRow);
        },
      ).catch((error) => {
        throw new Error(`${error.message}; the row under the turn read "${undoRow}", and main.go is ${readFileSync(mainGo, "utf8") === before ? "as before" : "still changed"}`);
      });
      assert.equal(readFileSync(mainGo, "utf8"), before);
      await shoot(session, `undone-${theme}-${lang}`);

      // What Tooltrail wrote and put back is not news to the user; a file edited by hand is.
      writeFileSync(join(folder, "README.md"), "Edited by hand after the answer.\n");
      const banner = await session.waitFor('[data-testid="files-changed"]', 10_000);
      assert.equal(await session.text(banner), lang === "zh" ? "上次回答后有 1 个文件发生了变化" : "1 file changed since the last answer");
      assert.equal(await session.script("return arguments[0].title", [{ "element-6066-11e4-a52e-4f735466cecf": banner }]), "README.md");
    } finally {
      await session?.end();
      driver.child.kill();
      model.child.kill();
    }
  });
}

process.exit((await run()) ? 1 : 0);
