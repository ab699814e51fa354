// Benchmark (not a test): a 10,000-call conversation in the built UI (Chromium, IPC mocked).
// Measures the time from asking for the conversation to the frame that shows its timeline, and
// the long tasks (over 50 ms) while the timeline scrolls. BENCH_TIMELINE_VIEW=waterfall measures
// the waterfall instead of the list. Besides the time to the frame, the main thread's CPU time
// for it (Chromium's TaskDuration, counted in the thread's own ticks), which a busy machine moves
// less than the wall clock.
import { launchBrowser, openApp } from "./lib.mjs";

const COUNT = Number(process.env.BENCH_CALLS ?? 10_000);
const WATERFALL = process.env.BENCH_TIMELINE_VIEW === "waterfall";
// What shows a drawn call, and what scrolls, in each view.
const ROW = WATERFALL ? "button.wf-call" : ".timeline-card";
const SCROLLER = WATERFALL ? ".waterfall-scroll" : '[data-testid="timeline-scroll"]';
const browser = await launchBrowser();
const { page, context } = await openApp(browser, {
  workspace: { path: "/home/me/demo", name: "demo", watched: true },
  conversations: [{ id: "conv_many", title: "Many calls", workspace: "/home/me/demo", updated_ms: 1, turns: 1, running: false }],
});
if (WATERFALL) {
  // The choice is remembered in the window's storage, as a user's would be.
  await page.evaluate(() => localStorage.setItem("tooltrail.timelineView", "waterfall"));
  await page.reload();
}
await page.getByRole("button", { name: /Many calls/ }).waitFor();
await page.evaluate((count) => {
  window.__mock.config.loaded = { conv_many: window.__mock.stream.manyCalls(count) };
}, COUNT);

const cdp = await context.newCDPSession(page);
await cdp.send("Performance.enable", { timeDomain: "threadTicks" });
const taskMs = async () => (await cdp.send("Performance.getMetrics")).metrics.find((m) => m.name === "TaskDuration").value * 1000;

const paints = [];
const cpu = [];
for (let run = 0; run < 5; run++) {
  if (run > 0) {
    await page.getByRole("button", { name: /New conversation/ }).click();
    await page.waitForFunction((row) => !document.querySelector(row), ROW);
  }
  const cpuBefore = await taskMs();
  paints.push(
    await page.evaluate(async ([count, row]) => {
      const button = [...document.querySelectorAll(".side-list .side-item")].find((b) => b.textContent.includes("Many calls"));
      const start = performance.now();
      button.click();
      await new Promise((resolve) => {
        const check = () => {
          const label = document.querySelector('[data-testid="timeline-count"]');
          if (label && label.textContent.includes(String(count)) && document.querySelector(row)) resolve();
          else requestAnimationFrame(check);
        };
        check();
      });
      // The frame after the one that rendered it is painted.
      await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
      return performance.now() - start;
    }, [COUNT, ROW]),
  );
  cpu.push((await taskMs()) - cpuBefore);
}

const scroll = await page.evaluate(async ([scroller, row]) => {
  const long = [];
  const observer = new PerformanceObserver((list) => long.push(...list.getEntries().map((e) => e.duration)));
  observer.observe({ type: "longtask" });
  const el = document.querySelector(scroller);
  el.scrollTop = 0;
  const gaps = [];
  let last = performance.now();
  const until = last + 4000;
  await new Promise((resolve) => {
    const step = (now) => {
      gaps.push(now - last);
      last = now;
      el.scrollTop += 240;
      if (now < until) requestAnimationFrame(step);
      else resolve();
    };
    requestAnimationFrame(step);
  });
  // Jumps, as when dragging the scrollbar.
  for (let i = 0; i < 30; i++) {
    el.scrollTop = Math.random() * el.scrollHeight;
    await new Promise((resolve) => requestAnimationFrame(() => resolve()));
  }
  await new Promise((resolve) => setTimeout(resolve, 200));
  observer.disconnect();
  gaps.sort((a, b) => a - b);
  return { frames: gaps.length, p95FrameMs: gaps[Math.floor(gaps.length * 0.95)], maxFrameMs: gaps.at(-1), longTasks: long.length, longestTaskMs: long.length ? Math.max(...long) : 0, cardsInPage: document.querySelectorAll(row).length };
}, [SCROLLER, ROW]);

const first = paints[0];
paints.sort((a, b) => a - b);
const firstCpu = cpu[0];
cpu.sort((a, b) => a - b);
const folds = await page.evaluate(() => performance.getEntriesByName("tooltrail:fold-conversation").map((e) => Math.round(e.duration)));
console.log(
  JSON.stringify(
    {
      calls: COUNT,
      view: WATERFALL ? "waterfall" : "list",
      foldMs: folds,
      paintMs: { first: Math.round(first), median: Math.round(paints[2]), all: paints.map(Math.round) },
      paintCpuMs: { first: Math.round(firstCpu), median: Math.round(cpu[2]), all: cpu.map(Math.round) },
      scroll,
    },
    null,
    2,
  ),
);
await context.close();
await browser.close();
