// The real app in a real window (Xvfb, WebKitWebDriver) with a view built on the real ext-apps
// SDK (`tests/mcp/fixtures/download-view-server.js`, which inlines its `App` class) sending what
// the example servers' views do not:
//
// - `ui/download-file` with a file it holds: asked on Tooltrail's bar under the frame; the save
//   command (behind Save… and the system's save dialog, which WebDriver cannot answer) is called
//   with the path the dialog would give: the file is written and on the timeline under the call
//   whose view asked;
// - `ui/download-file` with a `file:` address: refused without asking;
// - `ui/download-file` with a loopback address: asked about, then refused by the host's rules
//   for outside addresses (a loopback service hears nothing), the reason on the bar;
// - `ui/notifications/tool-input-partial`: the call's arguments come slowly; the view opens as
//   the model names the tool and reads them as they are written, then gets the whole input;
// - `ui/notifications/request-teardown`: the view is closed as by Close.
// Once in English and light, once in Chinese and dark; axe-core checks the card with the bar;
// screenshots of the bar.
import assert from "node:assert/strict";
import { chmodSync, cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { dependencyMissing, repo, run, tempDir, test } from "./lib.mjs";
import { appEnv, axe, gtkTheme, ownWindowState, scriptedModelEnv, Session, setLanguage, shoot as shootWindow, sleep, startDriver, startScriptedModel } from "./webdriver.mjs";

const app = process.env.TOOLTRAIL_APP ?? join(repo, "target/debug/tooltrail-app");
const scriptedModel = process.env.SCRIPTED_MODEL ?? join(repo, "target/debug/scripted-model");
const sdk = join(repo, "tests/mcp/node_modules/@modelcontextprotocol/ext-apps/dist/src/app-with-deps.js");
const fixture = join(repo, "tests/mcp/fixtures/download-view-server.js");
process.env.WEBKIT_DISABLE_DMABUF_RENDERER ??= "0";

const shoot = (session, name) => shootWindow(session, `views-download-e2e-${name}`);
const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";

if (!existsSync(sdk)) {
  dependencyMissing("tests/mcp/node_modules is not installed (run scripts/mcp-setup)");
  process.exit(0);
}

/** Runs `check` inside the view's frame (WebDriver's frame switch), back to the window after. */
async function inFrame(session, frame, check) {
  await fetch(`${session.url}/frame`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ id: { [ELEMENT]: frame } }) });
  try {
    return await check();
  } finally {
    await fetch(`${session.url}/frame/parent`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
  }
}

/** What the view wrote of the host's answers. */
const viewOut = (session, frame) => inFrame(session, frame, () => session.script("return document.getElementById('out')?.textContent ?? ''"));

async function clickInView(session, css) {
  const frame = await session.find(".view-card iframe.view-frame");
  await inFrame(session, frame, async () => session.click(await session.find(css)));
  return frame;
}

async function clickVisible(session, button) {
  await session.script("arguments[0].scrollIntoView({ block: 'center' })", [{ [ELEMENT]: button }]);
  await sleep(200);
  await session.click(button);
}

for (const [lang, theme] of [
  ["en", "light"],
  ["zh", "dark"],
]) {
  test(`a view's file is asked about on the bar, saved where chosen and recorded; a local or loopback one is refused; the view closes itself (${lang}, ${theme})`, async () => {
    const configDir = tempDir("tooltrail-config-");
    const hits = [];
    const canary = createServer((request, response) => {
      hits.push(request.url);
      response.end("secret");
    });
    await new Promise((resolve) => canary.listen(0, "127.0.0.1", resolve));
    const canaryUrl = `http://127.0.0.1:${canary.address().port}/report.csv`;
    writeFileSync(join(configDir, "mcp.json"), JSON.stringify({ mcpServers: { dl: { command: process.execPath, args: [fixture, canaryUrl] } } }));
    // The call's arguments come slowly, so its view opens while the model writes them.
    const title = "Quarterly report of the north and south regions";
    writeFileSync(join(configDir, "script.json"), JSON.stringify([{ tool_calls: [{ name: "dl__export_report", arguments: { title } }], delay_ms: 300 }, { text: "The report is in the card." }]));
    const model = await startScriptedModel(scriptedModel, join(configDir, "script.json"));
    const browser = join(configDir, "browser.sh");
    writeFileSync(browser, "#!/bin/sh\nexit 0\n");
    chmodSync(browser, 0o755);
    const driver = await startDriver(appEnv(configDir, { ...scriptedModelEnv(model), ...ownWindowState(configDir), ...gtkTheme(theme), BROWSER: browser }));
    const folder = join(tempDir("tooltrail-e2e-"), "demo-project");
    cpSync(join(repo, "tests/ui/fixtures/demo-project"), folder, { recursive: true });
    let session;
    try {
      session = await Session.start(driver.base, app, [folder]);
      const box = await session.waitFor(".composer textarea");
      await setLanguage(session, lang);
      await session.type(box, "Export the report.\uE007");
      // The view opens as the model names the tool, and reads the arguments as they come.
      const frame = await session.waitFor(".view-card iframe.view-frame", 60_000);
      await session.waitFor(".approval-card .approval-actions button", 60_000);
      const partials = await inFrame(session, frame, () => session.script("return document.getElementById('partials')?.textContent ?? ''"));
      const seenTitles = JSON.parse(partials.replace(/^partials: /, "") || "[]").map((partial) => partial.title ?? "");
      assert.ok(seenTitles.some((seen) => seen.length > 0 && seen.length < title.length && title.startsWith(seen)), `the view saw the arguments being written: ${partials}`);
      assert.ok(seenTitles.every((seen) => title.startsWith(seen)), partials);
      await session.click((await session.findAll(".approval-card .approval-actions button"))[0]);
      await session.until("the view connected through the SDK and got its whole input", () =>
        inFrame(session, frame, async () => {
          const seen = await session.script("return (document.getElementById('out')?.textContent ?? '') + (document.getElementById('input')?.textContent ?? '')");
          return seen.includes("connected") && seen.includes(`input: {"title":"${title}"}`);
        }),
      );

      // A file the view holds: asked about on the bar, nothing written before Save….
      await clickInView(session, "#save-inline");
      const bar = await session.waitFor("[data-testid=view-download-bar]", 20_000).catch(async (error) => {
        throw new Error(`${error.message}; the view wrote: ${await viewOut(session, frame)}`);
      });
      const asked = await session.text(bar);
      assert.match(asked, lang === "zh" ? /该视图请求保存它提供的文件：report\.csv（31 字节）/ : /The view asks to save a file it holds: report\.csv \(31 bytes\)/);
      await axe(session, ".view-card", `a view's file asked about (${lang}, ${theme})`);
      await sleep(500);
      await shoot(session, `bar-${theme}-${lang}`);

      // Save… opens the system's save dialog, which WebDriver cannot answer; the command it
      // leads to is called as the window calls it, with the path the dialog would give (as the
      // exports' end-to-end test does), and the bar is then dismissed.
      const saved = join(configDir, "chosen", "report.csv");
      const result = await session.scriptAsync(
        `const done = arguments[arguments.length - 1];
         const invoke = window.__TAURI_INTERNALS__.invoke;
         (async () => {
           const viewId = document.querySelector(".view-card iframe.view-frame").dataset.viewId;
           const file = { name: "report.csv", mime_type: "text/csv", source: { kind: "text", text: "region,total\\nnorth,12\\nsouth,30\\n" } };
           return invoke("save_view_file", { viewId, file, path: arguments[0] });
         })().then(done, (error) => done({ failed: String(error?.message ?? error) }));`,
        [saved],
      );
      assert.deepEqual(result, { path: saved, bytes: 31 });
      assert.equal(readFileSync(saved, "utf8"), "region,total\nnorth,12\nsouth,30\n");
      await clickVisible(session, (await session.findAll("[data-testid=view-download-bar] button"))[1]);
      await session.until("the view was told no file came of this ask", async () => (await viewOut(session, frame)).includes('inline: {"isError":true}'));
      await session.until("the save is on the timeline under the call whose view asked", async () => {
        for (const card of await session.findAll(".timeline-card.view-call")) {
          if ((await session.text(card)).includes("ui/download-file")) return true;
        }
        return false;
      });

      // A file of this computer: refused without asking.
      await clickInView(session, "#save-local");
      await session.until("the view was refused", async () => (await viewOut(session, frame)).includes("local: refused: Only files from http and https addresses"));
      assert.equal((await session.findAll("[data-testid=view-download-bar]")).length, 0);

      // A loopback address: asked about (its host named), then refused by the host's rules for
      // outside addresses before any save dialog; the loopback service hears nothing.
      await clickInView(session, "#save-web");
      const webBar = await session.waitFor("[data-testid=view-download-bar] strong.view-link-host", 20_000);
      assert.equal(await session.text(webBar), `127.0.0.1:${canary.address().port}`);
      await clickVisible(session, await session.find("[data-testid=view-download-bar] button.primary"));
      const refusal = await session.until("the refusal on the bar", async () => {
        const text = await session.text(await session.find("[data-testid=view-download-bar]"));
        return /private network/.test(text) ? text : false;
      });
      assert.match(refusal, /127\.0\.0\.1/);
      await session.until("the view was told", async () => (await viewOut(session, frame)).includes('web: {"isError":true}'));
      assert.deepEqual(hits, [], "the loopback service was reached");
      await axe(session, ".view-card", `a refused download (${lang}, ${theme})`);
      await shoot(session, `refused-${theme}-${lang}`);
      await clickVisible(session, (await session.findAll("[data-testid=view-download-bar] button"))[1]);

      // The view asks to be closed: closed as by Close.
      await clickInView(session, "#close");
      await session.until("the view closed", async () => (await session.findAll(".view-card iframe.view-frame")).length === 0, 20_000);
      const show = lang === "zh" ? "显示视图" : "Show view";
      await session.until("Show view is offered again", async () => {
        for (const button of await session.findAll(".view-card .view-strip-actions button")) {
          if ((await session.text(button)) === show) return true;
        }
        return false;
      });
    } finally {
      await session?.end();
      driver.child.kill();
      model.child.kill();
      canary.close();
    }
  });
}

process.exit((await run()) ? 1 : 0);
