// Shared pieces of the UI specs: packages from ui/node_modules, the built UI served to Chromium
// without a server, and a tiny test runner that reports like the others.
import { createRequire } from "node:module";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, extname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const uiDist = join(repo, "ui/dist");
export const mockScript = join(repo, "target/ui-test/mock/mock-backend.js");
export const screenshots = join(repo, "target/screenshots");
mkdirSync(screenshots, { recursive: true });

const requireFromUi = createRequire(join(repo, "ui/package.json"));
export const { chromium } = requireFromUi("playwright-core");

const ORIGIN = "http://tooltrail.test";
const TYPES = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml", ".png": "image/png", ".woff2": "font/woff2" };

export async function launchBrowser() {
  // launch() starts Chromium with a fresh, empty profile of its own.
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

/**
 * A page showing the built UI with the Rust side mocked. `config` is the mock's start state
 * (see ui/tests/mock-backend.ts).
 */
export async function openApp(browser, config, contextOptions = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: "en-US", colorScheme: "light", ...contextOptions });
  await context.addInitScript({ content: `window.__mockConfig = ${JSON.stringify(config)};` });
  await context.addInitScript({ path: mockScript });
  await context.route(`${ORIGIN}/**`, async (route) => {
    const path = new URL(route.request().url()).pathname;
    const file = join(uiDist, path === "/" ? "index.html" : path);
    if (!file.startsWith(uiDist) || !existsSync(file)) return route.fulfill({ status: 404, body: "not found" });
    return route.fulfill({ status: 200, contentType: TYPES[extname(file)] ?? "application/octet-stream", body: readFileSync(file) });
  });
  const page = await context.newPage();
  const problems = [];
  page.on("pageerror", (error) => problems.push(String(error)));
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(message.text());
  });
  await page.goto(`${ORIGIN}/index.html`);
  return { context, page, problems };
}

const AXE_SOURCE = join(repo, "ui/node_modules/axe-core/axe.min.js");
/** WCAG 2.0, 2.1 and 2.2 at levels A and AA, and axe's best practices. */
/** The four looks a spec checks a view in: light and dark, English and Chinese. */
export const LOOKS = [
  { file: "light-en", zh: false, options: { colorScheme: "light", locale: "en-US" } },
  { file: "dark-en", zh: false, options: { colorScheme: "dark", locale: "en-US" } },
  { file: "light-zh", zh: true, options: { colorScheme: "light", locale: "zh-CN" } },
  { file: "dark-zh", zh: true, options: { colorScheme: "dark", locale: "zh-CN" } },
];

export const AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"];

/**
 * The violations axe-core finds in the page (or in the element `selector` picks), each a line
 * naming the rule and up to four of the elements it found, so a failing spec says what to fix.
 */
export async function axeViolations(page, selector = null) {
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(readFileSync(AXE_SOURCE, "utf8"));
  const result = await page.evaluate(
    ({ selector, tags }) => window.axe.run(selector ? document.querySelector(selector) : document, { runOnly: { type: "tag", values: tags } }),
    { selector, tags: AXE_TAGS },
  );
  return result.violations.map(
    (v) => `${v.id} (${v.impact}): ${v.help}\n    ${v.nodes.slice(0, 4).map((n) => `${n.target.join(" ")}: ${n.failureSummary?.split("\n").slice(1).join(" ")}`).join("\n    ")}`,
  );
}

/**
 * A dependency the spec needs is missing (node packages, a Secret Service, llama-server): under
 * CI=true that fails the run with `why`, so CI never counts a spec that did not run; elsewhere
 * it says `skipped: why` and the caller goes on without it.
 */
export function dependencyMissing(why) {
  if (/^(true|1)$/i.test(process.env.CI ?? "")) {
    console.log(`FAIL ${why}; under CI=true a spec whose dependency is missing fails instead of skipping`);
    process.exit(1);
  }
  console.log(`skipped: ${why}`);
}

/** Every file under `dir` (the history database and its journal included), as one buffer: for
 * checking that a secret never reached the record. */
export function bytesUnder(dir) {
  const parts = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    parts.push(statSync(path).isDirectory() ? bytesUnder(path) : readFileSync(path));
  }
  return Buffer.concat(parts);
}

const made = [];
/** A fresh folder in the system's temp folder, removed when the run ends (a config folder may
 * hold a copied model of hundreds of megabytes). */
export function tempDir(prefix) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

const tests = [];
export function test(name, fn) {
  tests.push({ name, fn });
}

export async function run() {
  let failed = 0;
  const only = process.env.UI_TEST_FILTER;
  for (const { name, fn } of tests) {
    if (only && !name.includes(only)) continue;
    const started = Date.now();
    try {
      await fn();
      console.log(`ok   ${name} (${Date.now() - started} ms)`);
    } catch (error) {
      failed++;
      console.log(`FAIL ${name}\n${error?.stack ?? error}`);
    }
  }
  // A closed app's engine may still be writing its last files (a shader cache) as the folder
  // goes: try again for a while, and leave it rather than fail a run whose tests passed.
  for (const dir of made) {
    for (let tries = 1; ; tries++) {
      try {
        rmSync(dir, { recursive: true, force: true });
        break;
      } catch (error) {
        if (tries >= 20) {
          console.log(`  left ${dir} (${error.code})`);
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  }
  const ran = only ? tests.filter((t) => t.name.includes(only)).length : tests.length;
  console.log(`\n${ran - failed} passed, ${failed} failed`);
  return failed;
}
