// The real app in a real window (run under Xvfb), driven through WebKitWebDriver: it opens a
// copy of the fixture folder given as its argument, asks a question of the scripted model
// server, approves a command, and finds the answer and the timeline cards in their final states.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repo, run, screenshots, test } from "./lib.mjs";
import { Session, startDriver, startScriptedModel } from "./webdriver.mjs";

const app = process.env.TOOLTRAIL_APP ?? join(repo, "target/debug/tooltrail-app");
const scriptedModel = process.env.SCRIPTED_MODEL ?? join(repo, "target/debug/scripted-model");
const cli = process.env.TOOLTRAIL_CLI ?? join(repo, "target/debug/tooltrail");

function windowTitles() {
  try {
    return execFileSync("xwininfo", ["-root", "-tree"], { encoding: "utf8" });
  } catch {
    return "";
  }
}

test("the app opens a folder, asks, waits for approval, runs the command and answers", async () => {
  const folder = join(mkdtempSync(join(tmpdir(), "tooltrail-e2e-")), "demo-project");
  cpSync(join(repo, "tests/ui/fixtures/demo-project"), folder, { recursive: true });
  const configDir = mkdtempSync(join(tmpdir(), "tooltrail-config-"));
  const model = await startScriptedModel(scriptedModel, join(repo, "tests/ui/fixtures/approve-and-answer.json"));
  const driver = await startDriver({
    ...process.env,
    TAURI_WEBVIEW_AUTOMATION: "true",
    TOOLTRAIL_BASE_URL: model.url,
    TOOLTRAIL_MODEL: "scripted",
    TOOLTRAIL_CONFIG_DIR: configDir,
    TOOLTRAIL_DATA_DIR: join(configDir, "data"),
  });
  let session;
  try {
    session = await Session.start(driver.base, app, [folder]);

    // The folder from the command line is open, and the window is named after it.
    await session.waitFor(".composer textarea").catch(async (error) => {
      console.log(await session.script("return document.body.innerHTML.slice(0, 600)").catch((e) => e.message));
      throw error;
    });
    assert.match(await session.text(await session.find(".workspace-name")), /demo-project/);
    await session.until("the window title", () => windowTitles().includes("Tooltrail — demo-project"), 10_000);

    const box = await session.find(".composer textarea");
    await session.type(box, "What does this project do?");
    await session.type(box, "\uE007"); // Enter

    // Two parallel reads, then the command waits for the user: nothing runs by itself.
    const card = await session.waitFor(".approval-card");
    const cardText = await session.text(card);
    assert.match(cardText, /touch checked\.txt/);
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(existsSync(join(folder, "checked.txt")), false);
    writeFileSync(join(screenshots, "app-e2e-approval.png"), await session.screenshot());

    const buttons = await session.findAll(".approval-card .approval-actions button");
    await session.click(buttons[0]); // Allow once

    // The answer arrives; every call ended well; the command really ran.
    await session.until("the answer", async () => (await session.text(await session.find('[data-testid="chat"]'))).includes("small Go service"));
    await session.until("the send button", async () => (await session.findAll(".composer button.primary")).length === 1);
    const states = await session.script(
      "return [...document.querySelectorAll('.timeline-card')].map(c => c.getAttribute('data-call-id') && [c.querySelector('.card-tool').textContent, c.className.match(/phase-(\\w+)/)[1]])",
    );
    assert.deepEqual(
      states.map(([tool, phase]) => `${tool}:${phase}`).sort(),
      ["execute_bash:success", "read_file:success", "search_text:success"],
    );
    assert.equal(existsSync(join(folder, "checked.txt")), true);
    // The folder is watched: the file the command made counts as a change since the question.
    const changed = await session.until("the files-changed note", async () => (await session.findAll('[data-testid="files-changed"]'))[0]);
    const changedPaths = await session.script("return arguments[0].title", [{ "element-6066-11e4-a52e-4f735466cecf": changed }]);
    assert.equal(changedPaths, "checked.txt");
    const count = await session.text(await session.find('[data-testid="timeline-count"]'));
    assert.match(count, /3 calls/);

    // Expand the command's card: its approval is recorded as the user's.
    const bash = await session.find('.timeline-card[data-call-id] .card-head');
    await session.click(bash);
    await session.until("the expanded card", async () => (await session.findAll(".timeline-card.expanded .card-body")).length === 1);
    // The cards below move down for it rather than overlap it.
    await session.until("the cards to make room", () =>
      session.script(
        "const [a, b] = document.querySelectorAll('.timeline-card'); return a.getBoundingClientRect().bottom <= b.getBoundingClientRect().top + 1",
      ),
    );
    writeFileSync(join(screenshots, "app-e2e-answered.png"), await session.screenshot());

    // The conversation is recorded: it is listed for the folder and redraws from the database.
    const listed = await session.until("the conversation in the list", async () => (await session.findAll(".side-list .side-item"))[0]);
    await session.click(await session.find(".new-conversation"));
    await session.until("an empty chat", async () => (await session.findAll(".timeline-card")).length === 0);
    await session.click(listed);
    await session.until("the redrawn answer", async () => (await session.text(await session.find('[data-testid="chat"]'))).includes("small Go service"));
    await session.until("the redrawn timeline", async () => (await session.findAll(".timeline-card.phase-success")).length === 3);
  } finally {
    await session?.end();
    driver.child.kill();
    model.child.kill();
  }
});

test("MCP tools run in the app with their server named, and a standing deny rule refuses a command", async () => {
  const folder = join(mkdtempSync(join(tmpdir(), "tooltrail-e2e-")), "demo-project");
  cpSync(join(repo, "tests/ui/fixtures/demo-project"), folder, { recursive: true });
  const configDir = mkdtempSync(join(tmpdir(), "tooltrail-config-"));
  const server = join(repo, "tests/mcp/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
  assert.ok(existsSync(server), "the filesystem server is installed (scripts/mcp-setup)");
  // A config as users paste it from other MCP hosts, with Tooltrail's per-tool approvals.
  writeFileSync(
    join(configDir, "mcp.json"),
    JSON.stringify({
      mcpServers: {
        fs: { command: process.execPath, args: [server, folder], tools: { read_text_file: "allow", write_file: "never" } },
        broken: { command: "no-such-mcp-server-program" },
      },
    }),
  );
  const script = join(configDir, "script.json");
  writeFileSync(
    script,
    JSON.stringify([
      {
        tool_calls: [
          { name: "fs__read_text_file", arguments: { path: join(folder, "README.md") } },
          { name: "fs__write_file", arguments: { path: join(folder, "pwned.txt"), content: "x" } },
          { name: "execute_bash", arguments: { command: "git push origin main" } },
        ],
      },
      { text: "The README calls it a **small Go service**.", delay_ms: 10 },
    ]),
  );
  const env = { ...process.env, TOOLTRAIL_CONFIG_DIR: configDir, TOOLTRAIL_DATA_DIR: join(configDir, "data") };
  // A rule kept by the command line holds in the app too.
  execFileSync(cli, ["rules", "add", "deny", "git", "push", "-w", folder], { env });
  const model = await startScriptedModel(scriptedModel, script);
  const driver = await startDriver({ ...env, TAURI_WEBVIEW_AUTOMATION: "true", TOOLTRAIL_BASE_URL: model.url, TOOLTRAIL_MODEL: "scripted" });
  let session;
  try {
    session = await Session.start(driver.base, app, [folder]);
    // The servers start as the folder opens: the sidebar shows the one running and the one that failed.
    const servers = await session.until("the MCP servers", async () => {
      const found = (await session.findAll('[data-testid="mcp-servers"]'))[0];
      return found && /running/.test(await session.text(found)) ? found : undefined;
    }, 30_000);
    const listed = await session.text(servers);
    assert.match(listed, /fs\s+running · 14 tools/);
    assert.match(listed, /broken\s+failed[\s\S]*was not found/);

    const box = await session.find(".composer textarea");
    await session.type(box, "What does the README say?");
    await session.type(box, "\uE007"); // Enter
    await session.until("the answer", async () => (await session.text(await session.find('[data-testid="chat"]'))).includes("small Go service"));
    const states = await session.script(
      "return [...document.querySelectorAll('.timeline-card')].map(c => [c.querySelector('.card-tool').textContent, c.className.match(/phase-(\\w+)/)[1]])",
    );
    assert.deepEqual(states.map(([tool, phase]) => `${tool}:${phase}`).sort(), ["execute_bash:denied", "fs__read_text_file:success", "fs__write_file:denied"]);
    assert.equal(existsSync(join(folder, "pwned.txt")), false);
    await session.click(await session.find('.timeline-card.phase-success .card-head'));
    const body = await session.until("the expanded card", async () => (await session.findAll(".timeline-card.expanded .card-body"))[0]);
    const text = await session.text(body);
    assert.match(text, /from MCP server fs/);
    assert.match(text, /A small Go service/);
    await session.until("the card drawn open", () =>
      session.script("return document.querySelector('.timeline-card.expanded').getBoundingClientRect().height > 100"),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    writeFileSync(join(screenshots, "app-e2e-mcp.png"), await session.screenshot());
  } finally {
    await session?.end();
    driver.child.kill();
    model.child.kill();
  }
});

process.exit((await run()) ? 1 : 0);
