// The real app in a real window (Xvfb, WebKitWebDriver), against the scripted model: two reads
// that run side by side, then a command that waits for the user's yes, then the answer. The
// timeline shown as a waterfall and the context meter by the composer, in English and Chinese,
// light and dark, with screenshots.
import assert from "node:assert/strict";
import { cpSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { repo, run, screenshots, tempDir, test } from "./lib.mjs";
import { appEnv, gtkTheme, ownWindowState, scriptedModelEnv, Session, setLanguage, shoot as shootWindow, sleep, startDriver, startScriptedModel } from "./webdriver.mjs";

const app = process.env.TOOLTRAIL_APP ?? join(repo, "target/debug/tooltrail-app");
const scriptedModel = process.env.SCRIPTED_MODEL ?? join(repo, "target/debug/scripted-model");
// Screenshots need WebKit's DMA-BUF renderer (see app.e2e.mjs).
process.env.WEBKIT_DISABLE_DMABUF_RENDERER ??= "0";

const shoot = (session, name) => shootWindow(session, `app-e2e-${name}`);

for (const [lang, theme] of [
  ["en", "light"],
  ["en", "dark"],
  ["zh", "light"],
  ["zh", "dark"],
]) {
  test(`the waterfall and the context meter in a real window (${lang}, ${theme})`, async () => {
    const folder = join(tempDir("tooltrail-e2e-"), "demo-project");
    cpSync(join(repo, "tests/ui/fixtures/demo-project"), folder, { recursive: true });
    const configDir = tempDir("tooltrail-config-");
    const script = join(configDir, "script.json");
    writeFileSync(
      script,
      JSON.stringify([
        {
          tool_calls: [
            { name: "read_file", arguments: { path: "README.md" } },
            { name: "search_text", arguments: { pattern: "func main", glob: "*.go" } },
          ],
          delay_ms: 40,
        },
        { tool_calls: [{ name: "execute_bash", arguments: { command: "echo checked > notes.txt" } }], delay_ms: 40 },
        { text: "The project is a small Go service; notes.txt now says it was checked.", delay_ms: 30 },
      ]),
    );
    const model = await startScriptedModel(scriptedModel, script);
    const driver = await startDriver(appEnv(configDir, { ...scriptedModelEnv(model), ...gtkTheme(theme), ...ownWindowState(configDir) }));
    let session;
    try {
      session = await Session.start(driver.base, app, [folder]);
      const box = await session.waitFor(".composer textarea");
      // The window remembers the language; each run picks its own.
      await setLanguage(session, lang);
      await session.click(await session.find('.timeline-modes button[role="radio"]:last-child'));
      await session.type(box, "What does this project do?\uE007");

      // The command waits for a yes; its hatched wait grows meanwhile.
      const card = await session.waitFor(".approval-card");
      await session.waitFor('.waterfall [data-call-id] .wf-bar[data-kind="wait"]');
      await sleep(1200);
      await shoot(session, `waterfall-waiting-${theme}-${lang}`);
      await session.type(card, "y");
      await session.until("the answer", async () => (await session.text(await session.find('[data-testid="chat"]'))).includes("notes.txt now says"));
      await session.waitFor('[data-testid="turn-tokens"]');

      // Two reads side by side, then the command: its wait, then its run, on one axis.
      const bars = await session.script(`
        const rows = [...document.querySelectorAll('.waterfall button.wf-call')];
        return rows.map((row) => ({
          tool: row.querySelector('.wf-tool').textContent,
          bars: [...row.querySelectorAll('.wf-bar')].map((b) => ({ kind: b.dataset.kind, left: parseFloat(b.style.left), width: parseFloat(b.style.width) })),
        }));`);
      assert.deepEqual(bars.map((row) => row.tool), ["read_file", "search_text", "execute_bash"]);
      const [read, search, bash] = bars.map((row) => row.bars);
      // Real reads of a small folder take a millisecond or two: they start together (one
      // dispatch) rather than one after the other's round trip to the model. (The browser spec
      // checks the overlap of longer calls exactly.)
      assert.ok(Math.abs(read[0].left - search[0].left) < 1, `the reads start together: ${JSON.stringify([read, search])}`);
      assert.deepEqual(bash.map((b) => b.kind), ["wait", "run"]);
      assert.ok(bash[0].width > 0, "the wait shows");
      assert.ok(Math.abs(bash[0].left + bash[0].width - bash[1].left) < 0.5, `the run begins where the wait ends: ${JSON.stringify(bash)}`);

      // The meter: the latest request's share of the window, and the conversation's tokens.
      const meter = (await session.text(await session.find('[data-testid="context-meter"]'))).trim();
      assert.match(meter, lang === "zh" ? /^[\d,]+ \/ [\d,]+ 词元$/ : /^[\d,]+ \/ [\d,]+ tokens$/);
      assert.match(await session.text(await session.find('[data-testid="conversation-tokens"]')), lang === "zh" ? /本对话共 [\d,]+ 词元/ : /[\d,]+ tokens in this conversation/);
      await shoot(session, `waterfall-${theme}-${lang}`);
    } finally {
      await session?.end();
      driver.child.kill();
      model.child.kill();
    }
  });
}

process.exit((await run()) ? 1 : 0);
