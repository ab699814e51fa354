// A small W3C WebDriver client (fetch only) for driving the real app through WebKitWebDriver,
// the way tauri-driver does on Linux.
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { repo, screenshots } from "./lib.mjs";

export async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The app's environment in a window test: WebDriver automation on, and config and data folders
 * of the test's own (the data in `configDir/data`); `more` is added on top, often built from
 * scriptedModelEnv, ownWindowState and gtkTheme below.
 */
export function appEnv(configDir, more = {}) {
  return { ...process.env, TAURI_WEBVIEW_AUTOMATION: "true", TOOLTRAIL_CONFIG_DIR: configDir, TOOLTRAIL_DATA_DIR: join(configDir, "data"), ...more };
}

/** Questions go to the scripted model server `model` (see startScriptedModel). */
export const scriptedModelEnv = (model) => ({ TOOLTRAIL_BASE_URL: model.url, TOOLTRAIL_MODEL: "scripted" });

/** A window of its own: no language or timeline view remembered from another run. */
export const ownWindowState = (configDir) => ({ XDG_DATA_HOME: join(configDir, "xdg-data"), XDG_CACHE_HOME: join(configDir, "xdg-cache") });

/** GTK draws the window's own parts (scroll bars, native menus) in the test's theme. */
export const gtkTheme = (theme) => ({ GTK_THEME: theme === "dark" ? "Adwaita:dark" : "Adwaita" });

/** Saves the window as target/screenshots/NAME.png once the page has settled. */
export async function shoot(session, name) {
  await sleep(300);
  writeFileSync(join(screenshots, `${name}.png`), await session.screenshot());
}

/** Picks the window's language as a user does: the menu is reached first (it lists the other
 * language only then), then the choice is made and React sees the change. Focus is the first
 * way to reach it; a window that has not yet been given the X focus gets no focus event, so the
 * pointer is moved onto the menu as well if the other language has not appeared. */
export async function setLanguage(session, lang) {
  const offered = () =>
    session.script("return [...document.querySelectorAll('.language select option')].some((o) => o.value === arguments[0]);", [lang]);
  await session.script("document.querySelector('.language select').focus();");
  if (!(await offered())) {
    await session.hover(await session.find(".language select"));
    await session.until(`the language menu to offer ${lang}`, offered, 5_000).catch(() => {});
  }
  const chosen = await session.script(
    "const s = document.querySelector('.language select'); s.value = arguments[0]; s.dispatchEvent(new Event('change', { bubbles: true })); s.blur(); return s.value;",
    [lang],
  );
  if (chosen !== lang) throw new Error(`the language menu offers no ${lang}`);
}

let axeSource;

/** Runs axe-core (WCAG 2.1 A and AA) on the element matching `css` and fails with every
 * violation, named; `what` says what was checked. */
export async function axe(session, css, what) {
  axeSource ??= readFileSync(join(repo, "ui/node_modules/axe-core/axe.min.js"), "utf8");
  await session.script(`if (!window.axe) { ${axeSource} }`);
  const found = await session.scriptAsync(
    `const done = arguments[arguments.length - 1];
     window.axe.run(document.querySelector(arguments[0]), { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } })
       .then((r) => done(r.violations.map((v) => v.id + ": " + v.nodes.map((n) => n.target.join(" ")).join(", "))), (e) => done(["axe failed: " + e]));`,
    [css],
  );
  if (found.length > 0) throw new Error(`axe found problems in ${what}:\n  ${found.join("\n  ")}`);
}

/** Starts WebKitWebDriver on a free port and waits until it answers. */
export async function startDriver(env) {
  const port = await freePort();
  const child = spawn(process.env.WEBKIT_WEBDRIVER ?? "WebKitWebDriver", [`--port=${port}`], { env, stdio: ["ignore", "inherit", "inherit"] });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    try {
      const res = await fetch(`${base}/status`);
      if (res.ok) return { base, child };
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  child.kill();
  throw new Error("WebKitWebDriver did not start");
}

async function call(method, url, body) {
  const res = await fetch(url, { method, headers: { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = await res.json();
  if (!res.ok || (json.value && json.value.error)) throw new Error(`${method} ${url}: ${JSON.stringify(json.value ?? json).slice(0, 500)}`);
  return json.value;
}

const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";

export class Session {
  static async start(base, binary, args) {
    const value = await call("POST", `${base}/session`, {
      capabilities: { alwaysMatch: { "webkitgtk:browserOptions": { binary, args } } },
    });
    return new Session(`${base}/session/${value.sessionId}`);
  }
  constructor(url) {
    this.url = url;
  }
  find(css) {
    return call("POST", `${this.url}/element`, { using: "css selector", value: css }).then((v) => v[ELEMENT]);
  }
  async findAll(css) {
    const list = await call("POST", `${this.url}/elements`, { using: "css selector", value: css });
    return list.map((v) => v[ELEMENT]);
  }
  /**
   * Clicks the element as a user does: once it is in view and has stopped moving. Sections
   * that load above it, or a smooth scroll, can shift it between where the driver measured it
   * and where the click lands; the click waits until two measures a frame apart agree.
   */
  /** Clicks the element once it is still. Should something lie over it at that moment (a bar or
   * a card on its way in, on a loaded machine), the click waits and is made again, for up to 3 s,
   * as a person would; then the refusal is the test's failure. */
  async click(id) {
    for (let tries = 1; ; tries++) {
      await this.settle(id);
      try {
        return await call("POST", `${this.url}/element/${id}/click`, {});
      } catch (error) {
        if (tries >= 6 || !String(error.message).includes("element click intercepted")) throw error;
        await sleep(500);
      }
    }
  }
  /** Brings the element to the middle of the view and waits (up to 2 s) until its box is still. */
  async settle(id) {
    const box = () =>
      this.script(
        "const r = arguments[0].getBoundingClientRect(); return [r.left, r.top, r.width, r.height].map(Math.round).join(',');",
        [{ [ELEMENT]: id }],
      );
    await this.script("arguments[0].scrollIntoView({ block: 'nearest', behavior: 'instant' })", [{ [ELEMENT]: id }]);
    let last = await box();
    for (let waited = 0; waited < 2000; waited += 60) {
      await sleep(60);
      const now = await box();
      if (now === last) return;
      last = now;
    }
  }
  /** Moves the pointer onto the element's centre, as a mouse does (pointer events fire). */
  hover(id) {
    return call("POST", `${this.url}/actions`, {
      actions: [{ type: "pointer", id: "mouse", parameters: { pointerType: "mouse" }, actions: [{ type: "pointerMove", duration: 0, origin: { [ELEMENT]: id }, x: 0, y: 0 }] }],
    });
  }
  type(id, text) {
    return call("POST", `${this.url}/element/${id}/value`, { text });
  }
  /** The element's rendered text (innerText, as the user reads it). */
  text(id) {
    return this.script("return arguments[0].innerText", [{ [ELEMENT]: id }]);
  }
  script(source, args = []) {
    return call("POST", `${this.url}/execute/sync`, { script: source, args });
  }
  /** Runs `source` as an async script: it ends by calling `arguments[arguments.length - 1]`. */
  scriptAsync(source, args = []) {
    return call("POST", `${this.url}/execute/async`, { script: source, args });
  }
  async screenshot() {
    return Buffer.from(await call("GET", `${this.url}/screenshot`), "base64");
  }
  end() {
    return call("DELETE", this.url).catch(() => {});
  }
  /** Polls `check` every `everyMs` until it returns a truthy value. */
  async until(what, check, timeoutMs = 30_000, everyMs = 150) {
    const start = Date.now();
    let last;
    while (Date.now() - start < timeoutMs) {
      try {
        last = await check();
        if (last) return last;
      } catch (error) {
        last = error;
      }
      await sleep(everyMs);
    }
    throw new Error(`timed out waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
  }
  /** Polls for an element matching `css`. */
  waitFor(css, timeoutMs, everyMs) {
    return this.until(css, async () => (await this.findAll(css))[0], timeoutMs, everyMs);
  }
}

/** Starts the scripted model server (`extraArgs` such as `--record FILE`); resolves with its base URL. */
export async function startScriptedModel(binary, script, extraArgs = []) {
  const child = spawn(binary, ["--script", script, ...extraArgs], { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise((resolve, reject) => {
    let buffer = "";
    child.stdout.on("data", (chunk) => {
      buffer += chunk;
      const match = /listening on (\S+)/.exec(buffer);
      if (match) resolve(match[1]);
    });
    child.on("exit", (code) => reject(new Error(`scripted-model exited with ${code}`)));
  });
  return { url, child };
}
