// The Snippets screen and the timeline's description and start time, in the built UI in
// Chromium with the Rust side mocked (ui/tests/mock-snippets.ts): listing, searching, the
// keyboard, copying, deleting after a yes, the empty state, and screenshots in both languages
// and both themes.
import assert from "node:assert/strict";
import { join } from "node:path";
import { launchBrowser, openApp, run, screenshots, test } from "./lib.mjs";

const workspace = { path: "/home/me/demo", name: "demo", watched: true };
const browser = await launchBrowser();

const shot = (page, name) => page.screenshot({ path: join(screenshots, `${name}.png`) });
const calls = (page, cmd) => page.evaluate((cmd) => window.__mock.calls.filter((c) => c.cmd === cmd).map((c) => c.args), cmd);

const hour = 3_600_000;
const now = Date.now();
const snippets = [
  {
    name: "retry_with_backoff",
    language: "rust",
    description: "How the uploader retries: exponential back-off, capped at 30 s",
    content: "pub async fn retry<T>(mut attempt: impl FnMut() -> Result<T, Error>) -> Result<T, Error> {\n    let mut wait = Duration::from_millis(100);\n    loop {\n        match attempt() {\n            Ok(value) => return Ok(value),\n            Err(error) if wait < MAX_WAIT => {\n                tokio::time::sleep(wait).await;\n                wait *= 2; // back off\n            }\n            Err(error) => return Err(error),\n        }\n    }\n}",
    created_ms: now - 50 * hour,
    updated_ms: now - 2 * hour,
  },
  { name: "release_build", language: "sh", description: "The release build with the bundled SQLite", content: "cargo build --release --locked -p tooltrail-cli", created_ms: now - 30 * hour, updated_ms: now - 30 * hour },
  { name: "todo_sql", language: "sql", description: null, content: "SELECT name, updated_ms FROM snippets ORDER BY updated_ms DESC;", created_ms: now - 5 * hour, updated_ms: now - 5 * hour },
  { name: "notes", language: null, description: "Where the parser lives", content: "crates/store/src/search.rs: fts_query turns words into an FTS5 query.", created_ms: now - hour, updated_ms: now - hour },
];

const config = () => ({ workspace, snippets: structuredClone(snippets) });

async function openSnippets(page) {
  await page.getByRole("tab", { name: /Chat|对话/ }).waitFor();
  await page.keyboard.press("Control+4");
  await page.getByRole("listbox", { name: /Snippets|片段/ }).waitFor();
}

test("Ctrl+4 lists the folder's snippets; the first is shown highlighted in its language", async () => {
  const { page, problems, context } = await openApp(browser, config());
  await openSnippets(page);
  assert.equal(await page.getByRole("listbox", { name: "Snippets" }).getByRole("option").count(), 4);
  assert.equal(await page.getByTestId("snippet-count").innerText(), "4 snippets");
  const detail = page.getByTestId("snippet-detail");
  await detail.getByRole("heading", { name: "notes" }).waitFor();
  // By name: notes, release_build, retry_with_backoff, todo_sql.
  assert.deepEqual(await page.locator(".snippet-name").allInnerTexts(), ["notes", "release_build", "retry_with_backoff", "todo_sql"]);
  await page.getByRole("option", { name: /retry_with_backoff/ }).click();
  await detail.getByRole("heading", { name: "retry_with_backoff" }).waitFor();
  assert.equal(await detail.locator("code.language-rust").count(), 1);
  assert.ok((await detail.locator("code.language-rust .hljs-keyword").count()) > 3, "the Rust keywords are highlighted");
  assert.match(await detail.innerText(), /exponential back-off/);
  await shot(page, "snippets");
  assert.deepEqual(problems, []);
  await context.close();
});

test("search asks the store with the words typed, and says when nothing matches", async () => {
  const { page, problems, context } = await openApp(browser, config());
  await openSnippets(page);
  const box = page.getByRole("searchbox", { name: "Search snippets" });
  await box.fill("cargo");
  await page.waitForFunction(() => window.__mock.calls.some((c) => c.cmd === "list_snippets" && c.args.query === "cargo"));
  await page.getByText("1 snippet", { exact: true }).waitFor();
  await page.getByTestId("snippet-detail").getByRole("heading", { name: "release_build" }).waitFor();
  await box.fill("nothing-like-this");
  await page.getByTestId("snippets-empty").getByText("No snippet matches “nothing-like-this”.").waitFor();
  await box.press("Escape");
  await page.getByText("4 snippets", { exact: true }).waitFor();
  assert.deepEqual(problems, []);
  await context.close();
});

test("the keyboard: ↓ from the search box into the list, ↑/↓/End, Delete asks, Esc keeps, Enter on Delete deletes", async () => {
  const { page, problems, context } = await openApp(browser, config());
  await openSnippets(page);
  const box = page.getByRole("searchbox", { name: "Search snippets" });
  await box.focus();
  await box.press("ArrowDown");
  await page.keyboard.press("ArrowDown");
  assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("data-name")), "release_build");
  await page.keyboard.press("End");
  assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("data-name")), "todo_sql");
  await page.keyboard.press("ArrowUp");
  await page.getByTestId("snippet-detail").getByRole("heading", { name: "retry_with_backoff" }).waitFor();

  await page.keyboard.press("Delete");
  const ask = page.getByRole("alertdialog", { name: "Delete the snippet “retry_with_backoff”?" });
  await ask.waitFor();
  await shot(page, "snippets-delete-confirm");
  await page.keyboard.press("Escape");
  await ask.waitFor({ state: "detached" });
  assert.deepEqual(await calls(page, "delete_snippet"), []);

  await page.keyboard.press("Delete");
  await ask.getByRole("button", { name: "Delete" }).focus();
  await page.keyboard.press("Enter");
  await page.getByText("3 snippets", { exact: true }).waitFor();
  assert.deepEqual(await calls(page, "delete_snippet"), [{ name: "retry_with_backoff" }]);
  assert.deepEqual(await page.evaluate(() => window.__mock.config.snippets.map((s) => s.name)), ["release_build", "todo_sql", "notes"]);
  // The next one takes its place.
  await page.getByTestId("snippet-detail").getByRole("heading", { name: "todo_sql" }).waitFor();
  assert.deepEqual(problems, []);
  await context.close();
});

test("copy puts the content on the clipboard", async () => {
  const { page, problems, context } = await openApp(browser, config());
  await page.evaluate(() => {
    // The page is not a secure context, so record what the copy fallback selects instead.
    window.__copied = [];
    const exec = document.execCommand.bind(document);
    document.execCommand = (command, ...rest) => {
      if (command === "copy") window.__copied.push(document.activeElement?.value ?? "");
      return exec(command, ...rest);
    };
    if (navigator.clipboard) navigator.clipboard.writeText = async (text) => void window.__copied.push(text);
  });
  await openSnippets(page);
  await page.getByRole("option", { name: /release_build/ }).click();
  await page.getByTestId("snippet-detail").getByRole("heading", { name: "release_build" }).waitFor();
  await page.getByRole("button", { name: "Copy content" }).click();
  await page.getByRole("button", { name: "Copy content" }).getByText("Copied").waitFor();
  assert.deepEqual(await page.evaluate(() => window.__copied), ["cargo build --release --locked -p tooltrail-cli"]);
  assert.deepEqual(problems, []);
  await context.close();
});

test("a folder without snippets says how to save one", async () => {
  const { page, problems, context } = await openApp(browser, { workspace, snippets: [] });
  await openSnippets(page);
  const empty = page.getByTestId("snippets-empty");
  await empty.waitFor();
  assert.match(await empty.innerText(), /No snippets are saved for demo yet\./);
  assert.match(await empty.innerText(), /tooltrail tool snippets/);
  assert.equal(await page.getByTestId("snippet-detail").count(), 0);
  await shot(page, "snippets-empty");
  assert.deepEqual(problems, []);
  await context.close();
});

test("the timeline card shows each call's tool description and start time, also for a call stopped while it ran", async () => {
  const { page, problems, context } = await openApp(browser, { workspace });
  const box = page.getByRole("textbox", { name: /Ask about/ });
  await box.fill("Count the lines");
  await box.press("Enter");
  await page.waitForFunction(() => window.__mock.calls.some((c) => c.cmd === "send_message"));
  const started = await page.evaluate(() => {
    const b = new window.__mock.stream.StreamBuilder("conv_1", new Date(2026, 0, 5, 9, 41, 7).getTime()).start("t1", "Count the lines");
    b.call(1, 0, "c1", "search_files", { pattern: "**/*.rs" }, "src/main.rs", 9);
    b.callDelta(1, 1, "c2", "count_lines", { path: "." }).tick(3).started(1, "c2", "count_lines", { path: "." });
    window.__mock.deliver(b.events);
    return b.events.at(-1).time_ms;
  });
  const card = page.locator('.timeline-card[data-call-id="c2"]');
  await card.getByText("The count_lines tool.").waitFor();
  const time = card.locator("time");
  assert.equal(await time.innerText(), "09:41:07");
  assert.match(await time.getAttribute("title"), /^Started 5 Jan 2026,? 09:41:07$/);
  assert.equal(await time.getAttribute("datetime"), new Date(started).toISOString());
  // Stopped while it ran: the card keeps what the tool does and when it started.
  await page.evaluate(() => {
    const b = new window.__mock.stream.StreamBuilder("conv_1", new Date(2026, 0, 5, 9, 41, 9).getTime());
    b.start("t1", "Count the lines");
    window.__mock.deliver([{ ...b.events[0], seq: 99, type: "turn_finished", reason: "cancelled", rounds: 1, text: "" }]);
  });
  await page.locator('.timeline-card.phase-cancelled[data-call-id="c2"]').waitFor();
  assert.match(await card.innerText(), /The count_lines tool\.[\s\S]*09:41:07/);
  assert.equal(await page.locator('.timeline-card[data-call-id="c1"] .card-desc').innerText(), "The search_files tool.");
  await page.locator(".timeline").screenshot({ path: join(screenshots, "timeline-description.png") });
  assert.deepEqual(problems, []);
  await context.close();
});

for (const [name, options] of [
  ["en", {}],
  ["en-dark", { colorScheme: "dark" }],
  ["zh", { locale: "zh-CN" }],
  ["zh-dark", { locale: "zh-CN", colorScheme: "dark" }],
]) {
  test(`screenshot of the Snippets screen (${name})`, async () => {
    const { page, problems, context } = await openApp(browser, config(), options);
    await openSnippets(page);
    await page.getByRole("option", { name: /retry_with_backoff/ }).click();
    await page.getByTestId("snippet-detail").locator("code.language-rust").waitFor();
    const text = await page.locator(".page").innerText();
    if (name.startsWith("zh")) {
      assert.match(text, /片段/);
      for (const english of ["Snippets", "Search", "Delete", "Copy", "Language", "Saved"]) {
        assert.ok(!text.includes(english), `"${english}" is left in the Chinese screen`);
      }
    }
    await shot(page, `snippets-${name}`);
    assert.deepEqual(problems, []);
    await context.close();
  });
}

const failed = await run();
await browser.close();
process.exit(failed ? 1 : 0);
