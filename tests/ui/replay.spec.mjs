// "Replay with another model" in the built UI in Chromium, with the Rust side mocked
// (ui/tests/mock-history.ts, mock-backend.ts): a recorded replay opened from History beside its
// original (as a list and on the waterfall), the dialog, the table of models tried; axe in both
// themes and both languages, and screenshots.
import assert from "node:assert/strict";
import { join } from "node:path";
import { axeViolations, launchBrowser, LOOKS, openApp, run, screenshots, test } from "./lib.mjs";

const workspace = { path: "/home/me/demo", name: "demo", watched: true };
const browser = await launchBrowser();
const shot = (page, name) => page.screenshot({ path: join(screenshots, `${name}.png`) });

const call = (tool, args, marks = {}) => ({ call_id: `c_${tool}`, tool, arguments: args, status: "success", from_record: false, not_run: false, ended_ms: 100, duration_ms: 40, ...marks });
const figures = (turn, model, calls, answer, replay_of = null, total_ms = 1200) => ({
  turn_id: turn, conversation_id: "conv_1", model, workspace: workspace.path, question: "What does main.go do?", answer, end: "completed",
  total_ms, first_reply_ms: 300, tokens_in: 120, tokens_out: 30, errors: 0, loops_cut: 0, calls, replay_of,
});
const comparison = {
  original: figures("turn_1", "big-model", [call("list_dir", { path: "." }, { ended_ms: 180, duration_ms: 60 }), call("read_file", { path: "main.go" }, { ended_ms: 420, duration_ms: 180 }), call("execute_bash", { command: "go vet" }, { ended_ms: 1150, duration_ms: 600 })], "It starts a server."),
  replay: figures("turn_r", "small-model", [call("list_dir", { path: "." }, { ended_ms: 120, duration_ms: 50 }), call("read_file", { path: "handlers.go" }, { ended_ms: 360, duration_ms: 140 }), call("execute_bash", { command: "go vet" }, { from_record: true, ended_ms: 400, duration_ms: 0 })], "It serves handlers.", "turn_1", 800),
  first_divergence: 2, calls_agreement: 0.67, tools_agreement: 1, answer_same: false, calls_not_run: 0, calls_from_record: 1,
  rows: [{ original: 0, replay: 0 }, { original: 1, replay: null }, { original: null, replay: 1 }, { original: 2, replay: 2 }],
};
const row = (id, turn) => ({
  id, conversation_id: "conv_1", turn_id: turn, workspace: workspace.path, call_id: `call_${id}`, round: 1, tool: "read_file", source: { kind: "builtin" },
  description: "", arguments: { path: "handlers.go" }, started_ms: Date.now() - 60_000, duration_ms: 5, status: "success", result_preview: "", result_size: 0,
  truncated_for_model: false, approval: { allowed: true, by: { kind: "policy" } },
});
const config = {
  workspace,
  history: [row("tc_2", "turn_r"), row("tc_1", "turn_1")],
  replayComparisons: { turn_r: comparison },
  replayTable: {
    rows: [{ model: "small-model", replays: 1, calls_agreement: 0.67, same_calls: 0, answer_same: 0, median_ms: 900, tokens_in: 120, tokens_out: 30, calls_not_run: 0, errors: 0, loops_cut: 0 }],
    markdown: "| model |\n|---|\n| small-model |\n",
  },
};

for (const look of LOOKS) {
  test(`a replay beside its original, the dialog and the table pass axe (${look.file})`, async () => {
    const { context, page, problems } = await openApp(browser, config, look.options);
    try {
      await page.getByRole("tab", { name: /History|历史/ }).click();
      await page.getByTestId("models-tried-row").waitFor();
      // The replayed call opens its comparison.
      await page.locator('.history-list [role="option"]').first().click();
      await page.getByTestId("replay-open-comparison").click();
      const verdict = await page.getByTestId("replay-verdict").textContent();
      assert.equal(verdict, look.zh ? "调用在第 2 个调用处分开 · 回答不同" : "The calls part at call 2 · a different answer");
      assert.equal(await page.locator('[data-testid="replay-row"][data-parts="true"]').count(), 1);
      assert.equal(await page.getByTestId("replay-blank").count(), 2);
      assert.deepEqual(await axeViolations(page), []);
      await shot(page, `replay-compare-${look.file}`);
      // The waterfall, chosen with the keyboard: the same rows, the same parting row and blanks,
      // the command answered from the record a marker.
      await page.getByTestId("replay-view-list").focus();
      await page.keyboard.press("Tab");
      await page.keyboard.press("Space");
      await page.getByTestId("replay-waterfall").waitFor();
      assert.equal(await page.getByTestId("replay-view-waterfall").getAttribute("aria-pressed"), "true");
      assert.deepEqual(await page.locator('[data-testid="replay-wf-row"]').evaluateAll((rows) => rows.map((r) => r.dataset.parts === "true")), [false, true, false, false]);
      assert.equal(await page.getByTestId("replay-blank").count(), 2);
      assert.equal(await page.getByTestId("replay-bar").count(), 5);
      assert.equal(await page.getByTestId("replay-marker").count(), 1);
      // Each side fills its column on its own axis: the original's command ends at its 1.2 s end
      // (1150 of 1200 ms), the replay's read ends at 360 of its 800 ms.
      const ends = await page.locator('[data-testid="replay-wf-row"] td:not(.replay-blank)').evaluateAll((cells) =>
        cells.map((cell) => {
          const shape = cell.querySelector('[data-testid="replay-bar"], [data-testid="replay-marker"]').getBoundingClientRect();
          const track = cell.querySelector('[data-testid="replay-track"]').getBoundingClientRect();
          return Math.round(((shape.left + shape.width - track.left) / track.width) * 100);
        }),
      );
      assert.deepEqual(ends, [15, 15, 35, 45, 96, 50]);
      assert.equal(await page.getByTestId("replay-axis").first().locator(".replay-axis-total").textContent(), look.zh ? "共 1.2 s" : "1.2 s in all");
      assert.deepEqual(await axeViolations(page), []);
      await page.getByTestId("replay-waterfall").scrollIntoViewIfNeeded();
      await shot(page, `replay-waterfall-${look.file}`);
      await page.keyboard.press("Escape");
      await page.getByTestId("replay-recorded").waitFor({ state: "detached" });
      assert.deepEqual(await axeViolations(page), []);
      await shot(page, `replay-table-${look.file}`);
      // The original's call offers "Replay with…"; Escape closes the dialog.
      await page.locator('.history-list [role="option"]').nth(1).click();
      await page.getByTestId("replay-question").click();
      await page.getByTestId("replay-dialog").waitFor();
      await page.getByTestId("replay-run").waitFor();
      assert.deepEqual(await axeViolations(page), []);
      await shot(page, `replay-dialog-${look.file}`);
      await page.keyboard.press("Escape");
      await page.getByTestId("replay-dialog").waitFor({ state: "detached" });
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });
}

const failed = await run();
await browser.close();
process.exit(failed ? 1 : 0);
