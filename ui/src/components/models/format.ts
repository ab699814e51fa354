// Sizes, rates and windows as people say them, the way `tooltrail models` prints them.
import type { FoundModel, PullUpdate } from "../../api";
import type { Translate } from "../../i18n";

/** A size in decimal units, as disks are sold: 253 MB, 1.1 GB. */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${Math.max(0, Math.round(bytes))} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = "";
  for (const next of units) {
    value /= 1000;
    unit = next;
    if (value < 1000) break;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${unit}`;
}

/** 8,192 in English, 8,192 in Chinese too (digit groups read the same). */
export function formatTokens(tokens: number): string {
  return tokens.toLocaleString("en-US");
}

/** The window a server runs a model with, and the longest it takes. */
export function windowText(model: FoundModel, t: Translate): string {
  const { context_window: window, max_context_window: max } = model;
  if (window !== null && max !== null && window !== max) return t("guideTokensOfMax", { tokens: formatTokens(window), max: formatTokens(max) });
  if (window !== null) return t("guideTokens", { tokens: formatTokens(window) });
  if (max !== null) return t("guideUpTo", { max: formatTokens(max) });
  return t("guideUnknown");
}

/** Percent done, when the total is known. */
export function percent(update: PullUpdate): number | null {
  switch (update.phase) {
    case "downloading":
      return update.total ? Math.min(100, (update.done / update.total) * 100) : null;
    case "resuming":
      return update.total ? Math.min(100, (update.have / update.total) * 100) : null;
    case "verifying":
    case "done":
      return 100;
    case "checking":
    case "retrying":
    case "cancelled":
    case "failed":
      return null;
  }
}

/** Seconds as a time left: 42 s, 3 min 20 s, 1 h 2 min. */
export function formatSeconds(seconds: number, t: Translate): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return t("durSeconds", { s });
  if (s < 3600) return t("durMinutes", { m: Math.floor(s / 60), s: s % 60 });
  return t("durHours", { h: Math.floor(s / 3600), m: Math.floor((s % 3600) / 60) });
}

/** When an idle model stops, as `tooltrail models ps` says it: seconds under 90, else minutes. */
export function formatStopsIn(seconds: number, t: Translate): string {
  return seconds < 90 ? t("durSeconds", { s: seconds }) : t("durWholeMinutes", { m: Math.ceil(seconds / 60) });
}
