// Benchmark (not a test): what the built UI (Chromium, IPC mocked) does while nothing happens.
// Counts, over BENCH_IDLE_MS (10 s by default) of a window left alone: the CSS animations that
// run, animation frames, timers fired, React commits, long tasks, and Chromium's own time spent
// on tasks, script, layout and style (CDP Performance.getMetrics). Measured three times: before
// the first question, after a conversation with calls and an answer is on screen, and the same
// with the timeline shown as a waterfall. An idle window counts nothing, or close to it, and has
// no text field focused (the question box rests 10 s after its last use).
// BENCH_IDLE_TRACE=1 also names where each fired timer and frame callback was scheduled.
import { launchBrowser, openApp } from "./lib.mjs";

const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 10_000);
const TRACE = process.env.BENCH_IDLE_TRACE === "1";
const workspace = { path: "/home/me/demo", name: "demo", watched: true };

// Installed before the page's own scripts: counts what wakes the page, and React's commits
// through the hook its devtools use (React looks for it once, as it loads).
const PROBE = `(() => {
  const probe = { timers: 0, frames: 0, commits: 0, rendered: 0, byComponent: {}, where: {}, counting: false };
  window.__idleProbe = probe;
  const TRACE = ${TRACE};
  const note = (kind) => {
    if (!TRACE) return undefined;
    const stack = (new Error().stack || "").split("\\n").slice(3, 6).map((l) => l.trim()).join(" < ");
    return kind + " " + stack;
  };
  const count = (kind, where) => {
    if (!probe.counting) return;
    if (kind === "frame") probe.frames++; else probe.timers++;
    if (where) probe.where[where] = (probe.where[where] || 0) + 1;
  };
  const wrap = (name, kind) => {
    const original = window[name];
    window[name] = function (fn, ...rest) {
      if (typeof fn !== "function") return original.call(this, fn, ...rest);
      const where = note(kind);
      return original.call(this, function (...args) { count(kind, where); return fn.apply(this, args); }, ...rest);
    };
  };
  wrap("setTimeout", "timeout");
  wrap("setInterval", "interval");
  wrap("requestAnimationFrame", "frame");
  window.__REACT_DEVTOOLS_GLOBAL_HOOK__ = {
    renderers: new Map(),
    supportsFiber: true,
    inject(renderer) { const id = this.renderers.size + 1; this.renderers.set(id, renderer); return id; },
    onScheduleFiberRoot() {},
    onCommitFiberRoot(_id, root) {
      if (!probe.counting) return;
      probe.commits++;
      // Components drawn in this commit: a subtree React left as it was keeps its old fibers.
      const walk = (fiber) => {
        for (let f = fiber; f; f = f.sibling) {
          if ([0, 1, 11, 14, 15].includes(f.tag) && (f.alternate === null || (f.flags & 1) === 1)) {
            probe.rendered++;
            const name = f.type && (f.type.displayName || f.type.name || (f.type.type && (f.type.type.displayName || f.type.type.name)));
            if (name) probe.byComponent[name] = (probe.byComponent[name] || 0) + 1;
          }
          if (f.child && (f.alternate === null || f.child !== f.alternate.child)) walk(f.child);
        }
      };
      walk(root.current.child);
    },
    onCommitFiberUnmount() {},
    onPostCommitFiberRoot() {},
    checkDCE() {},
  };
})();`;

const browser = await launchBrowser();
const { page, context, problems } = await openApp(browser, { workspace }, {});
await page.addInitScript({ content: PROBE });
await page.reload();
const cdp = await context.newCDPSession(page);
await cdp.send("Performance.enable", { timeDomain: "threadTicks" });

async function metrics() {
  const { metrics } = await cdp.send("Performance.getMetrics");
  const by = Object.fromEntries(metrics.map((m) => [m.name, m.value]));
  return { task: by.TaskDuration, script: by.ScriptDuration, layout: by.LayoutDuration, style: by.RecalcStyleDuration, layouts: by.LayoutCount, styles: by.RecalcStyleCount };
}

/** Leaves the page alone for IDLE_MS and says what ran meanwhile. */
async function idle(label) {
  // What the last step started settles first (a reply's last frame, a debounce).
  await page.waitForTimeout(1500);
  await page.evaluate(() => {
    const probe = window.__idleProbe;
    Object.assign(probe, { timers: 0, frames: 0, commits: 0, rendered: 0, byComponent: {}, where: {}, counting: true, long: [] });
    probe.observer = new PerformanceObserver((list) => probe.long.push(...list.getEntries().map((e) => e.duration)));
    probe.observer.observe({ type: "longtask" });
  });
  const before = await metrics();
  await page.waitForTimeout(IDLE_MS);
  const after = await metrics();
  const seen = await page.evaluate(() => {
    const probe = window.__idleProbe;
    probe.counting = false;
    probe.observer.disconnect();
    const running = document.getAnimations().filter((a) => a.playState === "running");
    const names = running.map((a) => `${a.animationName ?? a.constructor.name} on ${a.effect?.target?.className ?? "?"}`);
    // WebKitGTK blinks a focused field's caret for ever, a new frame every blink (Chromium's
    // figures above do not show it).
    const focused = document.activeElement;
    const editableFocused = !!focused && (focused.isContentEditable || (focused.matches("textarea, input") && !focused.readOnly));
    return { editableFocused, timers: probe.timers, frames: probe.frames, commits: probe.commits, longTasks: probe.long.length, runningAnimations: running.length, animations: [...new Set(names)], where: probe.where };
  });
  const ms = (key) => Math.round((after[key] - before[key]) * 10_000) / 10;
  const result = {
    state: label,
    idleMs: IDLE_MS,
    cpuMs: { task: ms("task"), script: ms("script"), layout: ms("layout"), style: ms("style") },
    layouts: after.layouts - before.layouts,
    styleRecalcs: after.styles - before.styles,
    ...seen,
  };
  if (!TRACE) delete result.where;
  return result;
}

const results = [];
await page.getByRole("textbox", { name: /Ask about/ }).waitFor();
results.push(await idle("before the first question"));

// A question typed in the box, two calls and a streamed answer (no approval: its card would
// take the focus from the box, and a window left after a plain answer keeps it there).
const box = page.getByRole("textbox", { name: /Ask about/ });
await box.fill("What does this project do?");
await box.press("Enter");
await page.waitForFunction(() => window.__mock.calls.some((c) => c.cmd === "send_message"));
await page.evaluate(() => {
  const { StreamBuilder, ANSWER } = window.__mock.stream;
  const b = new StreamBuilder().start("turn_1", "What does this project do?");
  b.context(1, 1_626, 8_192).tick(40);
  b.call(1, 0, "call_read", "read_file", { path: "README.md" }, "# Demo");
  b.call(1, 1, "call_grep", "search_text", { pattern: "func main" }, "main.go:5: func main() {");
  b.context(2, 2_310, 8_192).text(2, ANSWER, 24);
  return window.__mock.play(b.finish("completed", 2, ANSWER).events, 5);
});
await page.getByText("There are 3 Go files").waitFor();
results.push(await idle("an answer on screen (list)"));

// The same conversation as a waterfall.
await page.getByRole("radio", { name: /Waterfall/ }).click();
await page.locator(".waterfall-scroll").waitFor();
results.push(await idle("an answer on screen (waterfall)"));

// 4. A long answer streamed after 40 calls, a word a piece, every 5 ms: the CPU and the
// components drawn per thousand pieces. Only the growing message should be drawn again.
const TOKENS = Number(process.env.BENCH_STREAM_TOKENS ?? 1000);
await page.getByRole("radio", { name: /List/ }).click();
await page.getByRole("button", { name: /New conversation/ }).click();
await box.fill("Read forty files, then explain");
await box.press("Enter");
await page.waitForFunction(() => window.__mock.calls.filter((c) => c.cmd === "send_message").length === 2);
const seq = await page.evaluate(() => {
  const b = new window.__mock.stream.StreamBuilder("conv_1");
  b.start("turn_stream", "Read forty files, then explain");
  for (let i = 0; i < 40; i++) b.call(1, i, `call_s${i}`, "read_file", { path: `src/file_${i}.rs` }, "ok");
  window.__mock.deliver(b.events);
  return b.events.length;
});
await page.waitForTimeout(1000);
const streamStart = await metrics();
const drawn = await page.evaluate(async ([tokens, first]) => {
  const probe = window.__idleProbe;
  Object.assign(probe, { commits: 0, rendered: 0, byComponent: {}, counting: true });
  let next = first;
  const base = { conversation_id: "conv_1", turn_id: "turn_stream", time_ms: Date.now() };
  const pieces = Array.from({ length: tokens }, (_, i) => ({ ...base, seq: next++, type: "text_delta", round: 2, text: i % 40 === 39 ? `word${i}\n\n` : `word${i} ` }));
  await window.__mock.play(pieces, 5);
  await new Promise((resolve) => setTimeout(resolve, 300));
  probe.counting = false;
  const top = Object.entries(probe.byComponent).sort((a, b) => b[1] - a[1]).slice(0, 8);
  return { commits: probe.commits, componentsDrawn: probe.rendered, mostDrawn: Object.fromEntries(top) };
}, [TOKENS, seq]);
const streamEnd = await metrics();
const per1000 = (key) => Math.round(((streamEnd[key] - streamStart[key]) * 1000 * 1000) / TOKENS);
const streaming = { tokens: TOKENS, cpuMsPer1000Tokens: { task: per1000("task"), script: per1000("script"), layout: per1000("layout"), style: per1000("style") }, ...drawn };

console.log(JSON.stringify({ results, streaming, problems }, null, 2));
await context.close();
await browser.close();
