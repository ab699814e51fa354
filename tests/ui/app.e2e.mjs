// The real app in a real window (run under Xvfb), driven through WebKitWebDriver: it opens a
// copy of the fixture folder given as its argument, asks a question of the scripted model
// server, approves a command, and finds the answer and the timeline cards in their final states;
// it runs MCP tools and honours a standing rule; and it filters the recorded history and keeps a
// provider's API key in the real Secret Service (run under tests/ui/with-keyring); and it lists,
// shows and deletes the snippets the command line saved, with each call's tool description and
// start time on the timeline, in English and Chinese, light and dark.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { repo, run, screenshots, tempDir, test } from "./lib.mjs";
import { appEnv, ownWindowState, scriptedModelEnv, Session, setLanguage, shoot as shootWindow, startDriver, startScriptedModel } from "./webdriver.mjs";

const app = process.env.TOOLTRAIL_APP ?? join(repo, "target/debug/tooltrail-app");
const scriptedModel = process.env.SCRIPTED_MODEL ?? join(repo, "target/debug/scripted-model");
const cli = process.env.TOOLTRAIL_CLI ?? join(repo, "target/debug/tooltrail");
// Without a GPU the app switches WebKit to its shared-memory renderer, where WebKitWebDriver's
// screenshots never return; these tests keep the DMA-BUF renderer so they can take them.
process.env.WEBKIT_DISABLE_DMABUF_RENDERER ??= "0";

function windowTitles() {
  try {
    return execFileSync("xwininfo", ["-root", "-tree"], { encoding: "utf8" });
  } catch {
    return "";
  }
}

test("the app opens a folder, asks, waits for approval, runs the command and answers", async () => {
  const folder = join(tempDir("tooltrail-e2e-"), "demo-project");
  cpSync(join(repo, "tests/ui/fixtures/demo-project"), folder, { recursive: true });
  const configDir = tempDir("tooltrail-config-");
  const model = await startScriptedModel(scriptedModel, join(repo, "tests/ui/fixtures/approve-and-answer.json"));
  const driver = await startDriver(appEnv(configDir, { ...scriptedModelEnv(model), ...ownWindowState(configDir) }));
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
    // The window, created hidden, was shown with its first screen, the question box ready for keys.
    assert.equal(await session.script("return document.visibilityState"), "visible");
    assert.deepEqual(await session.script("return [document.hasFocus(), document.activeElement.matches('.composer textarea')]"), [true, true]);

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

    // Expand a card.
    const first = await session.find('.timeline-card[data-call-id] .card-head');
    await session.click(first);
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

    // The same command again asks again (it was allowed once); this time it is always allowed in
    // this folder, and the card says which rule that keeps.
    await session.type(await session.find(".composer textarea"), "Mark it again.\uE007");
    const again = await session.waitFor(".approval-card");
    assert.match(await session.text(again), /commands starting with “touch checked\.txt” run in this folder without asking/);
    writeFileSync(join(screenshots, "app-e2e-always-allow.png"), await session.screenshot());
    const always = await session.until("the always-allow button", async () => {
      for (const button of await session.findAll(".approval-card .approval-actions button")) {
        if ((await session.text(button)).includes("Always allow in this folder")) return button;
      }
      return undefined;
    });
    await session.click(always);
    await session.until("the second answer", async () => (await session.text(await session.find('[data-testid="chat"]'))).includes("checked again"));
    await session.until("the send button", async () => (await session.findAll(".composer button.primary")).length === 1);

    // A third time the rule lets it run without a card.
    await session.script(
      "window.sawApproval = false; new MutationObserver(() => { if (document.querySelector('.approval-card')) window.sawApproval = true; }).observe(document.body, { childList: true, subtree: true });",
    );
    await session.type(await session.find(".composer textarea"), "And once more.\uE007");
    await session.until("the third answer", async () => (await session.text(await session.find('[data-testid="chat"]'))).includes("without asking you"));
    assert.equal(await session.script("return window.sawApproval"), false);
    // The newest call is at the bottom of the timeline: expanded, it names the rule.
    const heads = await session.findAll(".timeline-card[data-call-id] .card-head");
    await session.click(heads[heads.length - 1]);
    await session.until("the rule named on the last card", () =>
      session.script("const cards = document.querySelectorAll('.timeline-card.expanded'); return cards[cards.length - 1]?.innerText.includes('Allowed by a rule')"),
    );
    // The rule is the folder's, shared with the command line.
    const rules = execFileSync(cli, ["rules", "list", "-w", folder], {
      encoding: "utf8",
      env: { ...process.env, TOOLTRAIL_CONFIG_DIR: configDir, TOOLTRAIL_DATA_DIR: join(configDir, "data") },
    });
    assert.match(rules, /allow\s+.*touch checked\.txt/);
  } finally {
    await session?.end();
    driver.child.kill();
    model.child.kill();
  }
});

test("MCP tools run in the app with their server named, and a standing deny rule refuses a command", async () => {
  const folder = join(tempDir("tooltrail-e2e-"), "demo-project");
  cpSync(join(repo, "tests/ui/fixtures/demo-project"), folder, { recursive: true });
  const configDir = tempDir("tooltrail-config-");
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
  const env = { ...process.env, TOOLTRAIL_CONFIG_DIR: configDir, TOOLTRAIL_DATA_DIR: join(configDir, "data"), ...ownWindowState(configDir) };
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

/** Sets a <select> as a user picking an option would (React sees the change). */
function choose(session, select, value) {
  return session.script(
    "const s = arguments[0]; s.value = arguments[1]; s.dispatchEvent(new Event('change', { bubbles: true }));",
    [{ "element-6066-11e4-a52e-4f735466cecf": select }, value],
  );
}

async function openView(session, name) {
  const tabs = await session.findAll(".nav-tab");
  for (const tab of tabs) {
    if ((await session.text(tab)).trim() === name) return session.click(tab);
  }
  throw new Error(`no ${name} tab`);
}

async function clickButton(session, css, label) {
  for (const button of await session.findAll(css)) {
    const text = (await session.text(button)).trim();
    if (label instanceof RegExp ? label.test(text) : text === label) return session.click(button);
  }
  throw new Error(`no button ${label}`);
}

const historyRows = (session) =>
  session.script("return [...document.querySelectorAll('.history-row')].map(r => r.querySelector('.history-tool').textContent + ':' + r.className.match(/status-(\\w+)/)[1])");

/** Every file under `dir`, read as text. */
function allText(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(join(entry.parentPath, entry.name)).toString("latin1"))
    .join("\n");
}

test("history filters the record, and a provider's API key is kept in the Secret Service and used", async () => {
  const folder = join(tempDir("tooltrail-e2e-"), "demo-project");
  cpSync(join(repo, "tests/ui/fixtures/demo-project"), folder, { recursive: true });
  const configDir = tempDir("tooltrail-config-");
  const dataDir = join(configDir, "data");
  const env = { ...process.env, TOOLTRAIL_CONFIG_DIR: configDir, TOOLTRAIL_DATA_DIR: dataDir, ...ownWindowState(configDir) };
  delete env.TOOLTRAIL_BASE_URL;
  delete env.TOOLTRAIL_API_KEY;

  // The command line records three calls in the folder: one succeeds, one fails, one is refused.
  const cliModel = await startScriptedModel(scriptedModel, join(repo, "tests/ui/fixtures/history-calls.json"));
  try {
    execFileSync(cli, ["ask", "-w", folder, "--base-url", cliModel.url, "--model", "scripted", "--approve", "deny", "Which Go files are there?"], { env, stdio: "ignore" });
  } finally {
    cliModel.child.kill();
  }

  // What the model server received, kept apart from the app's files (it holds the key sent).
  const requests = join(tempDir("tooltrail-requests-"), "requests.jsonl");
  const script = join(configDir, "script.json");
  writeFileSync(script, JSON.stringify([{ text: "First answer through the saved provider." }, { text: "Second answer, after a restart." }]));
  const model = await startScriptedModel(scriptedModel, script, ["--record", requests]);
  const key = "sk-e2e-keychain-7f3a91";
  const driver = await startDriver({ ...env, TAURI_WEBVIEW_AUTOMATION: "true", TOOLTRAIL_MODEL: "scripted" });
  let session;
  try {
    session = await Session.start(driver.base, app, [folder]);
    await session.waitFor(".composer textarea");

    // History: the three calls, newest first; then filtered by status, by tool and by text.
    await openView(session, "History");
    await session.until("three recorded calls", async () => (await historyRows(session)).length === 3);
    assert.deepEqual((await historyRows(session)).sort(), ["execute_bash:denied", "read_file:error", "search_files:success"]);
    const counts = await session.text(await session.find('[data-testid="history-counts"]'));
    assert.match(counts, /search_files\s*1/);
    const [toolSelect, statusSelect] = await session.findAll(".history-filters select");
    await choose(session, statusSelect, "error");
    await session.until("only the failed call", async () => JSON.stringify(await historyRows(session)) === '["read_file:error"]');
    await choose(session, statusSelect, "");
    // The tool menu lists the tools of the calls the other filters match: wait for it to offer
    // search_files again once the failed-only filter is gone.
    await session.until("search_files offered again", async () =>
      session.script("return [...arguments[0].options].some(o => o.value === 'search_files')", [{ "element-6066-11e4-a52e-4f735466cecf": toolSelect }]),
    );
    await choose(session, toolSelect, "search_files");
    await session.until("only search_files", async () => JSON.stringify(await historyRows(session)) === '["search_files:success"]');
    await choose(session, toolSelect, "");
    await session.type(await session.find(".history-search"), "refused");
    await session.until("the call found by its arguments", async () => JSON.stringify(await historyRows(session)) === '["execute_bash:denied"]');
    await session.click(await session.find(".history-row"));
    const detail = await session.until("the call's detail", async () => (await session.findAll(".hist-detail, [data-testid='call-detail']"))[0]);
    assert.match(await session.text(detail), /touch refused\.txt/);
    await new Promise((resolve) => setTimeout(resolve, 300));
    writeFileSync(join(screenshots, "app-e2e-history.png"), await session.screenshot());

    // The filtered set exports through the real command (the window passes the path the save
    // dialog gives; here it is passed directly).
    const exported = join(configDir, "failures.md");
    const result = await session.scriptAsync(
      "const done = arguments[arguments.length - 1]; window.__TAURI_INTERNALS__.invoke('export_history', { query: { status: 'error' }, format: 'markdown', path: arguments[0] }).then(done, (e) => done({ error: e }));",
      [exported],
    );
    assert.equal(result.count, 1, JSON.stringify(result));
    const markdown = readFileSync(exported, "utf8");
    assert.match(markdown, /read_file/);
    assert.match(markdown, /missing-notes\.txt/);
    assert.doesNotMatch(markdown, /search_files/);

    // "Open in conversation" shows the call in its chat and timeline.
    await clickButton(session, "[data-testid='call-detail'] button", "Open in conversation");
    await session.until("the conversation with the call selected", async () => {
      const chat = await session.text(await session.find('[data-testid="chat"]'));
      const selected = await session.findAll(".timeline-card.selected");
      return chat.includes("There are two Go files") && selected.length === 1 && /execute_bash/.test(await session.text(selected[0]));
    });

    // Settings: a provider for the scripted server, with a key, tested, saved and used.
    await openView(session, "Settings");
    await session.waitFor(".cfg-preset").catch(async (error) => {
      console.log(await session.script("return document.querySelector('main').innerText.slice(0, 800)").catch((e) => e.message));
      throw error;
    });
    await clickButton(session, ".cfg-preset", /^Other…/);
    const form = await session.waitFor(".cfg-form");
    const [name, baseUrl] = await session.findAll(".cfg-form input");
    await session.type(name, "Scripted");
    await session.type(baseUrl, model.url);
    await session.type(await session.find('[data-testid="cfg-api-key"]'), key);
    await clickButton(session, ".cfg-test button", "Test connection");
    await session.until("the models listed", async () => /scripted/.test(await session.text(await session.find('[data-testid="cfg-test-result"]'))));
    await clickButton(session, ".cfg-form button", "Save and use");
    await session.until("the provider stored with its key", async () => {
      const list = (await session.findAll(".cfg-list"))[0];
      return list && /Scripted[\s\S]*key in keychain/.test(await session.text(list));
    });
    assert.ok(form);
    // Only the model is set by the environment here, and the note says just that.
    assert.match(await session.text(await session.find('[data-testid="cfg-env-override"]')), /TOOLTRAIL_MODEL overrides the model of Scripted: questions ask for scripted\./);
    writeFileSync(join(screenshots, "app-e2e-settings.png"), await session.screenshot());

    // The key is in the real Secret Service, and nowhere in the config or the database.
    const stored = execFileSync("secret-tool", ["lookup", "service", "tooltrail", "username", "provider:scripted"], { encoding: "utf8" });
    assert.equal(stored, key);
    assert.ok(!allText(configDir).includes(key), "the key is in no file");
    assert.match(readFileSync(join(configDir, "config.toml"), "utf8"), /active_provider = "scripted"/);

    // A question goes to the provider's endpoint with its key.
    await openView(session, "Chat");
    const box = await session.waitFor(".composer textarea");
    await session.type(box, "Does the provider work?");
    await session.type(box, "\uE007");
    await session.until("the first answer", async () => (await session.text(await session.find('[data-testid="chat"]'))).includes("First answer"));
    const authorizations = () =>
      readFileSync(requests, "utf8").trim().split("\n").map((line) => JSON.parse(line)).filter((r) => r.path.endsWith("/chat/completions")).map((r) => r.headers.authorization);
    assert.deepEqual(authorizations(), [`Bearer ${key}`]);

    // After a restart the app reads the key back from the keychain.
    await session.end();
    session = await Session.start(driver.base, app, [folder]);
    await session.waitFor(".composer textarea");
    await openView(session, "Settings");
    await session.until("the stored key shown after the restart", async () => {
      const list = (await session.findAll(".cfg-list"))[0];
      return list && /key in keychain/.test(await session.text(list));
    });
    await openView(session, "Chat");
    const again = await session.waitFor(".composer textarea");
    await session.type(again, "And after a restart?");
    await session.type(again, "\uE007");
    await session.until("the second answer", async () => (await session.text(await session.find('[data-testid="chat"]'))).includes("Second answer"));
    assert.deepEqual(authorizations(), [`Bearer ${key}`, `Bearer ${key}`]);
    assert.ok(!allText(configDir).includes(key), "still in no file, the database included");
  } finally {
    await session?.end();
    driver.child.kill();
    model.child.kill();
  }
});

test("snippets saved from the command line are listed, shown and deleted in the app; timeline cards say what each tool does and when it started; English and Chinese, light and dark", async () => {
  const folder = join(tempDir("tooltrail-e2e-"), "demo-project");
  cpSync(join(repo, "tests/ui/fixtures/demo-project"), folder, { recursive: true });
  const configDir = tempDir("tooltrail-config-");
  const env = { ...process.env, TOOLTRAIL_CONFIG_DIR: configDir, TOOLTRAIL_DATA_DIR: join(configDir, "data"), ...ownWindowState(configDir) };
  delete env.TOOLTRAIL_BASE_URL;
  delete env.TOOLTRAIL_API_KEY;
  const save = (snippet) => execFileSync(cli, ["tool", "snippets", "-w", folder, "--args", JSON.stringify({ action: "save", ...snippet })], { env, encoding: "utf8" });
  save({ name: "build", content: "go build ./...\ngo test ./...", language: "sh", description: "Build and test the service" });
  save({ name: "health_handler", content: "func health(w http.ResponseWriter, r *http.Request) {\n\tw.WriteHeader(http.StatusOK)\n\tfmt.Fprintln(w, \"ok\") // the load balancer reads this\n}", language: "go", description: "The /health handler" });
  save({ name: "scratch", content: "to delete from the app" });
  const listed = () => JSON.parse(execFileSync(cli, ["snippets", "list", "-w", folder, "--json"], { env, encoding: "utf8" })).map((s) => s.name);
  assert.deepEqual(listed(), ["build", "health_handler", "scratch"]);

  const script = join(configDir, "script.json");
  writeFileSync(
    script,
    JSON.stringify([
      { tool_calls: [{ name: "snippets", arguments: { action: "load", name: "build" } }, { name: "count_lines", arguments: { path: ".", pattern: "*.go" } }] },
      { text: "The saved build snippet runs go build and go test; the Go files are counted on the timeline." },
    ]),
  );
  const model = await startScriptedModel(scriptedModel, script);
  const cards = (session) =>
    session.script(
      "return [...document.querySelectorAll('.timeline-card[data-call-id]')].map(c => ({ tool: c.querySelector('.card-tool').textContent, phase: c.className.match(/phase-(\\w+)/)[1], description: c.querySelector('.card-desc')?.textContent ?? '', time: c.querySelector('.card-start')?.textContent ?? '', title: c.querySelector('.card-start')?.getAttribute('title') ?? '' }))",
    );
  const shoot = (session, name) => shootWindow(session, `app-e2e-${name}`);
  try {
    for (const theme of ["light", "dark"]) {
      // GTK's dark variant is what WebKitGTK reports as prefers-color-scheme: dark.
      const driver = await startDriver({
        ...env,
        TAURI_WEBVIEW_AUTOMATION: "true",
        TOOLTRAIL_BASE_URL: model.url,
        TOOLTRAIL_MODEL: "scripted",
        GTK_THEME: theme === "dark" ? "Adwaita:dark" : "Adwaita",
      });
      let session;
      try {
        session = await Session.start(driver.base, app, [folder]);
        const box = await session.waitFor(".composer textarea");
        assert.equal(await session.script("return matchMedia('(prefers-color-scheme: dark)').matches"), theme === "dark");
        if (theme === "light") {
          // The window's page runs without JavaScriptCore's optimising compilers, and its
          // baseline JIT waits for code that keeps running: both cost memory at idle
          // (src-tauri/src/main.rs).
          const pages = webProcessesOf(configDir);
          assert.ok(pages.length > 0, "the window's web process");
          for (const environ of pages) {
            for (const sw of ["JSC_useDFGJIT=false", "JSC_thresholdForJITAfterWarmUp=5000", "JSC_thresholdForJITSoon=1000"]) assert.ok(environ.includes(sw), `${sw} reaches the web process`);
          }
          await session.type(box, "How do I build it, and how big is it?\uE007");
          await session.until("the answer", async () => (await session.text(await session.find('[data-testid="chat"]'))).includes("saved build snippet"));
        } else {
          // The conversation redrawn from the record: descriptions and start times come back too.
          await session.click(await session.until("the recorded conversation", async () => (await session.findAll(".side-list .side-item"))[0]));
        }
        const shown = await session.until("two finished cards", async () => {
          const list = await cards(session);
          return list.length === 2 && list.every((card) => card.phase === "success") && list;
        });
        assert.deepEqual(shown.map((card) => card.tool).sort(), ["count_lines", "snippets"]);
        for (const card of shown) {
          assert.ok(card.description.length > 10, `${card.tool} has its description: ${JSON.stringify(card)}`);
          assert.match(card.time, /^\d\d:\d\d:\d\d$/);
          assert.match(card.title, /^Started \d+ \w+ \d{4},? \d\d:\d\d:\d\d$/);
        }
        assert.match(shown.find((card) => card.tool === "snippets").description, /snippet/i);
        await shoot(session, `timeline-${theme}-en`);

        // The snippets the command line saved, in the same folder and database.
        await openView(session, "Snippets");
        await session.until("three snippets listed", async () => (await session.findAll(".snippet-item")).length === (theme === "light" ? 3 : 2));
        for (const item of await session.findAll(".snippet-item")) {
          if ((await session.text(item)).startsWith("health_handler")) await session.click(item);
        }
        const detail = await session.waitFor('[data-testid="snippet-detail"] code.language-go');
        assert.match(await session.text(detail), /WriteHeader\(http\.StatusOK\)/);
        await shoot(session, `snippets-${theme}-en`);

        if (theme === "light") {
          // Deleted from the keyboard after a yes; the command line no longer lists it.
          for (const item of await session.findAll(".snippet-item")) {
            if ((await session.text(item)).startsWith("scratch")) await session.click(item);
          }
          await session.waitFor('[data-testid="snippet-detail"] h2');
          await session.until("scratch shown", async () => (await session.text(await session.find('[data-testid="snippet-detail"] h2'))) === "scratch");
          await session.type(await session.find('.snippet-item[aria-selected="true"]'), "\uE017"); // Delete
          const ask = await session.waitFor(".snippet-confirm");
          assert.match(await session.text(ask), /Delete the snippet “scratch”\?/);
          await shoot(session, "snippets-delete-confirm");
          await clickButton(session, ".snippet-confirm button", "Delete");
          await session.until("two snippets left", async () => (await session.findAll(".snippet-item")).length === 2);
          assert.deepEqual(listed(), ["build", "health_handler"]);
        }

        // 简体中文
        await setLanguage(session, "zh");
        await session.until("the Chinese screen", async () => (await session.text(await session.find(".page h1"))) === "片段");
        await shoot(session, `snippets-${theme}-zh`);
        await openView(session, "对话");
        await session.until("the timeline in Chinese", async () => /^开始于 /.test((await cards(session))[0]?.title ?? ""));
        await shoot(session, `timeline-${theme}-zh`);
        // The language is remembered; the next window starts in English again.
        await setLanguage(session, "en");
      } finally {
        await session?.end();
        driver.child.kill();
      }
    }
  } finally {
    model.child.kill();
  }
});

process.exit((await run()) ? 1 : 0);

/** The environments of the WebKit web processes of the app whose config folder is `configDir`. */
function webProcessesOf(configDir) {
  const found = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, "utf8").trim() !== "WebKitWebProces") continue;
      const environ = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
      if (environ.includes(`TOOLTRAIL_CONFIG_DIR=${configDir}`)) found.push(environ);
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}
