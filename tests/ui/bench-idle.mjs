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
  const probe = { timers: 0, frames: 0, commits: 0, where: {}, counting: false };
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
    onCommitFiberRoot() { if (probe.counting) probe.commits++; },
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
    Object.assign(probe, { timers: 0, frames: 0, commits: 0, where: {}, counting: true, long: [] });
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

// A question, its calls, an approval and a streamed answer, as the browser specs play it.
const box = page.getByRole("textbox", { name: /Ask about/ });
await box.fill("What does this project do?");
await box.press("Enter");
await page.waitForFunction(() => window.__mock.calls.some((c) => c.cmd === "send_message"));
await page.evaluate(() => window.__mock.play(window.__mock.stream.approvedAndAnswered().events, 5));
await page.getByText("There are 3 Go files").waitFor();
results.push(await idle("an answer on screen (list)"));

// The same conversation as a waterfall.
await page.getByRole("radio", { name: /Waterfall/ }).click();
await page.locator(".waterfall-scroll").waitFor();
results.push(await idle("an answer on screen (waterfall)"));

console.log(JSON.stringify({ results, problems }, null, 2));
await context.close();
await browser.close();
