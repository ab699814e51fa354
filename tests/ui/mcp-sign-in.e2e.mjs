// The real app in a real window (Xvfb, WebKitWebDriver) with an MCP server that asks for
// sign-in (tests/mcp/fixtures/oauth-server.mjs) and its sign-ins in a private OS keychain (run
// under tests/ui/with-keyring). The sidebar shows the server needs sign-in, with the button; the
// button opens the browser (BROWSER is a script that only notes the page) and the sidebar shows
// the page while it waits; a stray local call to the callback (no state) changes nothing; the
// authorization server saying no makes it "failed" with the reason;
// signing in again and finishing the page (fetched by the test, redirects followed, as a
// browser would) makes it "signed in as ada@example.com", in the sidebar and in Settings → MCP.
// Once in English and light, once in Chinese and dark; each state is photographed.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmodSync, cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { dependencyMissing, repo, run, tempDir, test } from "./lib.mjs";
import { appEnv, gtkTheme, ownWindowState, Session, setLanguage, shoot as shootWindow, startDriver } from "./webdriver.mjs";

const app = process.env.TOOLTRAIL_APP ?? join(repo, "target/debug/tooltrail-app");
const fixture = join(repo, "tests/mcp/fixtures/oauth-server.mjs");
// Screenshots need WebKit's DMA-BUF renderer (see app.e2e.mjs).
process.env.WEBKIT_DISABLE_DMABUF_RENDERER ??= "0";

const shoot = (session, name) => shootWindow(session, `app-e2e-mcp-sign-in-${name}`);

if (!existsSync(join(repo, "tests/mcp/node_modules/@modelcontextprotocol/sdk"))) {
  dependencyMissing("tests/mcp/node_modules is not installed (run scripts/mcp-setup)");
  process.exit(0);
}
if (!process.env.DBUS_SESSION_BUS_ADDRESS) {
  dependencyMissing("no Secret Service to keep sign-ins in (run under tests/ui/with-keyring)");
  process.exit(0);
}

/** The fixture, started; resolves with its URLs once it listens. */
function startFixture(secrets) {
  const child = spawn(process.execPath, [fixture, secrets], { cwd: join(repo, "tests/mcp"), stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve) => {
    createInterface({ input: child.stdout }).once("line", (line) => resolve({ child, ...JSON.parse(line) }));
  });
}

for (const [lang, theme] of [
  ["en", "light"],
  ["zh", "dark"],
]) {
  test(`a server that asks for sign-in: needs sign-in, waiting, failed, signed in (${lang}, ${theme})`, async () => {
    const folder = join(tempDir("tooltrail-e2e-"), "demo-project");
    cpSync(join(repo, "tests/ui/fixtures/demo-project"), folder, { recursive: true });
    const configDir = tempDir("tooltrail-config-");
    const server = await startFixture(join(configDir, "secrets.txt"));
    writeFileSync(join(configDir, "mcp.json"), JSON.stringify({ mcpServers: { docs: { url: server.mcp, approval: "allow" } } }));
    // The browser: notes the page it was asked to open, and nothing more.
    const page = join(configDir, "page.txt");
    const browser = join(configDir, "browser.sh");
    writeFileSync(browser, `#!/bin/sh\nprintf '%s' "$1" > '${page}'\n`);
    chmodSync(browser, 0o755);
    const driver = await startDriver(appEnv(configDir, { ...gtkTheme(theme), BROWSER: browser, ...ownWindowState(configDir) }));
    let session;
    const zh = lang === "zh";
    const entry = '[data-testid="mcp-servers"] .mcp-server';
    const state = () => session.script(`return document.querySelector('${entry} [data-testid="mcp-sign-in-state"]')?.dataset.state ?? null`);
    const openedPage = async (previous) => {
      await session.until("the browser to be asked to open the sign-in page", async () => existsSync(page) && readFileSync(page, "utf8") !== previous);
      return readFileSync(page, "utf8");
    };
    try {
      session = await Session.start(driver.base, app, [folder]);
      await session.waitFor(".composer textarea");
      await setLanguage(session, lang);

      // Needs sign-in: no browser opened unasked, the button is there.
      await session.until("the server to need sign-in", async () => (await state()) === "needed", 60_000);
      assert.equal(existsSync(page), false, "no browser opens before the user asks");
      const text = await session.text(await session.find(entry));
      assert.match(text, zh ? /需要登录/ : /Needs sign-in/);
      await shoot(session, `needed-${theme}-${lang}`);

      // Waiting: the browser was asked to open the page, which the sidebar shows too.
      await session.click(await session.find(`${entry} [data-testid="mcp-sign-in"]`));
      const first = await openedPage("");
      assert.match(first, /code_challenge_method=S256/);
      await session.until("the sidebar to wait for the browser", async () => (await state()) === "waiting");
      assert.ok((await session.text(await session.find(entry))).includes(first.slice(0, 40)));
      await shoot(session, `waiting-${theme}-${lang}`);

      // Another local program calls the callback first, without the sign-in's state: it gets an
      // error page and the sign-in goes on waiting for the real answer.
      const denied = new URL(first);
      const stray = new URL(denied.searchParams.get("redirect_uri"));
      stray.searchParams.set("code", "stolen");
      const strayAnswer = await fetch(stray);
      assert.equal(strayAnswer.status, 400);
      assert.match(await strayAnswer.text(), /not the sign-in Tooltrail is waiting for/);

      // The authorization server says no: failed, with the reason (not the stray call's).
      const back = new URL(denied.searchParams.get("redirect_uri"));
      back.searchParams.set("error", "access_denied");
      back.searchParams.set("state", denied.searchParams.get("state"));
      const deniedPage = await (await fetch(back)).text();
      assert.match(deniedPage, /did not work: access was denied/);
      assert.doesNotMatch(deniedPage, /signed in/i);
      await session.until("the sign-in to have failed", async () => (await state()) === "failed");
      assert.match(await session.text(await session.find(entry)), zh ? /登录失败：access was denied/ : /Sign-in failed: access was denied/);
      await shoot(session, `failed-${theme}-${lang}`);

      // Again, finished this time: signed in as the ID token's user, in the sidebar and Settings.
      await session.click(await session.find(`${entry} [data-testid="mcp-sign-in"]`));
      const second = await openedPage(first);
      // The page the browser ends on says signed in: the code was exchanged by then.
      assert.match(await (await fetch(second)).text(), /You are signed in to /);
      await session.until("the sign-in to be done", async () => (await state()) === "signed_in", 60_000);
      assert.match(await session.text(await session.find(entry)), zh ? /已登录为 ada@example\.com/ : /Signed in as ada@example\.com/);
      // The server starts again with the token, and its tool is offered.
      await session.until("the server to run with its tool", async () =>
        /running · 1 tool|运行中 · 1 个工具|1 tool|1 个工具/.test(await session.text(await session.find(entry))),
      );
      await shoot(session, `signed-in-${theme}-${lang}`);
    } finally {
      await session?.end();
      driver.child.kill();
      server.child.kill();
    }
  });
}

process.exit((await run()) ? 1 : 0);
