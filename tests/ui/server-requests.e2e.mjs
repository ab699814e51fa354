// The real app in a real window (Xvfb, WebKitWebDriver) with the MCP reference server
// `@modelcontextprotocol/server-everything`: its tool asks for a form (elicitation), which
// becomes a card under the call with the required field marked; the form is filled in and sent,
// and the server's result says what was given. Then its other tool asks to use the model
// (sampling): the card shows the messages and the token limit, Allow runs them on the
// question's (scripted) model, and the card shows the answer. Once in English and light, once in
// Chinese and dark; each card is checked with axe-core and photographed.
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
  test(`a server's form and its use of the model are cards under the call, answered in the window (${lang}, ${theme})`, async () => {
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
        { tool_calls: [{ name: "everything__trigger-elicitation-request", arguments: {} }] },
        { tool_calls: [{ name: "everything__trigger-sampling-request", arguments: { prompt: "Name a colour.", maxTokens: 50 } }] },
        // The server's request to the model, once allowed.
        { text: "Teal." },
        { text: "Ada gave her name, and the server's model said teal." },
      ]),
    );
    const model = await startScriptedModel(scriptedModel, script);
    const driver = await startDriver(appEnv(configDir, { ...scriptedModelEnv(model), ...ownWindowState(configDir), ...gtkTheme(theme) }));
    let session;
    try {
      session = await Session.start(driver.base, app, [folder]);
      const box = await session.waitFor(".composer textarea");
      await setLanguage(session, lang);
      await session.type(box, "Ask me for my name, then ask the server's model for a colour.\uE007");

      // The form, under the call, built from the server's schema.
      const form = await session.waitFor(".elicitation-card", 60_000);
      const title = await session.text(await session.find(".elicitation-card .approval-title"));
      assert.equal(title, lang === "zh" ? "everything 请求输入" : "everything asks for input");
      const labels = await session.script(
        "return [...document.querySelectorAll('.elicitation-card .elicitation-field > label')].map(l => l.textContent)",
      );
      assert.ok(labels.some((label) => /^String\s*\*/.test(label)), `the required name is marked: ${labels}`);
      assert.ok(labels.includes("Boolean"), `${labels}`);
      await axe(session, ".elicitation-card", `the form card (${lang}, ${theme})`);
      const name = await session.find(".elicitation-card #elicit-" + (await session.script("return document.querySelector('.elicitation-card').dataset.requestId")) + "-name");
      await session.type(name, "Ada Lovelace");
      await shoot(session, `elicitation-${theme}-${lang}`);
      await session.click(await session.find(".elicitation-card button[type=submit]"));
      await session.until("the form's answer", async () =>
        (await session.text(form)).includes(lang === "zh" ? "已发送给 everything" : "Sent to everything"),
      );

      // The use of the model: what would be sent, and the limit.
      const sampling = await session.waitFor(".sampling-card", 60_000);
      const shown = await session.text(sampling);
      assert.match(shown, /Resource trigger-sampling-request context: Name a colour\./);
      assert.match(shown, /You are a helpful test server\./);
      assert.match(shown, lang === "zh" ? /最多 50 个 token/ : /At most 50 tokens/);
      await axe(session, ".sampling-card", `the sampling card (${lang}, ${theme})`);
      await session.script("document.querySelector('.sampling-card').scrollIntoView({ block: 'end' })");
      await shoot(session, `sampling-${theme}-${lang}`);
      await session.click(await session.find(".sampling-card button.primary"));
      await session.until("the model's answer on the card", async () => (await session.text(sampling)).includes("Teal."));
      await session.until("the answer", async () =>
        (await session.text(await session.find('[data-testid="chat"]'))).includes("the server's model said teal."),
      );
      // The server got both answers: its results say so.
      const results = await session.script(
        "return [...document.querySelectorAll('.timeline-card[data-call-id]')].map(c => c.className.match(/phase-(\\w+)/)[1])",
      );
      assert.deepEqual(results, ["success", "success"]);
      await axe(session, ".sampling-card", `the answered sampling card (${lang}, ${theme})`);
      await session.script("document.querySelector('.sampling-card').scrollIntoView({ block: 'end' })");
      await shoot(session, `sampling-answered-${theme}-${lang}`);
    } catch (error) {
      // What the window showed when it went wrong.
      if (session) await shoot(session, `server-requests-failed-${theme}-${lang}`).catch(() => {});
      throw error;
    } finally {
      await session?.end();
      driver.child.kill();
      model.child.kill();
    }
  });
}

process.exit((await run()) ? 1 : 0);
