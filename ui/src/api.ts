// The app's commands, typed. Protocol types come from ./bindings (generated from Rust); the
// small payloads of the shell's own commands are described here.
import { Channel, invoke } from "@tauri-apps/api/core";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import type { ApprovalRecord, ApprovalReply, Event, ToolError, ToolSource } from "./bindings";

export interface EndpointInfo {
  base_url: string;
  model: string | null;
  api_key_set: boolean;
  config_path: string;
  problem: string | null;
  /** Set when the active provider's key could not be read from the keychain. */
  key_problem?: string | null;
}

export interface AppInfo {
  version: string;
  endpoint: EndpointInfo;
}

export interface WorkspaceInfo {
  path: string;
  name: string;
  watched: boolean;
}

export interface RecentWorkspace {
  path: string;
  name: string;
  opened_ms: number;
}

export interface ConversationSummary {
  id: string;
  title: string;
  workspace: string;
  updated_ms: number;
  turns: number;
  running: boolean;
}

export interface LoadedConversation {
  events: Event[];
}

export interface FilesChanged {
  workspace: string;
  paths: string[];
  count: number;
}

/** One MCP server of mcp.json, as the sidebar shows it. */
export interface McpServerView {
  name: string;
  state: "idle" | "running" | "failed" | "disabled" | "stopped";
  tools: number;
  error?: string;
  stderr?: string[];
}

export interface McpOverview {
  servers: McpServerView[];
  /** Set when mcp.json exists but cannot be used. */
  problem?: string;
}

// ---- History, stats and conversations ----

export type CallStatus = "running" | "success" | "error" | "denied" | "cancelled" | "timeout";
export const CALL_STATUSES: readonly CallStatus[] = ["running", "success", "error", "denied", "cancelled", "timeout"];

/** Which recorded calls to list. Without `all_workspaces`, only the open folder's. */
export interface HistoryQuery {
  all_workspaces?: boolean;
  tool?: string | null;
  status?: CallStatus | null;
  /** Calls started at or after this time (ms since the epoch). */
  since?: number | null;
  /** Calls started before this time. */
  until?: number | null;
  /** Words that must all occur in the tool, arguments, result or error; `word*` for a prefix. */
  search?: string | null;
  /** Rows per page (default 50, at most 1000). */
  limit?: number;
  /** The `next` of the previous page. */
  before?: string | null;
}

/** One recorded tool call, without its full result. */
export interface HistoryRow {
  id: string;
  conversation_id: string;
  turn_id: string;
  workspace: string | null;
  /** The id the model gave the call (the id the chat and timeline use). */
  call_id: string;
  round: number;
  tool: string;
  source: ToolSource;
  description: string;
  arguments: unknown;
  started_ms: number;
  duration_ms: number | null;
  status: CallStatus;
  error?: ToolError;
  result_preview: string;
  result_size: number;
  truncated_for_model: boolean;
  approval: ApprovalRecord;
}

export interface HistoryPage {
  items: HistoryRow[];
  /** Pass as `before` for the next page; null on the last. */
  next: string | null;
}

export interface StatusCounts {
  running: number;
  success: number;
  error: number;
  denied: number;
  cancelled: number;
  timeout: number;
}

export interface ToolStats {
  tool: string;
  calls: number;
  statuses: StatusCounts;
  avg_ms: number | null;
  p95_ms: number | null;
}

/** Figures per tool, most-called first. */
export interface Stats {
  total: number;
  statuses: StatusCounts;
  tools: ToolStats[];
}

export interface StatsQuery {
  all_workspaces?: boolean;
  since?: number | null;
  until?: number | null;
}

/** A standing approval rule of a folder. */
export interface RuleView {
  id: string;
  workspace: string;
  kind: "allow" | "deny";
  tool: string;
  /** The command's first words. */
  prefix: string[];
  /** The prefix as one line, quoted where needed. */
  command: string;
  created_ms: number;
  revoked_ms: number | null;
}

/** One call with its full result and, when a stored rule let it run or refused it, that rule. */
export interface ToolCallDetail extends HistoryRow {
  result: string;
  data?: unknown;
  rule: RuleView | null;
}

export type ExportFormat = "jsonl" | "markdown";

export interface ExportResult {
  path: string;
  count: number;
}

/** A message of a past conversation that matched a search. */
export interface MessageHitView {
  conversation_id: string;
  conversation_title: string;
  /** The message's place in its conversation, from 0. */
  position: number;
  time_ms: number;
  role: "system" | "user" | "assistant" | "tool";
  /** A short piece of the message around the match. */
  snippet: string;
}

// ---- Settings ----

export interface ProviderView {
  id: string;
  name: string;
  base_url: string;
  /** null: the endpoint's first model. */
  model: string | null;
  /** Whether an API key for it is in the OS keychain. */
  key_stored: boolean;
  /** Whether questions go to it. */
  active: boolean;
}

export interface ProviderInput {
  /** Absent for a new provider. */
  id?: string | null;
  name: string;
  base_url: string;
  model?: string | null;
  /** null or absent: keep the stored key; "": remove it; otherwise the new key. */
  api_key?: string | null;
}

export interface Limits {
  /** Tool rounds per question. */
  max_rounds: number;
  /** Largest tool result the model gets, in bytes. */
  max_result_bytes: number;
  /** Longest wait for the model's next byte, in seconds. */
  request_timeout_secs: number;
  /** Default time limit of a shell command, in seconds (at most 120). */
  command_timeout_secs: number;
}

export interface ToolToggle {
  name: string;
  description: string;
  enabled: boolean;
}

export interface KeychainStatus {
  available: boolean;
  /** Why it is not, in a sentence. */
  message: string | null;
}

export interface AppSettings {
  providers: ProviderView[];
  limits: Limits;
  /** The built-in tools. */
  tools: ToolToggle[];
  config_path: string;
  /** Where questions go now, after the environment variables are applied. */
  endpoint: EndpointInfo;
  keychain: KeychainStatus;
}

export interface ConnectionTest {
  ok: boolean;
  /** The models the endpoint lists. */
  models: string[];
  /** What failed, in a sentence. */
  message: string | null;
}

export interface SandboxStatus {
  enforced: boolean;
  /** One line, e.g. "enforced (Landlock ABI 7 and seccomp)". */
  summary: string;
  details: string[];
}

export type McpApproval = "allow" | "ask" | "never";

/** One server of mcp.json, as the settings page edits it. Either `command` or `url` is set. */
export interface McpServerConfig {
  name: string;
  command: string | null;
  args: string[];
  url: string | null;
  env: Record<string, string>;
  cwd: string | null;
  approval: McpApproval;
  /** Per-tool approval, overriding `approval`. */
  tools: Record<string, McpApproval>;
  disabled: boolean;
  timeout_secs: number;
}

export interface McpConfigView {
  path: string;
  servers: McpServerConfig[];
  /** Set when the file exists but cannot be used; saving is refused until it is fixed. */
  problem: string | null;
}

/** What every command rejects with. */
export interface CommandError {
  code: string;
  message: string;
}

export function errorMessage(error: unknown): string {
  if (typeof error === "string") return error;
  if (error && typeof error === "object" && "message" in error) {
    return String((error as CommandError).message);
  }
  return String(error);
}

export const api = {
  appInfo: () => invoke<AppInfo>("app_info"),
  /** Opens `path`, or asks with the native folder dialog; null when the dialog was closed. */
  openWorkspace: (path?: string) => invoke<WorkspaceInfo | null>("open_workspace", { path: path ?? null }),
  currentWorkspace: () => invoke<WorkspaceInfo | null>("current_workspace"),
  recentWorkspaces: () => invoke<RecentWorkspace[]>("recent_workspaces"),
  /** Starts a turn; resolves with the conversation id at once, events follow on `onEvent`. */
  sendMessage: (conversationId: string | null, text: string, onEvent: (event: Event) => void) => {
    const channel = new Channel<Event>(onEvent);
    return invoke<string>("send_message", { conversationId, text, onEvent: channel });
  },
  cancelTurn: (conversationId: string) => invoke<boolean>("cancel_turn", { conversationId }),
  answerApproval: (callId: string, reply: ApprovalReply) => invoke<void>("answer_approval", { callId, reply }),
  listConversations: () => invoke<ConversationSummary[]>("list_conversations"),
  loadConversation: (conversationId: string) => invoke<LoadedConversation>("load_conversation", { conversationId }),
  mcpServers: () => invoke<McpOverview>("mcp_servers"),
  /** The open folder's MCP servers started or failed: ask `mcpServers` again. */
  onMcpChanged: (handler: () => void): Promise<UnlistenFn> => listen("mcp-changed", () => handler()),
  onFilesChanged: (handler: (change: FilesChanged) => void): Promise<UnlistenFn> =>
    listen<FilesChanged>("files-changed", (event) => handler(event.payload)),

  // History, stats and conversations
  historyCalls: (query: HistoryQuery) => invoke<HistoryPage>("history_calls", { query }),
  historyStats: (query: StatsQuery) => invoke<Stats>("history_stats", { query }),
  toolCall: (id: string) => invoke<ToolCallDetail>("tool_call", { id }),
  /** Writes the filtered calls to `path`, or where the native save dialog says; null when it was closed. */
  exportHistory: (query: HistoryQuery, format: ExportFormat, path?: string) =>
    invoke<ExportResult | null>("export_history", { query, format, path: path ?? null }),
  renameConversation: (conversationId: string, title: string) => invoke<void>("rename_conversation", { conversationId, title }),
  deleteConversation: (conversationId: string) => invoke<void>("delete_conversation", { conversationId }),
  /** Messages of the open folder's conversations matching `text`, newest first. */
  searchMessages: (text: string) => invoke<MessageHitView[]>("search_messages", { text }),

  // Approval rules of the open folder
  listRules: () => invoke<RuleView[]>("list_rules"),
  /** `command` is the command's first words, e.g. "cargo test". */
  addRule: (kind: "allow" | "deny", command: string) => invoke<RuleView>("add_rule", { kind, command }),
  revokeRule: (id: string) => invoke<RuleView>("revoke_rule", { id }),

  // Settings
  getSettings: () => invoke<AppSettings>("get_settings"),
  saveProvider: (provider: ProviderInput, activate: boolean) => invoke<ProviderView>("save_provider", { provider, activate }),
  deleteProvider: (id: string) => invoke<void>("delete_provider", { id }),
  activateProvider: (id: string) => invoke<void>("activate_provider", { id }),
  /** Lists the endpoint's models; uses the stored key of `provider.id` unless `api_key` is given. */
  testConnection: (provider: ProviderInput) => invoke<ConnectionTest>("test_connection", { provider }),
  saveLimits: (limits: Limits) => invoke<Limits>("save_limits", { limits }),
  setToolEnabled: (name: string, enabled: boolean) => invoke<void>("set_tool_enabled", { name, enabled }),
  sandboxStatus: () => invoke<SandboxStatus>("sandbox_status"),
  mcpConfig: () => invoke<McpConfigView>("mcp_config"),
  /** Adds a server, or replaces `previousName` (which may differ when renamed). */
  saveMcpServer: (previousName: string | null, server: McpServerConfig) => invoke<void>("save_mcp_server", { previousName, server }),
  removeMcpServer: (name: string) => invoke<void>("remove_mcp_server", { name }),
};
