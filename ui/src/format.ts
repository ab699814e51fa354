// Short texts for cards: what a call was about, and how long it took.
import type { JsonValue } from "./bindings";

const KEYS_BY_PRIORITY = ["command", "path", "pattern", "query", "url", "name"];

/** A one-line summary of a call's arguments: the main value first, then the others. */
export function summarizeArguments(args: JsonValue | undefined, fallbackText = ""): string {
  if (args === undefined || args === null) return oneLine(fallbackText);
  if (typeof args !== "object" || Array.isArray(args)) return oneLine(JSON.stringify(args));
  const entries = Object.entries(args).filter(([, v]) => v !== undefined && v !== null);
  entries.sort(([a], [b]) => rank(a) - rank(b));
  const parts = entries.map(([key, value], i) => {
    const text = typeof value === "string" ? value : JSON.stringify(value);
    return i === 0 && rank(key) < KEYS_BY_PRIORITY.length ? text : `${key}=${text}`;
  });
  return oneLine(parts.join(" · "));
}

function rank(key: string): number {
  const at = KEYS_BY_PRIORITY.indexOf(key);
  return at < 0 ? KEYS_BY_PRIORITY.length : at;
}

function oneLine(text: string, max = 120): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** 850 ms, 1.2 s, 2 min 5 s. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  if (ms >= 3_600_000) return `${Math.floor(ms / 3_600_000)} h ${Math.round((ms % 3_600_000) / 60_000)} min`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  return `${minutes} min ${seconds} s`;
}
