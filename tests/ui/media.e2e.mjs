// The real app in a real window (Xvfb, WebKitWebDriver) with the MCP reference server
// `@modelcontextprotocol/server-everything`: the image its `get-tiny-image` tool returns shows
// on the call's timeline card and opens full size on a click (Esc closes it), and the
// structured content of `get-structured-content` is a table in the expanded card. Once in
// English and light, once in Chinese and dark; the cards are checked with axe-core and
// photographed.
import assert from "node:assert/strict";
import { cpSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dependencyMissing, repo, run, tempDir, test } from "./lib.mjs";
import { appEnv, axe, gtkTheme, ownWindowState, scriptedModelEnv, Session, setLanguage, shoot as shootWindow, startDriver, startScriptedModel } from "./webdriver.mjs";

const app = process.env.TOOLTRAIL_APP ?? join(repo, "target/debug/tooltrail-app");
const scriptedModel = process.env.SCRIPTED_MODEL ?? join(repo, "target/debug/scripted-model");
const everything = join(repo, "tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
// Screenshots need WebKit's DMA-BUF renderer (see app.e2e.mjs).
process.env.WEBKIT_DISABLE_DMABUF_RENDERER ??= "0";

const shoot = (session, name) => shootWindow(session, `app-e2e-${name}`);

if (!existsSync(everything)) {
  dependencyMissing("tests/mcp/node_modules is not installed (run scripts/mcp-setup)");
  process.exit(0);
}

for (const [lang, theme] of [
  ["en", "light"],
  ["zh", "dark"],
]) {
  test(`a tool's image is on its card and opens full size; structured content is a table (${lang}, ${theme})`, async () => {
    const folder = join(tempDir("tooltrail-e2e-"), "demo-project");
    cpSync(join(repo, "tests/ui/fixtures/demo-project"), folder, { recursive: true });
    const configDir = tempDir("tooltrail-config-");
    writeFileSync(
      join(configDir, "mcp.json"),
      JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [everything, "stdio"], approval: "allow" } } }),
    );
    const script = join(configDir, "script.json");
    writeFileSync(
      script,
      JSON.stringify([
        { tool_calls: [{ name: "everything__get-tiny-image", arguments: {} }] },
        { tool_calls: [{ name: "everything__get-structured-content", arguments: { location: "Chicago" } }] },
        { text: "The tool sent the MCP logo, and Chicago has light rain at 36 degrees." },
      ]),
    );
    const model = await startScriptedModel(scriptedModel, script);
    const driver = await startDriver(appEnv(configDir, { ...scriptedModelEnv(model), ...ownWindowState(configDir), ...gtkTheme(theme) }));
    let session;
    try {
      session = await Session.start(driver.base, app, [folder]);
      const box = await session.waitFor(".composer textarea");
      await setLanguage(session, lang);
      await session.type(box, "Show me the tiny image, then the weather in Chicago.\uE007");
      await session.until("the answer", async () =>
        (await session.text(await session.find('[data-testid="chat"]'))).includes("light rain at 36 degrees"),
      );

      // The image, on the card, drawn (not a broken picture).
      const thumb = await session.waitFor('.timeline-card [data-testid="call-media"] img', 30_000);
      const drawn = await session.script(
        "const img = document.querySelector('.timeline-card [data-testid=\"call-media\"] img'); return [img.complete, img.naturalWidth, img.naturalHeight, img.alt]",
      );
      assert.equal(drawn[0], true);
      assert.deepEqual([drawn[1], drawn[2]], [20, 20], `the MCP logo is 20 × 20 pixels: ${drawn}`);
      assert.match(drawn[3], lang === "zh" ? /^工具返回的图片 1（image\/png，/ : /^Image 1 from the tool \(image\/png, /);
      await axe(session, '.timeline-card[data-call-id] [data-testid="call-media"]', `the image on the card (${lang}, ${theme})`);
      await shoot(session, `media-card-${theme}-${lang}`);

      // Full size on a click; Esc closes it.
      await session.click(thumb);
      await session.waitFor(".lightbox img");
      const big = await session.script("const r = document.querySelector('.lightbox img').getBoundingClientRect(); return [r.width, r.height]");
      assert.ok(big[0] >= 160, `the image is shown large: ${big}`);
      await axe(session, ".lightbox", `the enlarged image (${lang}, ${theme})`);
      await shoot(session, `media-enlarged-${theme}-${lang}`);
      await session.script("window.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }))");
      await session.until("the enlarged image to close", async () => (await session.script("return document.querySelector('.lightbox') === null")) === true);

      // Structured content: a table in the expanded card.
      const cards = await session.script("return [...document.querySelectorAll('.timeline-card[data-call-id]')].map(c => c.dataset.callId)");
      assert.equal(cards.length, 2);
      await session.click(await session.find(`.timeline-card[data-call-id="${cards[1]}"] .card-head`));
      const table = await session.waitFor('[data-testid="structured-table"]');
      const text = await session.text(table);
      assert.match(text, /temperature\s+36/);
      assert.match(text, /conditions\s+Light rain \/ drizzle/);
      await axe(session, `.timeline-card[data-call-id="${cards[1]}"]`, `the structured content (${lang}, ${theme})`);
      await shoot(session, `media-structured-${theme}-${lang}`);
    } finally {
      await session?.end();
      driver.child.kill();
      model.child.kill();
    }
  });
}

process.exit((await run()) ? 1 : 0);
