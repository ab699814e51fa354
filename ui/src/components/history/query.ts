// What the history and stats screens ask for, and the figures and words they show: pure
// functions, so the rules are tested without a window.
import type { CallStatus, HistoryQuery, RuleView, StatsQuery, StatusCounts } from "../../api";
import type { ApprovalRecord } from "../../bindings";
import type { Translate } from "../../i18n";

/** How long typing pauses before a search goes out. */
export const SEARCH_DELAY_MS = 250;

/** The history screen's filters as the user set them. */
export interface HistoryFilters {
  allWorkspaces: boolean;
  tool: string | null;
  status: CallStatus | null;
  /** A day as the date input gives it ("2024-05-03"), or "". */
  from: string;
  /** The last day included, or "". */
  to: string;
  search: string;
}

export const NO_FILTERS: HistoryFilters = { allWorkspaces: false, tool: null, status: null, from: "", to: "", search: "" };

/** Rows per page of the history list. */
export const PAGE_SIZE = 200;

/** Local midnight at the start of `day` ("YYYY-MM-DD"), or null when it is not a day. */
export function dayStart(day: string): number | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!match) return null;
  const date = new Date(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  return Number.isNaN(date.getTime()) ? null : date.getTime();
}

/** Local midnight after `day`: the first moment not in it. */
export function dayEnd(day: string): number | null {
  const start = dayStart(day);
  if (start === null) return null;
  const date = new Date(start);
  date.setDate(date.getDate() + 1);
  return date.getTime();
}

/**
 * The search words to send, or null when there is nothing to search for: the store looks for
 * words, so text of punctuation alone would match nothing.
 */
export function searchWords(text: string): string | null {
  const words = text.trim().split(/\s+/).filter((word) => /[\p{L}\p{N}]/u.test(word));
  return words.length > 0 ? words.join(" ") : null;
}

/** The filters as the store's query (without paging). */
export function historyQuery(filters: HistoryFilters): HistoryQuery {
  return {
    all_workspaces: filters.allWorkspaces,
    tool: filters.tool,
    status: filters.status,
    since: dayStart(filters.from),
    until: dayEnd(filters.to),
    search: searchWords(filters.search),
  };
}

/** One page of the filtered calls: the first, or the one after `before`. */
export function pageQuery(filters: HistoryFilters, before: string | null, limit = PAGE_SIZE): HistoryQuery {
  return { ...historyQuery(filters), limit, before };
}

/** The counts shown beside the list: the same folders and days, every tool and status. */
export function countsQuery(filters: HistoryFilters): StatsQuery {
  return { all_workspaces: filters.allWorkspaces, since: dayStart(filters.from), until: dayEnd(filters.to) };
}

export function hasFilters(filters: HistoryFilters): boolean {
  return filters.tool !== null || filters.status !== null || filters.from !== "" || filters.to !== "" || searchWords(filters.search) !== null;
}

export type StatsRange = "day" | "week" | "month" | "all";
export const STATS_RANGES: readonly StatsRange[] = ["day", "week", "month", "all"];
const RANGE_MS: Record<StatsRange, number | null> = { day: 86_400_000, week: 7 * 86_400_000, month: 30 * 86_400_000, all: null };

export function statsQuery(allWorkspaces: boolean, range: StatsRange, now: number): StatsQuery {
  const span = RANGE_MS[range];
  return { all_workspaces: allWorkspaces, since: span === null ? null : now - span, until: null };
}

/** Calls that ended, whatever the outcome. */
export function finished(statuses: StatusCounts): number {
  return statuses.success + statuses.error + statuses.denied + statuses.cancelled + statuses.timeout;
}

/** Succeeded calls as a share of finished ones, 0 to 1; null when none finished. */
export function successRate(statuses: StatusCounts): number | null {
  const done = finished(statuses);
  return done === 0 ? null : statuses.success / done;
}

/** Calls that failed: errors and time-outs. */
export function failures(statuses: StatusCounts): number {
  return statuses.error + statuses.timeout;
}

/** "97%", "99.5%", "—": whole percents unless that would round a failure away. */
export function formatRate(rate: number | null): string {
  if (rate === null) return "—";
  const percent = rate * 100;
  if (percent > 99 && percent < 100) return `${Math.floor(percent * 10) / 10}%`;
  if (percent > 0 && percent < 1) return "<1%";
  return `${Math.round(percent)}%`;
}

/**
 * The average over several tools, weighting each tool's average by its finished calls (the
 * calls that have a duration).
 */
export function weightedAverage(tools: { avg_ms: number | null; statuses: StatusCounts }[]): number | null {
  let sum = 0;
  let count = 0;
  for (const tool of tools) {
    if (tool.avg_ms === null) continue;
    const n = finished(tool.statuses);
    sum += tool.avg_ms * n;
    count += n;
  }
  return count === 0 ? null : sum / count;
}

/** A rule as one line: "deny git push". */
export function ruleText(t: Translate, rule: RuleView): string {
  return `${t(rule.kind === "allow" ? "ruleAllow" : "ruleDeny")} ${rule.command}`;
}

export interface Decision {
  /** Whether the call was let through. */
  allowed: boolean;
  text: string;
  /** Why it asked, or the reason the model was given. */
  note: string | null;
}

/** Who or what let a call run or refused it, in words. */
export function decisionText(t: Translate, approval: ApprovalRecord, rule: RuleView | null = null): Decision {
  const { allowed, reason } = approval;
  const why = reason?.trim() || null;
  let text: string;
  let note: string | null = null;
  switch (approval.by.kind) {
    case "policy":
      if (allowed) text = t("decisionPolicy");
      else text = why ? t("decisionPolicyRefusedWith", { reason: why }) : t("decisionPolicyRefused");
      break;
    case "user":
      text = t(allowed ? "decisionUser" : "decisionUserRefused");
      if (why) note = t(allowed ? "decisionWhyAsked" : "decisionToldModel", { reason: why });
      break;
    case "conversation":
      text = t(allowed ? "decisionConversation" : "decisionConversationRefused");
      if (why) note = t(allowed ? "decisionWhyAsked" : "decisionToldModel", { reason: why });
      break;
    case "rule":
      if (rule) text = t(allowed ? "decisionRule" : "decisionRuleRefused", { rule: ruleText(t, rule) });
      else text = t(allowed ? "decisionSomeRule" : "decisionSomeRuleRefused");
      break;
    case "setting":
      if (allowed) text = why ? t("decisionSettingWith", { reason: why }) : t("decisionSetting");
      else text = why ? t("decisionSettingRefusedWith", { reason: why }) : t("decisionSettingRefused");
      break;
    case "replay":
      text = t(allowed ? "decisionReplay" : "decisionReplayRefused");
      break;
    default:
      text = t(allowed ? "decisionUser" : "decisionUserRefused");
  }
  return { allowed, text, note };
}

/** How many calls match, when the counts can say: they know tool × status, not words. */
export function matchingCount(filters: HistoryFilters, counts: { total: number; statuses: StatusCounts; tools: { tool: string; calls: number; statuses: StatusCounts }[] } | null): number | null {
  if (!counts || searchWords(filters.search) !== null) return null;
  if (filters.tool !== null) {
    const tool = counts.tools.find((entry) => entry.tool === filters.tool);
    if (!tool) return 0;
    return filters.status !== null ? tool.statuses[filters.status] : tool.calls;
  }
  return filters.status !== null ? counts.statuses[filters.status] : counts.total;
}

/** 90,000: counts with the window language's digit groups. */
export function formatCount(count: number, lang: string): string {
  const locale = lang === "zh" ? "zh-CN" : "en-US";
  let format = numberFormats.get(locale);
  if (!format) {
    format = new Intl.NumberFormat(locale);
    numberFormats.set(locale, format);
  }
  return format.format(count);
}
const numberFormats = new Map<string, Intl.NumberFormat>();

/** "14:05:09" today, "3 May 14:05" before; in the window's language. */
export function formatWhen(ms: number, lang: string, now = Date.now()): string {
  const locale = lang === "zh" ? "zh-CN" : "en-GB";
  const date = new Date(ms);
  const today = new Date(now);
  const sameDay = date.getFullYear() === today.getFullYear() && date.getMonth() === today.getMonth() && date.getDate() === today.getDate();
  if (sameDay) return timeFormat(locale).format(date);
  return (date.getFullYear() === today.getFullYear() ? dayFormat(locale) : yearFormat(locale)).format(date);
}

/** "14:05:09", the time of day alone: a timeline card's start, with the date on hover. */
export function formatClock(ms: number, lang: string): string {
  return timeFormat(lang === "zh" ? "zh-CN" : "en-GB").format(new Date(ms));
}

/** The full date and time, for the detail. */
export function formatFull(ms: number, lang: string): string {
  return fullFormat(lang === "zh" ? "zh-CN" : "en-GB").format(new Date(ms));
}

// Formatters are slow to make and a list draws many rows: one per locale.
const formats = new Map<string, Intl.DateTimeFormat>();
function cached(key: string, make: () => Intl.DateTimeFormat): Intl.DateTimeFormat {
  let format = formats.get(key);
  if (!format) {
    format = make();
    formats.set(key, format);
  }
  return format;
}
const timeFormat = (locale: string) => cached(`t${locale}`, () => new Intl.DateTimeFormat(locale, { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false }));
const dayFormat = (locale: string) => cached(`d${locale}`, () => new Intl.DateTimeFormat(locale, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", hour12: false }));
const yearFormat = (locale: string) => cached(`y${locale}`, () => new Intl.DateTimeFormat(locale, { year: "numeric", month: "short", day: "numeric" }));
const fullFormat = (locale: string) => cached(`f${locale}`, () => new Intl.DateTimeFormat(locale, { dateStyle: "medium", timeStyle: "medium", hour12: false }));
