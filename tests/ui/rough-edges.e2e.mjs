// The real app in a real window (Xvfb, WebKitWebDriver), against the scripted model, as a user
// meets a first week's rough edges: the folder's AGENTS.md named in the empty chat (and its
// switch) and in the context meter once asked; an AGENTS.md that links out of the folder (to a
// key in the home folder) left out, with why, in both places, and never sent or recorded; the waterfall's last bars clear of the window's
// right edge; the conversation's rename and delete icons drawn (not a glyph the font lacks);
// and, with no keychain running (no Secret Service on this display's D-Bus), Settings →
// Providers saying in a sentence that keys cannot be stored, how to fix it and what works
// meanwhile. English and Chinese, with screenshots.
import assert from "node:assert/strict";
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bytesUnder, repo, run, screenshots, tempDir, test } from "./lib.mjs";
import { appEnv, gtkTheme, ownWindowState, scriptedModelEnv, Session, setLanguage, shoot as shootWindow, startDriver, startScriptedModel } from "./webdriver.mjs";

const app = process.env.TOOLTRAIL_APP ?? join(repo, "target/debug/tooltrail-app");
const scriptedModel = process.env.SCRIPTED_MODEL ?? join(repo, "target/debug/scripted-model");
// Screenshots need WebKit's DMA-BUF renderer (see app.e2e.mjs).
process.env.WEBKIT_DISABLE_DMABUF_RENDERER ??= "0";
// No keychain: what a machine without a desktop session has (and the point of one check).
delete process.env.DBUS_SESSION_BUS_ADDRESS;

const shoot = (session, name) => shootWindow(session, `rough-edges-${name}`);

const TEXT = {
  en: {
    instructions: "New conversations follow the project's instructions in AGENTS.md.",
    off: "The project's instructions in AGENTS.md are off for this folder.",
    turnOff: "Turn off",
    turnOn: "Turn on",
    meter: "Follows AGENTS.md",
    rename: "Rename (F2)",
    remove: "Delete",
    settings: "Settings",
    keychain: /^API keys cannot be stored: no keychain is running on this computer .*install gnome-keyring.*TOOLTRAIL_API_KEY/s,
    leftOut: "AGENTS.md was left out: it is a link to a file outside the folder.",
    meterLeftOut: "AGENTS.md left out",
  },
  zh: {
    instructions: "新对话会遵循 AGENTS.md 中的项目说明。",
    off: "此文件夹已关闭 AGENTS.md 中的项目说明。",
    turnOff: "关闭",
    turnOn: "开启",
    meter: "遵循 AGENTS.md",
    rename: "重命名 (F2)",
    remove: "删除",
    settings: "设置",
    keychain: /^无法保存 API 密钥：.*gnome-keyring.*TOOLTRAIL_API_KEY/s,
    leftOut: "未采用 AGENTS.md：它是指向文件夹外文件的链接。",
    meterLeftOut: "未采用 AGENTS.md",
  },
};

async function clickByText(session, css, label) {
  for (const id of await session.findAll(css)) {
    if ((await session.text(id)).trim() === label) return session.click(id);
  }
  throw new Error(`no ${css} saying ${label}`);
}

for (const lang of ["en", "zh"]) {
  const say = TEXT[lang];
  test(`a first week's rough edges in a real window (${lang})`, async () => {
    const folder = join(tempDir("tooltrail-e2e-"), "demo-project");
    cpSync(join(repo, "tests/ui/fixtures/demo-project"), folder, { recursive: true });
    writeFileSync(join(folder, "AGENTS.md"), "Answer briefly. Run `go test ./...` to check a change.\n");
    const configDir = tempDir("tooltrail-config-");
    const script = join(configDir, "script.json");
    const record = join(configDir, "requests.jsonl");
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
        { tool_calls: [{ name: "count_lines", arguments: { path: "." } }], delay_ms: 300 },
        { text: "A small Go service; `go test ./...` checks it.", delay_ms: 600 },
      ]),
    );
    const model = await startScriptedModel(scriptedModel, script, ["--record", record]);
    const driver = await startDriver(appEnv(configDir, { ...scriptedModelEnv(model), ...gtkTheme("light"), ...ownWindowState(configDir) }));
    let session;
    try {
      session = await Session.start(driver.base, app, [folder]);
      const box = await session.waitFor(".composer textarea");
      await setLanguage(session, lang);

      // The empty chat names the folder's instructions, with the folder's switch.
      const line = await session.waitFor('[data-testid="project-instructions"]');
      await session.until("the instructions line", async () => (await session.text(line)).includes(say.instructions));
      await shoot(session, `instructions-${lang}`);
      await clickByText(session, '[data-testid="project-instructions"] button', say.turnOff);
      await session.until("turned off", async () => (await session.text(await session.find('[data-testid="project-instructions"]'))).includes(say.off));
      await clickByText(session, '[data-testid="project-instructions"] button', say.turnOn);
      await session.until("turned on again", async () => (await session.text(await session.find('[data-testid="project-instructions"]'))).includes(say.instructions));

      // Asked, as a waterfall: the meter says which file every request carries.
      await session.click(await session.find('.timeline-modes button[role="radio"]:last-child'));
      await session.type(box, "What does this project do?\uE007");
      await session.until("the answer", async () => (await session.text(await session.find('[data-testid="chat"]'))).includes("checks it"));
      await session.waitFor('[data-testid="turn-tokens"]');
      assert.equal((await session.text(await session.waitFor('[data-testid="meter-instructions"]'))).trim(), say.meter);

      // The last bars end inside the waterfall, clear of its right edge (and of an overlay
      // scrollbar there).
      const edge = await session.script(`
        const scroller = document.querySelector('.waterfall-scroll').getBoundingClientRect();
        const bars = [...document.querySelectorAll('.waterfall .wf-bar')].map((bar) => bar.getBoundingClientRect());
        return { right: scroller.right, last: Math.max(...bars.map((bar) => bar.right)), bars: bars.length };`);
      assert.ok(edge.bars >= 5, `bars drawn: ${JSON.stringify(edge)}`);
      assert.ok(edge.last <= edge.right - 12, `the last bar ends ${edge.right - edge.last}px from the edge: ${JSON.stringify(edge)}`);
      // The meter's line stays inside the composer's column.
      const meterRow = await session.script(`
        const row = document.querySelector('.context-meter-row').getBoundingClientRect();
        const column = document.querySelector('.composer').getBoundingClientRect();
        return { row: row.right, column: column.right };`);
      assert.ok(meterRow.row <= meterRow.column + 1, JSON.stringify(meterRow));
      await session.waitFor(".conversation-actions .conv-icon");
      await shoot(session, `waterfall-${lang}`);

      // The conversation's icons are drawn shapes with names, not glyphs.
      await session.waitFor(".conversation-actions .conv-icon");
      const icons = await session.script(`
        return [...document.querySelectorAll('.conversation-actions .conv-icon')].map((button) => {
          const svg = button.querySelector('svg');
          const box = svg ? svg.getBoundingClientRect() : null;
          return { label: button.getAttribute('aria-label'), text: button.textContent.trim(), width: box && box.width, paths: svg ? svg.querySelectorAll('path').length : 0 };
        });`);
      assert.deepEqual(icons.map((icon) => [icon.label, icon.text]), [[say.rename, ""], [say.remove, ""]]);
      for (const icon of icons) assert.ok(icon.width >= 12 && icon.paths >= 2, JSON.stringify(icon));

      // The model got AGENTS.md in the folder's context, at the head of the question, and not in the
      // system prompt every folder shares.
      const first = readFileSync(record, "utf8").trim().split("\n").map((entry) => JSON.parse(entry)).find((entry) => entry.path.endsWith("/chat/completions"));
      assert.doesNotMatch(first.body.messages[0].content, /AGENTS\.md/);
      assert.equal(first.body.messages[1].role, "user");
      assert.match(first.body.messages[1].content, /^<context>\n[^]*from AGENTS\.md \(follow them where they apply to the question\):\n\nAnswer briefly\.[^]*\n<\/context>\n\n/);

      // Settings → Providers without a keychain: one sentence, the way forward, what works now.
      await clickByText(session, ".nav-tab", say.settings);
      const keychain = await session.waitFor('[data-testid="cfg-keychain"]');
      const sentence = (await session.text(keychain)).trim();
      assert.match(sentence, say.keychain);
      assert.doesNotMatch(sentence, /D-?Bus/i);
      await session.script("arguments[0].scrollIntoView({ block: 'center' })", [{ "element-6066-11e4-a52e-4f735466cecf": keychain }]);
      await shoot(session, `keychain-${lang}`);
    } finally {
      await session?.end();
      driver.child.kill();
      model.child.kill();
    }
  });
}


for (const lang of ["en", "zh"]) {
  const say = TEXT[lang];
  test(`an AGENTS.md linked to a key outside the folder is left out, with why, in a real window (${lang})`, async () => {
    const canary = "CANARY-5b7a OPENSSH PRIVATE KEY";
    const root = tempDir("tooltrail-e2e-");
    mkdirSync(join(root, "home/.ssh"), { recursive: true });
    writeFileSync(join(root, "home/.ssh/id_ed25519"), canary);
    const folder = join(root, "cloned-project");
    cpSync(join(repo, "tests/ui/fixtures/demo-project"), folder, { recursive: true });
    symlinkSync(join(root, "home/.ssh/id_ed25519"), join(folder, "AGENTS.md"));
    const configDir = tempDir("tooltrail-config-");
    const script = join(configDir, "script.json");
    const record = join(configDir, "requests.jsonl");
    writeFileSync(script, JSON.stringify([{ text: "A small Go service.", delay_ms: 50 }]));
    const model = await startScriptedModel(scriptedModel, script, ["--record", record]);
    const driver = await startDriver(appEnv(configDir, { ...scriptedModelEnv(model), ...gtkTheme("light"), ...ownWindowState(configDir) }));
    let session;
    try {
      session = await Session.start(driver.base, app, [folder]);
      const box = await session.waitFor(".composer textarea");
      await setLanguage(session, lang);

      // The empty chat says the file was left out and why, and offers no switch for it.
      const line = await session.waitFor('[data-testid="instructions-left-out"]');
      await session.until("the left-out line", async () => (await session.text(line)).trim() === say.leftOut);
      assert.deepEqual(await session.findAll('[data-testid="project-instructions"] button'), []);
      // The meter, before anything is asked, says it too.
      const meter = await session.waitFor('[data-testid="meter-instructions-left-out"]');
      assert.equal((await session.text(meter)).trim(), say.meterLeftOut);
      assert.equal(await session.script('return document.querySelector(\'[data-testid="meter-instructions-left-out"]\').title'), say.leftOut);
      await shoot(session, `left-out-${lang}`);

      await session.type(box, "What does this project do?\uE007");
      await session.until("the answer", async () => (await session.text(await session.find('[data-testid="chat"]'))).includes("A small Go service."));
      await session.until("the meter after the answer", async () => (await session.text(await session.find('[data-testid="meter-instructions-left-out"]'))).trim() === say.meterLeftOut);
      assert.deepEqual(await session.findAll('[data-testid="meter-instructions"]'), []);
      await shoot(session, `left-out-asked-${lang}`);

      // Neither the model nor the record ever got the key.
      const sent = readFileSync(record, "utf8");
      assert.match(sent, /What does this project do\?/);
      assert.doesNotMatch(sent, /CANARY|project's instructions for agents/);
      const stored = bytesUnder(join(configDir, "data"));
      assert.ok(stored.includes("What does this project do?"), "the question is in the record");
      assert.ok(!stored.includes("CANARY"), "the key is in the record");
    } finally {
      await session?.end();
      driver.child.kill();
      model.child.kill();
    }
  });
}

process.exit((await run()) ? 1 : 0);
