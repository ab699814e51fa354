// The real app in a real window (Xvfb, WebKitWebDriver) with the MCP reference server
// `@modelcontextprotocol/server-everything`: `@` in the composer lists the folder's files and the
// server's resources, the chosen ones become chips, and the (scripted) model's request carries
// their text in the question; `/` lists the server's prompts, the form asks for the arguments
// with the server's completions (the second argument's depend on the first), and Insert puts
// the prompt's message in the box. English and light, then Chinese and dark; axe-core on the
// composer, and screenshots in target/screenshots/app-e2e-composer-*.png.
import assert from "node:assert/strict";
import { cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dependencyMissing, repo, run, screenshots, tempDir, test } from "./lib.mjs";
import { appEnv, axe, gtkTheme, ownWindowState, scriptedModelEnv, Session, setLanguage, shoot as shootWindow, startDriver, startScriptedModel } from "./webdriver.mjs";

const app = process.env.TOOLTRAIL_APP ?? join(repo, "target/debug/tooltrail-app");
const scriptedModel = process.env.SCRIPTED_MODEL ?? join(repo, "target/debug/scripted-model");
const everything = join(repo, "tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const INSTRUCTIONS = "demo://resource/static/document/instructions.md";
// Screenshots need WebKit's DMA-BUF renderer (see app.e2e.mjs).
process.env.WEBKIT_DISABLE_DMABUF_RENDERER ??= "0";

const shoot = (session, name) => shootWindow(session, `app-e2e-composer-${name}`);

/** The labels of the picker's options. */
const options = (session) => session.script("return [...document.querySelectorAll('.picker-option .picker-label')].map(o => o.textContent)");

if (!existsSync(everything)) {
  dependencyMissing("tests/mcp/node_modules is not installed (run scripts/mcp-setup)");
  process.exit(0);
}

for (const [lang, theme] of [
  ["en", "light"],
  ["zh", "dark"],
]) {
  test(`@ attaches a file and a resource, and / fills a prompt with the server's completions (${lang}, ${theme})`, async () => {
    const folder = join(tempDir("tooltrail-e2e-"), "demo-project");
    cpSync(join(repo, "tests/ui/fixtures/demo-project"), folder, { recursive: true });
    const configDir = tempDir("tooltrail-config-");
    writeFileSync(join(configDir, "mcp.json"), JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [everything, "stdio"] } } }));
    const script = join(configDir, "script.json");
    writeFileSync(script, JSON.stringify([{ text: "The readme and the instructions, read." }]));
    const requests = join(configDir, "requests.jsonl");
    const model = await startScriptedModel(scriptedModel, script, ["--record", requests]);
    const driver = await startDriver(appEnv(configDir, { ...scriptedModelEnv(model), ...ownWindowState(configDir), ...gtkTheme(theme) }));
    let session;
    try {
      session = await Session.start(driver.base, app, [folder]);
      const box = await session.waitFor(".composer textarea");
      await setLanguage(session, lang);

      // @: the folder's files, then the server's resources.
      await session.type(box, "Summarise @READ");
      await session.until("README.md in the list", async () => (await options(session)).includes("README.md"), 60_000);
      await session.type(box, "\uE007");
      await session.until("the README chip", async () => /README\.md/.test(await session.text(await session.find(".composer"))));
      await session.type(box, "@instructions");
      await session.until("the server's resource in the list", async () => (await options(session)).includes("instructions.md"), 60_000);
      await shoot(session, `at-${theme}-${lang}`);
      await axe(session, ".composer", `the @ list (${lang}, ${theme})`);
      await session.type(box, "\uE007");
      await session.until("both chips read", async () => (await session.findAll(".attach-chip .attach-size")).length === 2 && !(await session.text(await session.find(".attach-chips"))).match(/reading|正在读取/));
      await shoot(session, `chips-${theme}-${lang}`);
      await axe(session, ".composer", `the chips (${lang}, ${theme})`);
      await session.type(box, "and the server's instructions.\uE007");
      await session.until("the answer", async () => (await session.text(await session.find('[data-testid="chat"]'))).includes("The readme and the instructions, read."), 60_000);

      // What the model got: the question, with both texts in it.
      const sent = readFileSync(requests, "utf8").trim().split("\n").map((line) => JSON.parse(line)).filter((r) => r.path.endsWith("/chat/completions"));
      const last = sent[0].body.messages.at(-1);
      assert.equal(last.role, "user");
      // The folder's context comes first, after the system prompt and the tools; then the question.
      const [context, asked] = last.content.split("\n</context>\n\n");
      assert.ok(context.startsWith('<context>\nThe project folder is "'), context.slice(0, 200));
      // Each question's blocks are tagged with a nonce of its own; compared here without it.
      const nonce = /^<attachment-([0-9a-f]{16}) /.exec(asked)?.[1];
      assert.ok(nonce, asked.slice(0, 200));
      const question = { ...last, content: asked.replaceAll(`attachment-${nonce}`, "attachment") };
      const readme = readFileSync(join(folder, "README.md"), "utf8");
      const instructions = readFileSync(join(everything, "../docs/instructions.md"), "utf8");
      assert.ok(question.content.startsWith(`<attachment name="README.md" source="README.md">\n${readme}`), question.content.slice(0, 200));
      assert.ok(question.content.includes(`<attachment name="instructions.md" source="everything:${INSTRUCTIONS}" type="text/markdown">\n${instructions}`));
      assert.ok(question.content.endsWith("</attachment>\n\nSummarise and the server's instructions."), question.content.slice(-200));

      // /: the server's prompts, and a form with its completions.
      await session.type(box, "/completable");
      await session.until("the prompt in the list", async () => (await options(session)).includes("/completable-prompt"), 60_000);
      await session.type(box, "\uE007");
      const field = await session.waitFor("#prompt-arg-department");
      await session.type(field, "S");
      await session.until("the server's departments", async () => {
        const values = await session.script("return [...document.querySelectorAll('.prompt-suggestions button')].map(b => b.textContent)");
        return values.join(",") === "Sales,Support";
      });
      await session.click(await session.find(".prompt-suggestions button"));
      await session.click(await session.find("#prompt-arg-name"));
      await session.until("the people of Sales", async () => {
        const values = await session.script("return [...document.querySelectorAll('.prompt-suggestions button')].map(b => b.textContent)");
        return values.join(",") === "David,Eve,Frank";
      });
      await shoot(session, `prompt-form-${theme}-${lang}`);
      await axe(session, ".composer", `the prompt form (${lang}, ${theme})`);
      await session.click(await session.find(".prompt-suggestions button"));
      await session.click(await session.find(".prompt-actions button.primary"));
      await session.until("the prompt's message in the box", async () =>
        (await session.script("return document.querySelector('.composer textarea').value")) === "Please promote David to the head of the Sales team.",
      );
      await shoot(session, `prompt-inserted-${theme}-${lang}`);
    } catch (error) {
      if (session) await shoot(session, `failed-${theme}-${lang}`).catch(() => {});
      throw error;
    } finally {
      await session?.end();
      driver.child.kill();
      model.child.kill();
    }
  });
}

process.exit((await run()) ? 1 : 0);
