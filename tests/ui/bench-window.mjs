// Benchmark (not a test) of the real app in a window (run under Xvfb):
//  - idle memory of all the app's processes (the app and its WebKit helpers) after it opened a
//    folder, as PSS (shared pages split between the processes that share them) and RSS;
//  - the time from a streamed piece of text reaching Rust (the event's timestamp) to the frame
//    that shows it, over a long streamed answer.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repo } from "./lib.mjs";
import { Session, sleep, startDriver, startScriptedModel } from "./webdriver.mjs";

const app = process.env.TOOLTRAIL_APP ?? join(repo, "target/release/tooltrail-app");
const scriptedModel = process.env.SCRIPTED_MODEL ?? join(repo, "target/debug/scripted-model");
const folder = join(repo, "tests/ui/fixtures/demo-project");
const configDir = mkdtempSync(join(tmpdir(), "tooltrail-bench-"));

function descendants(root) {
  const parent = new Map();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone
    }
  }
  const out = [root];
  for (let i = 0; i < out.length; i++) for (const [pid, ppid] of parent) if (ppid === out[i]) out.push(pid);
  return out;
}

function memory(pids) {
  let pss = 0;
  let rss = 0;
  const names = [];
  for (const pid of pids) {
    try {
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
      pss += Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
      rss += Number(/^Rss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
      names.push(readFileSync(`/proc/${pid}/comm`, "utf8").trim());
    } catch {
      // gone
    }
  }
  return { pssMiB: +(pss / 1024).toFixed(1), rssMiB: +(rss / 1024).toFixed(1), processes: names };
}

// 1. Idle memory: the app alone (no WebDriver), 15 s after it opened the folder.
const env = { ...process.env, TOOLTRAIL_CONFIG_DIR: configDir, TOOLTRAIL_DATA_DIR: join(configDir, "data") };
const child = spawn(app, [folder], { env, stdio: "ignore" });
await sleep(15_000);
const idle = memory(descendants(child.pid));
child.kill();
await sleep(500);

// 2. Latency: a long answer streamed in 400 small pieces, 15 ms apart.
const pieces = Array.from({ length: 400 }, (_, i) => ({ choices: [{ index: 0, delta: { content: i % 40 === 39 ? `word${i}\n\n` : `word${i} ` } }] }));
pieces.push({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] });
const script = join(configDir, "stream.json");
writeFileSync(script, JSON.stringify([{ sse: pieces, delay_ms: 15 }]));
const model = await startScriptedModel(scriptedModel, script);
const driver = await startDriver({ ...env, TAURI_WEBVIEW_AUTOMATION: "true", TOOLTRAIL_BASE_URL: model.url, TOOLTRAIL_MODEL: "scripted" });
let latency;
try {
  const session = await Session.start(driver.base, app, [folder]);
  const box = await session.waitFor(".composer textarea");
  await session.type(box, "Stream a long answer");
  await session.type(box, "\uE007");
  await session.until("the streamed answer", async () => (await session.text(await session.find('[data-testid="chat"]'))).includes("word399"), 60_000);
  await sleep(500);
  const samples = await session.script("return window.__tooltrailPerf.textLatencies.slice()");
  samples.sort((a, b) => a - b);
  const at = (q) => samples[Math.min(samples.length - 1, Math.floor(samples.length * q))];
  latency = { samples: samples.length, p50Ms: at(0.5), p95Ms: at(0.95), p99Ms: at(0.99), maxMs: samples.at(-1) };
  await session.end();
} finally {
  driver.child.kill();
  model.child.kill();
}

console.log(JSON.stringify({ app, idleMemory: idle, streamLatency: latency }, null, 2));
