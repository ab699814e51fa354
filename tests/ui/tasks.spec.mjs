// A call the MCP server runs as a task (MCP Tasks), on its timeline card in the built UI
// (Chromium, the Rust side mocked): the task's state as it changes (working with the server's
// words, needs your answer, done), in both themes and both languages, with axe-core finding
// nothing. Screenshots go to target/screenshots/tasks-*.png.
import assert from "node:assert/strict";
import { join } from "node:path";
import { axeViolations, launchBrowser, LOOKS, openApp, run, screenshots, test } from "./lib.mjs";

const browser = await launchBrowser();
const workspace = { path: "/home/me/demo", name: "demo", watched: true };
const shot = (page, name) => page.screenshot({ path: join(screenshots, `tasks-${name}.png`) });

async function axe(page, what) {
  const found = await axeViolations(page);
  assert.deepEqual(found, [], `axe found problems in ${what}:\n  ${found.join("\n  ")}`);
}

async function ask(page, question) {
  const box = page.locator(".composer textarea");
  await box.fill(question);
  await box.press("Enter");
  await page.waitForFunction((q) => window.__mock.calls.some((c) => c.cmd === "send_message" && c.args.text === q), question);
}

/** Delivers the task's states from the `from`-th on (the turn's start comes with the first). */
function deliver(page, states, from) {
  return page.evaluate(
    ({ states, from }) => {
      const events = window.__mock.stream.taskTurn(states).events;
      const head = window.__mock.stream.taskTurn([]).events.length;
      window.__mock.deliver(from === 0 ? events : events.slice(head + from));
    },
    { states, from },
  );
}

test("a task's state shows on its call's card as it changes, in every look", async () => {
  for (const look of LOOKS) {
    const { page, problems, context } = await openApp(browser, { workspace }, look.options);
    await page.getByRole("tab").first().waitFor({ timeout: 90_000 });
    await ask(page, "Research tides");
    const states = [
      ["working", "Gathering sources..."],
      ["working", "Analyzing content..."],
      ["input_required", 'Found multiple interpretations for "tides". Requesting clarification...'],
      ["working", "Generating report..."],
      ["completed"],
    ];
    await deliver(page, states.slice(0, 2), 0);
    const task = page.locator(".timeline-card .card-task");
    const working = look.zh ? "任务：进行中" : "Task: working";
    await page.getByRole("status", { name: working }).waitFor();
    assert.match(await task.innerText(), /Analyzing content\.\.\./);
    assert.match(await task.innerText(), /6669aa9e2ad37722/);
    await shot(page, `working-${look.file}`);
    await axe(page, `a working task's card (${look.file})`);

    await deliver(page, states.slice(0, 3), 2);
    await page.getByRole("status", { name: look.zh ? "任务：等待你的回答" : "Task: needs your answer" }).waitFor();
    await shot(page, `input-required-${look.file}`);
    await axe(page, `a task waiting for an answer (${look.file})`);

    await deliver(page, states, 3);
    await page.getByRole("status", { name: look.zh ? "任务：已完成" : "Task: done" }).waitFor();
    assert.deepEqual(problems, []);
    await context.close();
  }
});

const failed = await run();
await browser.close();
process.exit(failed ? 1 : 0);
