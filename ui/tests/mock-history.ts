// The mocked history, stats and conversation-management commands (see mock-backend.ts). They
// answer from the config object and change it (renames, deletions), so a test can read the
// state back from `window.__mock.config`.
import type {
  CallStatus,
  CommandError,
  ConversationSummary,
  DayTokens,
  ExportFormat,
  HistoryQuery,
  HistoryRow,
  MessageHitView,
  ReplayComparison,
  ReplayTableView,
  RuleView,
  Stats,
  StatsQuery,
  StatusCounts,
  TokensQuery,
  ToolStats,
} from "../src/api";

/** The start state of these commands; tests set it through `window.__mockConfig`. */
export interface HistoryConfig {
  /** Recorded calls, newest first. */
  history?: HistoryRow[];
  /** Rows made up on demand after `history`, one every 45 s going back: a cheap huge record. */
  historyGenerated?: number;
  /** When the first generated row started (ms); an hour ago when absent. */
  historyGeneratedFrom?: number;
  /** Full results by call id, for tool_call; the preview when absent. */
  historyResults?: Record<string, string>;
  /** How long history_calls and history_stats take, in ms (default 0). */
  historyDelayMs?: number;
  /** When set, history_calls fails with it. */
  historyError?: CommandError | null;
  /** Where export_history writes when no path is given; null means the dialog was closed. */
  exportPath?: string | null;
  /** When set, export_history fails with it. */
  exportError?: CommandError | null;
  /** The open folder's messages that search_messages finds among (by their snippet). */
  messages?: MessageHitView[];
  /** What history_tokens answers: tokens per day and model, oldest first. */
  tokens?: DayTokens[];
  /** Recorded replays by their turn id, for replay_comparison. */
  replayComparisons?: Record<string, ReplayComparison>;
  /** What replay_table answers. */
  replayTable?: ReplayTableView;
  /** Where save_replay_table writes when no path is given; null means the dialog was closed. */
  replaySavePath?: string | null;
}

/** What the shared config holds that these commands read (declared in the other modules). */
interface Shared {
  workspace?: unknown;
  conversations?: unknown[];
  loaded?: Record<string, unknown>;
  rules?: RuleView[];
}

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 1000;
const STATUSES: CallStatus[] = ["running", "success", "error", "denied", "cancelled", "timeout"];

function reject(code: string, message: string): Promise<never> {
  return Promise.reject({ code, message });
}

function later<T>(config: HistoryConfig, value: T): T | Promise<T> {
  const delay = config.historyDelayMs ?? 0;
  return delay > 0 ? new Promise((resolve) => setTimeout(() => resolve(value), delay)) : value;
}

function openFolder(config: Shared): string | null {
  const workspace = config.workspace as { path?: string } | null | undefined;
  return workspace?.path ?? null;
}

// ---- The record: given rows, then generated ones ----

const GENERATED_TOOLS = ["read_file", "search_text", "execute_bash", "list_dir", "count_lines", "search_files", "fs__read_text_file"];
const generatedCache = new Map<number, HistoryRow>();
let generatedFor = "";

function generatedStatus(j: number): CallStatus {
  if (j % 211 === 7) return "timeout";
  if (j % 97 === 5) return "denied";
  if (j % 53 === 3) return "error";
  if (j % 401 === 11) return "cancelled";
  return "success";
}

function generatedRow(j: number, config: HistoryConfig & Shared): HistoryRow {
  config.historyGeneratedFrom ??= Date.now() - 3_600_000;
  const from = config.historyGeneratedFrom;
  const folder = openFolder(config) ?? "/home/me/demo";
  // The cache is only good for one start time and folder.
  const stamp = `${from}|${folder}`;
  if (stamp !== generatedFor) {
    generatedCache.clear();
    generatedFor = stamp;
  }
  const cached = generatedCache.get(j);
  if (cached) return cached;
  const tool = GENERATED_TOOLS[(j * 7 + (j >> 3)) % GENERATED_TOOLS.length]!;
  const status = generatedStatus(j);
  const args: Record<string, unknown> =
    tool === "execute_bash"
      ? { command: `cargo test -p crate_${j % 20}` }
      : tool === "search_text"
        ? { pattern: `fn item_${j % 50}`, glob: "*.rs" }
        : tool === "list_dir" || tool === "count_lines"
          ? { path: `src/module_${j % 40}` }
          : { path: `src/module_${j % 300}.rs` };
  const row: HistoryRow = {
    id: `tc_g${j}`,
    conversation_id: `conv_g${j % 40}`,
    turn_id: `turn_g${Math.floor(j / 5)}`,
    workspace: j % 10 === 9 ? "/home/me/other" : folder,
    call_id: `call_g${j}`,
    round: (j % 4) + 1,
    tool,
    source: tool.includes("__") ? { kind: "mcp", server: tool.split("__")[0]! } : { kind: "builtin" },
    description: "",
    arguments: args,
    started_ms: from - j * 45_000,
    duration_ms: status === "denied" ? 0 : ((j * 7919) % 900) + 3,
    status,
    ...(status === "error" ? { error: { code: "not_found", message: `src/module_${j % 300}.rs does not exist` } } : {}),
    ...(status === "timeout" ? { error: { code: "timeout", message: "the command ran longer than 30 s" } } : {}),
    result_preview: status === "success" ? `result of call ${j}` : "",
    result_size: status === "success" ? 16 : 0,
    truncated_for_model: false,
    approval:
      tool === "execute_bash"
        ? { allowed: status !== "denied", by: { kind: "user" }, reason: "it runs a command" }
        : { allowed: true, by: { kind: "policy" } },
  } as HistoryRow;
  generatedCache.set(j, row);
  return row;
}

function total(config: HistoryConfig): number {
  return (config.history?.length ?? 0) + (config.historyGenerated ?? 0);
}

function rowAt(i: number, config: HistoryConfig & Shared): HistoryRow {
  const given = config.history ?? [];
  return i < given.length ? given[i]! : generatedRow(i - given.length, config);
}

// ---- Filters ----

interface Filter {
  workspace: string | null;
  tool?: string | null;
  status?: CallStatus | null;
  since?: number | null;
  until?: number | null;
  words: string[];
}

function words(text: string | null | undefined): string[] {
  return (text ?? "")
    .toLowerCase()
    .split(/\s+/)
    .map((word) => word.replace(/\*$/, ""))
    .filter((word) => /[\p{L}\p{N}]/u.test(word));
}

function filterOf(query: HistoryQuery | StatsQuery, config: Shared): Filter {
  const history = query as HistoryQuery;
  return {
    workspace: query.all_workspaces ? null : openFolder(config),
    tool: history.tool || null,
    status: history.status ?? null,
    since: query.since ?? null,
    until: query.until ?? null,
    words: words(history.search),
  };
}

function matches(row: HistoryRow, filter: Filter): boolean {
  if (filter.workspace !== null && row.workspace !== filter.workspace) return false;
  if (filter.tool && row.tool !== filter.tool) return false;
  if (filter.status && row.status !== filter.status) return false;
  if (filter.since != null && row.started_ms < filter.since) return false;
  if (filter.until != null && row.started_ms >= filter.until) return false;
  if (filter.words.length > 0) {
    const text = `${row.tool} ${JSON.stringify(row.arguments)} ${row.result_preview} ${row.error?.code ?? ""} ${row.error?.message ?? ""}`.toLowerCase();
    if (!filter.words.every((word) => text.includes(word))) return false;
  }
  return true;
}

function historyCalls(query: HistoryQuery, config: HistoryConfig & Shared) {
  if (config.historyError) return Promise.reject(config.historyError);
  if (query.search != null && query.search.trim() !== "" && words(query.search).length === 0) {
    return reject("bad_input", "The search has no words to look for.");
  }
  let start = 0;
  if (query.before != null) {
    const match = /^c(\d+)$/.exec(query.before);
    if (!match) return reject("bad_input", `"${query.before}" is not a page cursor.`);
    start = Number(match[1]);
  }
  const limit = Math.min(MAX_LIMIT, query.limit && query.limit > 0 ? query.limit : DEFAULT_LIMIT);
  const filter = filterOf(query, config);
  const items: HistoryRow[] = [];
  const count = total(config);
  let i = start;
  for (; i < count && items.length < limit; i++) {
    const row = rowAt(i, config);
    if (matches(row, filter)) items.push(row);
  }
  // Like the store: a full page says there may be more.
  const next = items.length === limit && i < count ? `c${i}` : null;
  return later(config, { items, next });
}

function historyTokens(query: TokensQuery, config: HistoryConfig): DayTokens[] | Promise<DayTokens[]> {
  const days = (config.tokens ?? []).filter((day) => (query.since == null || day.day_start_ms >= query.since) && (query.until == null || day.day_start_ms < query.until));
  return later(config, days);
}

function emptyCounts(): StatusCounts {
  return { running: 0, success: 0, error: 0, denied: 0, cancelled: 0, timeout: 0 };
}

function historyStats(query: StatsQuery, config: HistoryConfig & Shared): Stats | Promise<Stats> {
  const filter = filterOf(query, config);
  const statuses = emptyCounts();
  const perTool = new Map<string, { calls: number; statuses: StatusCounts; durations: number[] }>();
  const count = total(config);
  for (let i = 0; i < count; i++) {
    const row = rowAt(i, config);
    if (!matches(row, filter)) continue;
    statuses[row.status]++;
    let tool = perTool.get(row.tool);
    if (!tool) {
      tool = { calls: 0, statuses: emptyCounts(), durations: [] };
      perTool.set(row.tool, tool);
    }
    tool.calls++;
    tool.statuses[row.status]++;
    if (row.duration_ms !== null) tool.durations.push(row.duration_ms);
  }
  const tools: ToolStats[] = [...perTool].map(([name, tool]) => {
    const sorted = tool.durations.sort((a, b) => a - b);
    const avg = sorted.length ? sorted.reduce((sum, d) => sum + d, 0) / sorted.length : null;
    const p95 = sorted.length ? sorted[Math.max(0, Math.ceil(sorted.length * 0.95) - 1)]! : null;
    return { tool: name, calls: tool.calls, statuses: tool.statuses, avg_ms: avg, p95_ms: p95 };
  });
  tools.sort((a, b) => b.calls - a.calls || a.tool.localeCompare(b.tool));
  const sum = STATUSES.reduce((n, status) => n + statuses[status], 0);
  return later(config, { total: sum, statuses, tools });
}

function findRow(id: string, config: HistoryConfig & Shared): HistoryRow | null {
  const given = config.history?.find((row) => row.id === id);
  if (given) return given;
  const match = /^tc_g(\d+)$/.exec(id);
  if (match && Number(match[1]) < (config.historyGenerated ?? 0)) return generatedRow(Number(match[1]), config);
  return null;
}

function toolCall(id: string, config: HistoryConfig & Shared) {
  const row = findRow(id, config);
  if (!row) return reject("not_found", `No tool call has the id ${id}.`);
  const by = row.approval.by;
  const rule = by.kind === "rule" ? config.rules?.find((entry) => entry.id === by.id) : undefined;
  return { ...row, result: config.historyResults?.[id] ?? row.result_preview, rule: rule ? { ...rule } : null };
}

function exportHistory(query: HistoryQuery, format: ExportFormat, path: string | null, config: HistoryConfig & Shared) {
  if (config.exportError) return Promise.reject(config.exportError);
  const target = path ?? (config.exportPath === undefined ? `/home/me/Downloads/tooltrail-history.${format === "jsonl" ? "jsonl" : "md"}` : config.exportPath);
  if (target === null) return null;
  const filter = filterOf(query, config);
  let count = 0;
  for (let i = 0; i < total(config); i++) if (matches(rowAt(i, config), filter)) count++;
  return { path: target, count };
}

// ---- Conversations ----

// The list the window holds came from list_conversations, which answers with the config's own
// array (no IPC copy in between): changes make a new array and new objects, as Rust's answers are.
function conversations(config: Shared): ConversationSummary[] {
  return (config.conversations ?? []) as ConversationSummary[];
}

function rename(id: string, title: string, config: Shared) {
  const list = conversations(config);
  if (!list.some((c) => c.id === id)) return reject("not_found", `No conversation has the id ${id}.`);
  const clean = title.split(/\s+/).filter(Boolean).join(" ");
  if (!clean) return reject("bad_input", "A conversation needs a title.");
  config.conversations = list.map((c) => (c.id === id ? { ...c, title: clean } : c));
  return null;
}

function remove(id: string, config: HistoryConfig & Shared) {
  const list = conversations(config);
  if (!list.some((c) => c.id === id)) return reject("not_found", `No conversation has the id ${id}.`);
  config.conversations = list.filter((c) => c.id !== id);
  if (config.history) config.history = config.history.filter((row) => row.conversation_id !== id);
  if (config.messages) config.messages = config.messages.filter((hit) => hit.conversation_id !== id);
  if (config.loaded) delete config.loaded[id];
  return null;
}

function searchMessages(text: string, config: HistoryConfig & Shared) {
  if (text.trim() === "") return [];
  const wanted = words(text);
  if (wanted.length === 0) return reject("bad_input", "The search has no words to look for.");
  const titles = new Map(conversations(config).map((c) => [c.id, c.title]));
  return (config.messages ?? [])
    .filter((hit) => titles.has(hit.conversation_id) && wanted.every((word) => hit.snippet.toLowerCase().includes(word)))
    .map((hit) => ({ ...hit, conversation_title: titles.get(hit.conversation_id)! }))
    .sort((a, b) => b.time_ms - a.time_ms)
    .slice(0, 30);
}

/** The answer to `cmd`, or `undefined` when `cmd` is not one of these (`null` is an answer). */
export function historyCommand(cmd: string, args: Record<string, unknown>, config: HistoryConfig): unknown {
  const state = config as HistoryConfig & Shared;
  switch (cmd) {
    case "history_calls":
      return historyCalls((args.query ?? {}) as HistoryQuery, state);
    case "history_stats":
      return historyStats((args.query ?? {}) as StatsQuery, state);
    case "history_tokens":
      return historyTokens((args.query ?? {}) as TokensQuery, state);
    case "tool_call":
      return toolCall(String(args.id), state);
    case "export_history":
      return exportHistory((args.query ?? {}) as HistoryQuery, args.format as ExportFormat, (args.path as string | null) ?? null, state);
    case "rename_conversation":
      return rename(String(args.conversationId), String(args.title ?? ""), state);
    case "delete_conversation":
      return remove(String(args.conversationId), state);
    case "search_messages":
      return searchMessages(String(args.text ?? ""), state);
    case "replay_comparison":
      return state.replayComparisons?.[String(args.turnId)] ?? null;
    case "replay_table":
      return state.replayTable ?? { rows: [], markdown: "" };
    case "save_replay_table":
      return (args.path as string | null) ?? (state.replaySavePath === undefined ? "/home/me/models-tried.json" : state.replaySavePath);
    default:
      return undefined;
  }
}
