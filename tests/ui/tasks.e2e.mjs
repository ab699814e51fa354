// The real app in a real window (Xvfb, WebKitWebDriver) with the MCP reference server
// `@modelcontextprotocol/server-everything`, whose `simulate-research-query` runs only as a task
// (MCP Tasks): the call's card shows the task working with the server's words, then needing an
// answer while the server's question waits as a form under the call; the form is answered, the
// task goes on and is done, and the model's answer follows. Once in English and light, once in
// Chinese and dark; the card is checked with axe-core and photographed while the task works.
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

const taskText = (session) => session.script("const t = document.querySelector('.timeline-card .card-task'); return t ? t.textContent : '';");

for (const [lang, theme] of [
  ["en", "light"],
  ["zh", "dark"],
]) {
  test(`a tool the server runs as a task shows the task's state on its card, and its question is a form (${lang}, ${theme})`, async () => {
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
        { tool_calls: [{ name: "everything__simulate-research-query", arguments: { topic: "python", ambiguous: true } }] },
        { text: "The report on Python the programming language is ready." },
      ]),
    );
    const model = await startScriptedModel(scriptedModel, script);
    const driver = await startDriver(appEnv(configDir, { ...scriptedModelEnv(model), ...ownWindowState(configDir), ...gtkTheme(theme) }));
    let session;
    try {
      session = await Session.start(driver.base, app, [folder]);
      const box = await session.waitFor(".composer textarea");
      await setLanguage(session, lang);
      await session.type(box, "Research python for me.\uE007");

      // The task works: its state and the server's words on the call's card.
      const working = lang === "zh" ? "任务：进行中" : "Task: working";
      await session.until("the task working on its card", async () => (await taskText(session)).includes(working), 60_000);
      assert.match(await taskText(session), /Gathering sources|Analyzing content/);
      await axe(session, ".timeline-card", `a working task's card (${lang}, ${theme})`);
      await shoot(session, `task-working-${theme}-${lang}`);

      // The task needs an answer: the server's question is a form under the call.
      const form = await session.waitFor(".elicitation-card", 60_000);
      await session.until("the task waiting for the answer", async () => (await taskText(session)).includes(lang === "zh" ? "任务：等待你的回答" : "Task: needs your answer"));
      await axe(session, ".timeline-card", `a task waiting for an answer (${lang}, ${theme})`);
      await shoot(session, `task-input-required-${theme}-${lang}`);
      const chosen = await session.script(`
        const card = document.querySelector('.elicitation-card');
        const radio = [...card.querySelectorAll('input[type=radio]')].find((r) => r.value === 'programming');
        if (radio) { radio.click(); return 'radio'; }
        const select = card.querySelector('select');
        select.value = 'programming';
        select.dispatchEvent(new Event('change', { bubbles: true }));
        return select.value;`);
      assert.ok(chosen === "radio" || chosen === "programming", `chose ${chosen}`);
      await session.click(await session.find(".elicitation-card button[type=submit]"));
      await session.until("the form's answer", async () => (await session.text(form)).includes(lang === "zh" ? "已发送给 everything" : "Sent to everything"));

      // The task goes on and is done; the call holds the report, and the model answers.
      await session.until("the task done", async () => (await taskText(session)).includes(lang === "zh" ? "任务：已完成" : "Task: done"), 60_000);
      await session.until("the answer", async () => (await session.text(await session.find('[data-testid="chat"]'))).includes("The report on Python"));
      const phase = await session.script("return document.querySelector('.timeline-card[data-call-id]').className.match(/phase-(\\w+)/)[1]");
      assert.equal(phase, "success");
      await session.click(await session.find(".timeline-card .card-head"));
      await session.until("the report in the card", async () => (await session.text(await session.find(".timeline-card"))).includes("Research Report: python (programming)"));
      await shoot(session, `task-done-${theme}-${lang}`);
    } catch (error) {
      if (session) await shoot(session, `tasks-failed-${theme}-${lang}`).catch(() => {});
      throw error;
    } finally {
      await session?.end();
      driver.child.kill();
      model.child.kill();
    }
  });
}

test("Stop cancels a working task: its card says so and the call ends cancelled", async () => {
  const folder = join(tempDir("tooltrail-e2e-"), "demo-project");
  cpSync(join(repo, "tests/ui/fixtures/demo-project"), folder, { recursive: true });
  const configDir = tempDir("tooltrail-config-");
  writeFileSync(
    join(configDir, "mcp.json"),
    JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [everything, "stdio"], approval: "allow" } } }),
  );
  const script = join(configDir, "script.json");
  writeFileSync(script, JSON.stringify([{ tool_calls: [{ name: "everything__simulate-research-query", arguments: { topic: "tides" } }] }, { text: "Stopped." }]));
  const model = await startScriptedModel(scriptedModel, script);
  const driver = await startDriver(appEnv(configDir, { ...scriptedModelEnv(model), ...ownWindowState(configDir), ...gtkTheme("light") }));
  let session;
  try {
    session = await Session.start(driver.base, app, [folder]);
    const box = await session.waitFor(".composer textarea");
    await setLanguage(session, "en");
    await session.type(box, "Research tides.\uE007");
    await session.until("the task working on its card", async () => (await taskText(session)).includes("Task: working"), 60_000);
    await session.click(await session.find(".composer button.stop"));
    await session.until("the task cancelled on its card", async () => (await taskText(session)).includes("Task: cancelled"), 30_000);
    await session.until("the call cancelled", async () =>
      (await session.script("const c = document.querySelector('.timeline-card[data-call-id]'); return c ? c.className : '';")).includes("phase-cancelled"),
    );
    await axe(session, ".timeline-card", "a cancelled task's card");
    await shoot(session, "task-cancelled-light-en");
  } catch (error) {
    if (session) await shoot(session, "tasks-stop-failed").catch(() => {});
    throw error;
  } finally {
    await session?.end();
    driver.child.kill();
    model.child.kill();
  }
});

process.exit((await run()) ? 1 : 0);
