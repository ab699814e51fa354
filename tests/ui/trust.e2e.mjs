// The real app in a real window (Xvfb, WebKitWebDriver), as a user meets what an MCP server's
// entry in mcp.json and a pasted model reference could make it do. The MCP reference server
// `@modelcontextprotocol/server-everything` is set to "approval": "ask" and gets an API key
// from a variable; the (scripted) model asks to read one of its resources. The window shows an
// approval card; Deny leaves the call denied on the timeline, under the server, and the
// resource's text reaches neither the window nor the model. Asked again, Allow reads it; the
// server's own environment, read back through its get-env tool, shows the key as
// `${TT_TRUST_CANARY}`. The key's value appears nowhere in the window at any point (the chat,
// the history, Settings → MCP, whose form shows the value as mcp.json writes it), nor in what
// the model was sent, nor in the data folder. Settings → Models refuses a hub reference that
// climbs out of its repository and a link to another host, each with a sentence under the field
// (in view, the text kept to correct), before any request (the hub HF_ENDPOINT names counts
// them: none), and no download starts. English and light, then Chinese and dark; axe-core on
// each card and section, and screenshots in target/screenshots/trust-*.png.
import assert from "node:assert/strict";
import { cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { bytesUnder, dependencyMissing, repo, run, tempDir, test } from "./lib.mjs";
import { appEnv, axe, gtkTheme, ownWindowState, scriptedModelEnv, Session, setLanguage, shoot as shootWindow, startDriver, startScriptedModel } from "./webdriver.mjs";

const app = process.env.TOOLTRAIL_APP ?? join(repo, "target/debug/tooltrail-app");
const scriptedModel = process.env.SCRIPTED_MODEL ?? join(repo, "target/debug/scripted-model");
const everything = join(repo, "tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
// Not instructions.md: the server sends that text as its instructions with every question.
const STARTUP = "demo://resource/static/document/startup.md";
// What the server is given as API_KEY; long enough to be one of the values looked for.
const CANARY = "tt-canary-7f3c91d2e5a84b06";
const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";
// Screenshots need WebKit's DMA-BUF renderer (see app.e2e.mjs).
process.env.WEBKIT_DISABLE_DMABUF_RENDERER ??= "0";

const shoot = (session, name) => shootWindow(session, `trust-${name}`);

if (!existsSync(everything)) {
  dependencyMissing("tests/mcp/node_modules is not installed (run scripts/mcp-setup)");
  process.exit(0);
}

// A line of the resource's text, plain enough to be found in the window's HTML as it is.
const marker = readFileSync(join(everything, "../docs/startup.md"), "utf8")
  .split("\n")
  .map((line) => line.trim())
  .find((line) => line.length > 40 && /^[\w\s,.:()'-]+$/.test(line));
assert.ok(marker, "the server's startup.md has a plain line to look for");

const TEXT = {
  en: {
    readTitle: "Allow this call to read_resource?",
    envTitle: "Allow this call to everything__get-env?",
    reason: 'it reads a resource of the external MCP server "everything"',
    fromServer: "from MCP server everything",
    detailServer: "MCP server everything",
    denied: "Denied",
  },
  zh: {
    readTitle: "允许调用 read_resource 吗？",
    envTitle: "允许调用 everything__get-env 吗？",
    reason: 'it reads a resource of the external MCP server "everything"',
    fromServer: "来自 MCP 服务器 everything",
    detailServer: "MCP 服务器 everything",
    denied: "已拒绝",
  },
};

/** Everything the window holds: its HTML and what its fields hold (a field's value is no attribute). */
const windowText = (session) =>
  session.script(
    "return document.title + '\\n' + document.documentElement.outerHTML + '\\n' + [...document.querySelectorAll('input, textarea, select')].map((f) => f.value).join('\\n')",
  );

/** Fails if the key's value is in the window now, or was at any moment since the watch began. */
async function assertNoCanary(session, when) {
  const now = await windowText(session);
  assert.ok(!now.includes(CANARY), `the key's value is in the window ${when}`);
  assert.equal(await session.script("return window.__canarySeen ?? null"), false, `the key's value was in the window at some moment before ${when}`);
}

/** The timeline's calls as tool:phase, in order. */
const calls = (session) =>
  session.script(
    "return [...document.querySelectorAll('.timeline-card[data-call-id]')].map(c => c.querySelector('.card-tool').textContent + ':' + c.className.match(/phase-(\\w+)/)[1])",
  );

/** The chat requests the model got, in order. */
const sentToModel = (record) =>
  readFileSync(record, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line))
    .filter((entry) => entry.path.endsWith("/chat/completions"));


/** The first element matching `css` inside the element `parent`, or undefined. */
async function elementIn(session, parent, css) {
  const found = await session.script("return arguments[0].querySelector(arguments[1])", [{ [ELEMENT]: parent }, css]);
  return found ? found[ELEMENT] : undefined;
}

/** Empties a text field (WebDriver's Element Clear). */
async function clear(session, id) {
  const res = await fetch(`${session.url}/element/${id}/clear`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
  if (!res.ok) throw new Error(`could not clear the field: ${await res.text()}`);
}

/** Waits for the approval card titled `title` that is still unanswered. */
function cardTitled(session, title) {
  return session.until(`the card "${title}"`, async () => {
    for (const id of await session.findAll(".approval-card")) {
      const state = await session.script(
        "return [arguments[0].querySelector('.approval-title').textContent, !!arguments[0].querySelector('.approval-sent')]",
        [{ [ELEMENT]: id }],
      );
      if (state[0] === title && !state[1]) return id;
    }
    return undefined;
  }, 60_000);
}

/** Answers the waiting card as a user does: Allow once, or Deny and then its confirmation. */
async function answer(session, card, choice) {
  const within = (css) => elementIn(session, card, css);
  if (choice === "deny") {
    await session.click(await within(".approval-actions button.danger"));
    await session.until("the deny form", () => within(".approval-deny button[type=submit]"));
    await session.click(await within(".approval-deny button[type=submit]"));
  } else {
    await session.click(await within(".approval-actions button.primary"));
  }
}

/** Waits until the element stops moving (the timeline animates cards opening above it). */
async function steady(session, id) {
  let last = "";
  await session.until("the element to stop moving", async () => {
    const now = JSON.stringify(await session.script("const r = arguments[0].getBoundingClientRect(); return [r.top, r.left, r.height]", [{ [ELEMENT]: id }]));
    const still = now === last;
    last = now;
    return still;
  });
}

/** Opens the timeline card of the call in `phase` to `tool` and returns its body's text. */
async function openCard(session, tool, phase) {
  const cards = await session.findAll(`.timeline-card.phase-${phase}[data-call-id]`);
  for (const card of cards) {
    if ((await session.script("return arguments[0].querySelector('.card-tool').textContent", [{ [ELEMENT]: card }])) !== tool) continue;
    const body = () => session.script("return arguments[0].querySelector('.card-body')?.innerText ?? ''", [{ [ELEMENT]: card }]);
    for (let attempt = 0; attempt < 3 && !(await body()); attempt++) {
      const head = await elementIn(session, card, ".card-head");
      await session.script("arguments[0].scrollIntoView({ block: 'nearest' })", [{ [ELEMENT]: head }]);
      await steady(session, head);
      await session.click(head);
      await session.until(`the ${tool} card open`, async () => (await body()) || undefined, 5_000).catch(() => {});
    }
    const text = await body();
    if (!text) throw new Error(`the ${tool} card did not open`);
    await steady(session, card);
    return text;
  }
  throw new Error(`no ${phase} card of ${tool}`);
}

/** A hub that counts the requests it gets: a pull that asked anything would show here. */
async function countingHub() {
  const requests = [];
  const server = createServer((request, response) => {
    requests.push(`${request.method} ${request.url}`);
    response.writeHead(404).end();
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, requests, close: () => server.close() };
}

for (const [lang, theme] of [
  ["en", "light"],
  ["zh", "dark"],
]) {
  const say = TEXT[lang];
  test(`a server's resource read follows its approval, its key never shows, and hub references that leave the hub are refused (${lang}, ${theme})`, async () => {
    const folder = join(tempDir("tooltrail-e2e-"), "demo-project");
    cpSync(join(repo, "tests/ui/fixtures/demo-project"), folder, { recursive: true });
    const configDir = tempDir("tooltrail-config-");
    writeFileSync(
      join(configDir, "mcp.json"),
      JSON.stringify({
        mcpServers: { everything: { command: process.execPath, args: [everything, "stdio"], env: { API_KEY: "${TT_TRUST_CANARY}" }, approval: "ask" } },
      }),
    );
    const read = { name: "read_resource", arguments: { server: "everything", uri: STARTUP } };
    const script = join(configDir, "script.json");
    writeFileSync(
      script,
      JSON.stringify([
        // The first question: the read is denied.
        { tool_calls: [read] },
        { text: "I was not allowed to read the server's startup notes." },
        // The second: allowed, then the server's environment.
        { tool_calls: [read] },
        { tool_calls: [{ name: "everything__get-env", arguments: {} }] },
        { text: "Read the startup notes and the server's environment." },
      ]),
    );
    const record = join(configDir, "requests.jsonl");
    const model = await startScriptedModel(scriptedModel, script, ["--record", record]);
    const hub = await countingHub();
    const dataDir = join(configDir, "data");
    const driver = await startDriver(appEnv(configDir, { ...scriptedModelEnv(model), ...ownWindowState(configDir), ...gtkTheme(theme), TT_TRUST_CANARY: CANARY, HF_ENDPOINT: hub.url }));
    let session;
    try {
      session = await Session.start(driver.base, app, [folder]);
      const box = await session.waitFor(".composer textarea");
      await setLanguage(session, lang);
      // From here on, any moment the key's value is in the document is remembered.
      await session.script(
        `window.__canarySeen = document.documentElement.outerHTML.includes(arguments[0]);
         new MutationObserver(() => { if (document.documentElement.outerHTML.includes(arguments[0])) window.__canarySeen = true; })
           .observe(document, { subtree: true, childList: true, characterData: true, attributes: true });`,
        [CANARY],
      );
      await session.until("the server running", async () => (await session.findAll(".mcp-server.mcp-running")).length === 1, 60_000);
      await assertNoCanary(session, "once the server started");

      // The first question: the model asks to read a resource, and the window asks the user.
      await session.type(box, "How does the server start up?\uE007");
      const asking = await cardTitled(session, say.readTitle);
      const asked = await session.text(asking);
      assert.ok(asked.includes(`read_resource everything ${STARTUP}`), asked);
      assert.ok(asked.includes(say.reason), asked);
      await axe(session, ".approval-card", `the read's approval card (${lang}, ${theme})`);
      await shoot(session, `read-asks-${theme}-${lang}`);
      await assertNoCanary(session, "while the card asks");
      await answer(session, asking, "deny");
      await session.until("the first answer", async () => (await session.text(await session.find('[data-testid="chat"]'))).includes("I was not allowed"), 60_000);
      assert.deepEqual(await calls(session), ["read_resource:denied"]);
      const deniedCard = await openCard(session, "read_resource", "denied");
      assert.ok(deniedCard.includes(say.fromServer), deniedCard);
      assert.ok(!(await windowText(session)).includes(marker), "the denied resource's text is in the window");
      // The model was told no, and got none of the resource.
      const afterDeny = sentToModel(record);
      assert.equal(afterDeny.length, 2);
      const denial = afterDeny[1].body.messages.at(-1);
      assert.equal(denial.role, "tool");
      assert.ok(!JSON.stringify(denial).includes(marker), JSON.stringify(denial));
      await axe(session, ".timeline-card.expanded", `the denied call (${lang}, ${theme})`);
      await shoot(session, `read-denied-${theme}-${lang}`);
      await assertNoCanary(session, "after the read was denied");

      // The second question: Allow reads it; then the server shows its own environment.
      await session.type(await session.find(".composer textarea"), "Then read them, and show the server's environment.\uE007");
      await answer(session, await cardTitled(session, say.readTitle), "allow");
      const envCard = await cardTitled(session, say.envTitle);
      await shoot(session, `get-env-asks-${theme}-${lang}`);
      await answer(session, envCard, "allow");
      await session.until("the second answer", async () => (await session.text(await session.find('[data-testid="chat"]'))).includes("the server's environment."), 60_000);
      await session.until("the send button", async () => (await session.findAll(".composer button.primary")).length === 1);
      assert.deepEqual(await calls(session), ["read_resource:denied", "read_resource:success", "everything__get-env:success"]);
      const readCard = await openCard(session, "read_resource", "success");
      assert.ok(readCard.includes(say.fromServer), readCard);
      assert.ok(readCard.includes(marker), `the read resource's text is on its card:\n${readCard.slice(0, 600)}`);
      const envShown = await openCard(session, "everything__get-env", "success");
      // The server got the key (it is in its environment), and the window shows its variable.
      assert.match(envShown, /"API_KEY": "\$\{TT_TRUST_CANARY\}"/);
      await shoot(session, `read-allowed-${theme}-${lang}`);
      await session.script("[...document.querySelectorAll('.timeline-card.expanded .card-pre')].at(-1).scrollIntoView({ block: 'center' })");
      await shoot(session, `server-env-${theme}-${lang}`);
      await assertNoCanary(session, "after the read and the server's environment were shown");
      const sent = sentToModel(record);
      assert.equal(sent.length, 5);
      assert.ok(JSON.stringify(sent[3].body.messages.at(-1)).includes(marker), "the model got the resource once allowed");
      assert.match(JSON.stringify(sent[4].body.messages.at(-1)), /API_KEY\\": \\"\$\{TT_TRUST_CANARY\}/);

      // The history lists both reads under the server.
      await session.click(await session.find(".nav-tab:nth-child(2)"));
      await session.until("the recorded calls", async () => (await session.findAll(".history-row")).length === 3, 30_000);
      const rows = await session.script(
        "return [...document.querySelectorAll('.history-row')].map(r => r.querySelector('.history-tool').textContent + ':' + r.className.match(/status-(\\w+)/)[1])",
      );
      assert.deepEqual(rows.sort(), ["everything__get-env:success", "read_resource:denied", "read_resource:success"]);
      await session.click(await session.find(".history-row.status-denied"));
      const detail = await session.text(await session.waitFor('[data-testid="call-detail"]'));
      assert.ok(detail.includes(say.detailServer), detail);
      assert.ok(detail.includes(say.denied), detail);
      await axe(session, '[data-testid="call-detail"]', `the denied read in the history (${lang}, ${theme})`);
      await shoot(session, `history-${theme}-${lang}`);
      await assertNoCanary(session, "in the history");

      // Settings → MCP: the server's environment as mcp.json writes it.
      await session.click(await session.find(".nav-tab:nth-child(5)"));
      const row = await session.waitFor('[data-testid="cfg-section-mcp"] [data-server="everything"]');
      // On a loaded machine the click on Edit has been seen to open nothing (the button enabled,
      // no form), likely landing where the button was before a section above grew as it loaded.
      // With no form open a second later, it is made again, as a person would.
      const edit = await elementIn(session, row, ".cfg-item-actions button:not(.danger)");
      await session.click(edit);
      const envField = await session.until(
        "the environment field",
        async () => {
          const fields = await session.findAll('[data-testid="cfg-section-mcp"] .cfg-form textarea');
          if (fields.length === 0) await session.click(edit);
          for (const field of fields) {
            const value = await session.script("return arguments[0].value", [{ [ELEMENT]: field }]);
            if (value.includes("API_KEY")) return field;
          }
          return undefined;
        },
        30_000,
        1_000,
      );
      assert.equal(await session.script("return arguments[0].value", [{ [ELEMENT]: envField }]), "API_KEY=${TT_TRUST_CANARY}");
      await session.script("arguments[0].scrollIntoView({ block: 'center' })", [{ [ELEMENT]: envField }]);
      await axe(session, '[data-testid="cfg-section-mcp"]', `Settings → MCP (${lang}, ${theme})`);
      await shoot(session, `settings-mcp-${theme}-${lang}`);
      await assertNoCanary(session, "in Settings → MCP");

      // Settings → Models: references that leave the hub are refused before any request.
      const models = await session.waitFor('[data-testid="cfg-section-models"]');
      const refusal = async (reference, expected) => {
        const input = await elementIn(session, models, "form.cfg-form-plain input");
        await session.script("arguments[0].scrollIntoView({ block: 'center' })", [{ [ELEMENT]: input }]);
        await clear(session, input);
        await session.type(input, reference);
        await session.click(await elementIn(session, models, "form.cfg-form-plain button[type=submit]"));
        const alert = await session.waitFor('[data-testid="mdl-reference-refused"]');
        const said = await session.until(`the refusal of ${reference}`, async () => {
          const text = await session.text(alert);
          return text.includes(reference) ? text : undefined;
        });
        assert.equal(said.trim(), expected);
        // Said where the user pressed Download (in view), and the reference kept to correct.
        const box = await session.script("const r = arguments[0].getBoundingClientRect(); return { top: r.top, bottom: r.bottom, height: innerHeight };", [{ [ELEMENT]: alert }]);
        assert.ok(box.top >= 0 && box.bottom <= box.height, `the refusal is out of view: ${JSON.stringify(box)}`);
        assert.equal(await session.script("return arguments[0].value", [{ [ELEMENT]: input }]), reference);
        assert.deepEqual(await session.findAll("[data-download]"), [], `a download started for ${reference}`);
      };
      const tail = "Give a name from `tooltrail models list`, or a file on the hub as hf.co/OWNER/REPO/FILE.gguf.";
      await refusal("hf.co/owner/repo/model.gguf@../../x", `"hf.co/owner/repo/model.gguf@../../x" is not a model to pull: a revision cannot go up a folder. ${tail}`);
      await refusal(
        "hf.co/owner/repo/%2e%2e/%2E%2e/x/model.gguf",
        `"hf.co/owner/repo/%2e%2e/%2E%2e/x/model.gguf" is not a model to pull: a file's path cannot go up a folder. ${tail}`,
      );
      await refusal(
        "https://example.invalid/owner/repo/resolve/main/model.gguf",
        `"https://example.invalid/owner/repo/resolve/main/model.gguf" is not a model to pull: it is a link to https://example.invalid, which is not the hub models are pulled from (${hub.url}, set by HF_ENDPOINT); nothing was fetched from it or in its place. ${tail}`,
      );
      await axe(session, '[data-testid="cfg-section-models"]', `Settings → Models with a refusal (${lang}, ${theme})`);
      await shoot(session, `hub-refused-${theme}-${lang}`);
      assert.deepEqual(hub.requests, [], "the hub was asked something");
      await assertNoCanary(session, "at the end");

      // Neither the model nor the record ever got the key's value.
      assert.ok(!readFileSync(record, "utf8").includes(CANARY), "the key's value was sent to the model");
      const stored = bytesUnder(dataDir);
      assert.ok(stored.includes("Then read them"), "the questions are in the record");
      assert.ok(!stored.includes(CANARY), "the key's value is in the data folder");
    } catch (error) {
      if (session) await shoot(session, `failed-${theme}-${lang}`).catch(() => {});
      throw error;
    } finally {
      await session?.end();
      driver.child.kill();
      model.child.kill();
      hub.close();
    }
  });
}

process.exit((await run()) ? 1 : 0);
