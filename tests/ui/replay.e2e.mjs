// The real app in a real window (Xvfb, WebKitWebDriver): a question that lists, reads and runs
// a command (approved), then replayed from History with another scripted model that parts at
// call 2. The comparison says where the calls part, the command is given its recorded result
// and not run again (the folder's bytes are unchanged), the same rows on the waterfall with the
// command a marker, and the models tried on the folder list the replay's model. In English and
// light, with screenshots.
import assert from "node:assert/strict";
import { cpSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { repo, run, tempDir, test } from "./lib.mjs";
import { appEnv, gtkTheme, ownWindowState, scriptedModelEnv, Session, setLanguage, shoot as shootWindow, startDriver, startScriptedModel } from "./webdriver.mjs";

const app = process.env.TOOLTRAIL_APP ?? join(repo, "target/debug/tooltrail-app");
const scriptedModel = process.env.SCRIPTED_MODEL ?? join(repo, "target/debug/scripted-model");
// Screenshots need WebKit's DMA-BUF renderer (see app.e2e.mjs).
process.env.WEBKIT_DISABLE_DMABUF_RENDERER ??= "0";

const shoot = (session, name) => shootWindow(session, `app-e2e-${name}`);

/** Every file of `folder` with its bytes, to compare before and after. */
function snapshot(folder) {
  return Object.fromEntries(
    readdirSync(folder, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => {
        const path = join(entry.parentPath ?? entry.path, entry.name);
        return [path, readFileSync(path, "base64")];
      }),
  );
}

test("a question replayed from History with another model: where it parts, the command not run again, the table (en, light)", async () => {
  const folder = join(tempDir("tooltrail-e2e-"), "demo-project");
  cpSync(join(repo, "tests/ui/fixtures/demo-project"), folder, { recursive: true });
  const configDir = tempDir("tooltrail-config-");
  const command = { name: "execute_bash", arguments: { command: "date +%s%N > stamp.txt" } };
  const first = join(configDir, "first.json");
  writeFileSync(
    first,
    JSON.stringify([
      { tool_calls: [{ name: "list_dir", arguments: { path: "." } }] },
      { tool_calls: [{ name: "read_file", arguments: { path: "main.go" } }] },
      { tool_calls: [command] },
      { text: "main.go starts the server; the stamp is written." },
    ]),
  );
  const second = join(configDir, "second.json");
  writeFileSync(
    second,
    JSON.stringify([
      { tool_calls: [{ name: "list_dir", arguments: { path: "." } }] },
      { tool_calls: [{ name: "read_file", arguments: { path: "handlers.go" } }] },
      { tool_calls: [command] },
      { text: "handlers.go holds the handlers." },
    ]),
  );
  const model = await startScriptedModel(scriptedModel, first);
  const other = await startScriptedModel(scriptedModel, second);
  writeFileSync(join(configDir, "config.toml"), `[[providers]]\nid = "second"\nname = "Second model"\nbase_url = "${other.url}"\nmodel = "small-scripted"\n`);
  const driver = await startDriver(appEnv(configDir, { ...scriptedModelEnv(model), ...ownWindowState(configDir), ...gtkTheme("light") }));
  let session;
  try {
    session = await Session.start(driver.base, app, [folder]);
    const box = await session.waitFor(".composer textarea");
    await setLanguage(session, "en");
    await session.type(box, "What does this project do?\uE007");
    // The command waits for a yes; approved with the keyboard, it writes stamp.txt.
    await session.type(await session.waitFor(".approval-card"), "y");
    await session.until("the answer", async () => (await session.text(await session.find('[data-testid="chat"]'))).includes("the stamp is written"));
    const stamped = readFileSync(join(folder, "stamp.txt"), "utf8");
    assert.match(stamped, /^\d+/);
    const before = snapshot(folder);

    // History: the command's call, and "Replay this question with…".
    await session.script("[...document.querySelectorAll('button')].find(b => b.textContent.trim().startsWith('History')).click()");
    await session.until("History", async () => (await session.findAll(".history-page")).length > 0);
    const rows = await session.until("the calls", async () => {
      const found = await session.findAll('.history-list [role="option"]');
      return found.length >= 3 && found;
    });
    assert.ok(rows.length >= 3, `three calls listed (${rows.length})`);
    await session.click(rows[0]);
    await session.click(await session.waitFor('[data-testid="replay-question"]'));
    await session.waitFor('[data-testid="replay-provider"] option[value="second"]');
    await session.script("const s = document.querySelector('[data-testid=\"replay-provider\"]'); const set = Object.getOwnPropertyDescriptor(HTMLSelectElement.prototype, 'value').set; set.call(s, 'second'); s.dispatchEvent(new Event('change', { bubbles: true }));");
    await session.until("the provider's model", async () => (await session.script("return document.querySelector('[data-testid=\"replay-model\"]').value")) === "small-scripted");
    await shoot(session, "replay-dialog-light-en");
    // Enter runs.
    await session.type(await session.find('[data-testid="replay-model"]'), "\uE007");

    const verdict = await session.waitFor('[data-testid="replay-verdict"]', 60_000);
    assert.match(await session.text(verdict), /The calls part at call 2/);
    const parting = await session.script("return [...document.querySelectorAll('[data-testid=\"replay-row\"]')].map(r => r.dataset.parts === 'true')");
    assert.deepEqual(parting.indexOf(true), 1, "the second row is marked");
    assert.match(await session.text(await session.find(".replay-parts")), /parts here/);
    // The command was given its recorded result, not run again: the folder is as it was.
    const marks = await session.script("return [...document.querySelectorAll('.replay-rows .replay-mark')].map(m => m.textContent)");
    assert.ok(marks.includes("from the record"), `the command is marked from the record (${marks})`);
    assert.deepEqual(snapshot(folder), before);
    await shoot(session, "replay-comparison-light-en");

    // The waterfall: the same rows, the same one marked, each call a bar on its turn's axis and
    // the command given its recorded result a marker labelled so.
    await session.click(await session.find('[data-testid="replay-view-waterfall"]'));
    await session.waitFor('[data-testid="replay-waterfall"]');
    const wfParting = await session.script("return [...document.querySelectorAll('[data-testid=\"replay-wf-row\"]')].map(r => r.dataset.parts === 'true')");
    assert.deepEqual(wfParting, parting, "the waterfall marks the same row as the list");
    const markers = await session.script("return [...document.querySelectorAll('[data-testid=\"replay-marker\"]')].map(m => m.parentElement.getAttribute('aria-label'))");
    assert.equal(markers.length, 1, `one marker (${markers})`);
    assert.match(markers[0], /^execute_bash: from the record, at /);
    const bars = await session.script(
      "return [...document.querySelectorAll('[data-testid=\"replay-bar\"]')].map(b => { const r = b.getBoundingClientRect(), t = b.parentElement.getBoundingClientRect(); return r.left >= t.left - 1 && r.right <= t.right + 1 && r.width >= 1; })",
    );
    assert.ok(bars.length >= 4 && bars.every(Boolean), `every bar drawn inside its side's axis (${bars})`);
    await session.script("document.querySelector('[data-testid=\"replay-waterfall\"]').scrollIntoView({ block: 'center' })");
    await shoot(session, "replay-waterfall-light-en");

    // Closed: the table ranks the replay's model.
    await session.click(await session.find('[data-testid="replay-close"]'));
    await session.until("the table row", async () =>
      (await session.script("return [...document.querySelectorAll('[data-testid=\"models-tried-row\"] th')].map(c => c.textContent)")).includes("small-scripted"),
    );
    await shoot(session, "replay-table-light-en");
  } finally {
    await session?.end();
    driver.child.kill();
    model.child.kill();
    other.child.kill();
  }
});

process.exit((await run()) ? 1 : 0);
