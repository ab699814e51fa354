// Timestamps for the latency benchmark: how long a streamed piece of text took from the moment
// Rust stamped its event to the frame that shows it. Kept in a small ring, read by
// scripts/bench-app through the WebDriver.
const KEEP = 5000;
const latencies: number[] = [];

export function recordTextLatency(eventTimeMs: number, paintedAtMs: number) {
  if (latencies.length >= KEEP) latencies.shift();
  latencies.push(paintedAtMs - eventTimeMs);
}

declare global {
  interface Window {
    __tooltrailPerf?: { textLatencies: number[] };
  }
}

if (typeof window !== "undefined") {
  window.__tooltrailPerf = { textLatencies: latencies };
}
