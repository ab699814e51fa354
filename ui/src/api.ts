// The app's commands, typed. Every type they take or return is generated from Rust into
// ./bindings (see src-tauri/src/bindings.rs); this file only names the commands, once each.
import { Channel, invoke } from "@tauri-apps/api/core";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import type { Attachment, AttachmentSource, JsonValue, McpContent, PromptMessageItem, ResourceUpdated, SavedFile, ViewEnd, ViewFile, ViewPlan, ViewStart } from "./bindings";
import type {
  AppInfo,
  AppSettings,
  ApprovalReply,
  CallStatus,
  CommandError,
  ConnectionTest,
  ConversationSummary,
  DayTokens,
  ElicitationAction,
  Event,
  ExportFormat,
  ExportResult,
  FilesChanged,
  ChosenServer,
  GuideView,
  Imported,
  ModelsView,
  ModelView,
  PullUpdate,
  HistoryPage,
  HistoryQuery,
  InstructionsView,
  Limits,
  LocalModelStatus,
  LoadedConversation,
  McpConfigView,
  McpOverview,
  McpServerConfig,
  MessageHitView,
  ProviderInput,
  ProviderView,
  RecentWorkspace,
  ReplayComparison,
  ReplayOutcome,
  ReplayPick,
  ReplayTableView,
  ReplayWith,
  RuleKind,
  RuleView,
  SandboxView,
  Snippet,
  SnippetSummary,
  Stats,
  StatsQuery,
  TelemetryForm,
  TelemetryView,
  TokensQuery,
  ToolCallDetail,
  TurnChanges,
  UndoReport,
  UpdateInfo,
  UpdateProgress,
  UpdateSettings,
  WorkspaceInfo,
} from "./bindings";

export type * from "./bindings";

export const CALL_STATUSES: readonly CallStatus[] = ["running", "success", "error", "denied", "cancelled", "timeout"];

export function errorMessage(error: unknown): string {
  if (typeof error === "string") return error;
  if (error && typeof error === "object" && "message" in error) {
    return String((error as CommandError).message);
  }
  return String(error);
}

/** The short code a command rejected with, when it did. */
export function errorCode(error: unknown): string | undefined {
  return error && typeof error === "object" && "code" in error ? String((error as CommandError).code) : undefined;
}

export const api = {
  appInfo: () => invoke<AppInfo>("app_info"),
  /** The first screen is built: the window, created hidden, appears with it. */
  windowReady: () => invoke<null>("window_ready"),
  /** Opens `path`, or asks with the native folder dialog; null when the dialog was closed. */
  openWorkspace: (path?: string) => invoke<WorkspaceInfo | null>("open_workspace", { path: path ?? null }),
  currentWorkspace: () => invoke<WorkspaceInfo | null>("current_workspace"),
  recentWorkspaces: () => invoke<RecentWorkspace[]>("recent_workspaces"),
  /** Starts a turn; resolves with the conversation id at once, events follow on `onEvent`. */
  sendMessage: (conversationId: string | null, text: string, onEvent: (event: Event) => void, attachments: AttachmentSource[] = []) => {
    const channel = new Channel<Event>(onEvent);
    return invoke<string>("send_message", { conversationId, text, attachments, onEvent: channel });
  },
  /** The open folder's MCP servers' resources and prompts. */
  mcpContent: () => invoke<McpContent>("mcp_content"),
  /** Files of the open folder whose path contains `query`. */
  workspaceFiles: (query: string) => invoke<string[]>("workspace_files", { query }),
  /** Reads a file or resource to attach (a resource is subscribed to where the server can). */
  readAttachment: (source: AttachmentSource) => invoke<Attachment>("read_attachment", { source }),
  /** The messages of an MCP server's prompt for `args`. */
  getMcpPrompt: (server: string, prompt: string, args: Record<string, string>) =>
    invoke<PromptMessageItem[]>("get_mcp_prompt", { server, prompt, arguments: args }),
  /** The server's suggestions for a prompt argument, as typed so far. */
  completePromptArgument: (server: string, prompt: string, argument: string, value: string, args: Record<string, string>) =>
    invoke<string[]>("complete_prompt_argument", { server, prompt, argument, value, arguments: args }),
  /** A server says an attached resource changed. */
  onResourceUpdated: (handler: (update: ResourceUpdated) => void): Promise<UnlistenFn> =>
    listen<ResourceUpdated>("resource-updated", (event) => handler(event.payload)),
  cancelTurn: (conversationId: string) => invoke<boolean>("cancel_turn", { conversationId }),
  answerApproval: (callId: string, reply: ApprovalReply) => invoke<void>("answer_approval", { callId, reply }),
  /** Answers an `ask_user` question; `null` dismisses it. */
  answerQuestion: (callId: string, answer: string | null) => invoke<void>("answer_question", { callId, answer }),
  /** Answers an MCP server's form or page; `content` holds an accepted form's values. */
  answerElicitation: (requestId: string, action: ElicitationAction, content: Record<string, unknown> | null) =>
    invoke<void>("answer_elicitation", { requestId, action, content }),
  /** Lets an MCP server use the model for its request, or not. */
  answerSampling: (requestId: string, allow: boolean) => invoke<void>("answer_sampling", { requestId, allow }),
  /** Opens the page a waiting MCP request names, in the browser. */
  openElicitationUrl: (requestId: string) => invoke<void>("open_elicitation_url", { requestId }),
  /** The turns of a conversation that wrote files, oldest first. */
  turnChanges: (conversationId: string) => invoke<TurnChanges[]>("turn_changes", { conversationId }),
  /** Puts back what a turn (or, without `turnId`, the whole conversation) wrote. */
  undoChanges: (conversationId: string, turnId: string | null, force: boolean) =>
    invoke<UndoReport>("undo_changes", { conversationId, turnId, force }),
  listConversations: () => invoke<ConversationSummary[]>("list_conversations"),
  loadConversation: (conversationId: string) => invoke<LoadedConversation>("load_conversation", { conversationId }),
  mcpServers: () => invoke<McpOverview>("mcp_servers"),
  /** Signs in to a server of the open folder through the browser; resolves when it is over. */
  mcpSignIn: (server: string) => invoke<void>("mcp_sign_in", { server }),
  /** Revokes (where the server can) and forgets the sign-in to a server of the open folder. */
  mcpSignOut: (server: string) => invoke<void>("mcp_sign_out", { server }),
  /** The open folder's MCP servers started or failed: ask `mcpServers` again. */
  onMcpChanged: (handler: () => void): Promise<UnlistenFn> => listen("mcp-changed", () => handler()),
  /** MCP tasks calls of an earlier run left open have ended and were written under their calls. */
  onTasksPickedUp: (handler: () => void): Promise<UnlistenFn> => listen("tasks-picked-up", () => handler()),
  onFilesChanged: (handler: (change: FilesChanged) => void): Promise<UnlistenFn> =>
    listen<FilesChanged>("files-changed", (event) => handler(event.payload)),

  // MCP App views: a call's view, its own loopback origin, and what it asks of the host
  /** Reads and checks the page of a call's view; rejects with a sentence when it cannot be shown. */
  prepareView: (conversationId: string, turnId: string, callId: string) => invoke<ViewPlan>("prepare_view", { conversationId, turnId, callId }),
  /** Opens the view's origin and its turn; the turn's events follow on `onEvent`. */
  startView: (viewId: string, granted: string[], onEvent: (event: Event) => void) =>
    invoke<ViewStart>("start_view", { viewId, granted, onEvent: new Channel<Event>(onEvent) }),
  /** A view's `tools/call`, approved and recorded like the model's: a CallToolResult. */
  viewCallTool: (viewId: string, name: string, args: JsonValue) => invoke<JsonValue>("view_call_tool", { viewId, name, arguments: args }),
  /** A view's `resources/read`: a ReadResourceResult. */
  viewReadResource: (viewId: string, uri: string) => invoke<JsonValue>("view_read_resource", { viewId, uri }),
  closeView: (viewId: string, reason: ViewEnd) => invoke<void>("close_view", { viewId, reason }),
  /** Opens a link a view asked for in the user's browser, once the user said yes. */
  openViewLink: (viewId: string, url: string) => invoke<void>("open_view_link", { viewId, url }),
  /** Saves a file a view asked to download, where the user chooses in the save dialog, once
   * the user said yes on the bar; null when the dialog was closed. */
  saveViewFile: (viewId: string, file: ViewFile) => invoke<SavedFile | null>("save_view_file", { viewId, file }),

  // History, stats and conversations
  historyCalls: (query: HistoryQuery) => invoke<HistoryPage>("history_calls", { query }),
  historyStats: (query: StatsQuery) => invoke<Stats>("history_stats", { query }),
  historyTokens: (query: TokensQuery) => invoke<DayTokens[]>("history_tokens", { query }),
  toolCall: (id: string) => invoke<ToolCallDetail>("tool_call", { id }),
  /** Writes the filtered calls to `path`, or where the native save dialog says; null when it was closed. */
  exportHistory: (query: HistoryQuery, format: ExportFormat, path?: string) =>
    invoke<ExportResult | null>("export_history", { query, format, path: path ?? null }),
  renameConversation: (conversationId: string, title: string) => invoke<void>("rename_conversation", { conversationId, title }),
  deleteConversation: (conversationId: string) => invoke<void>("delete_conversation", { conversationId }),
  /** Messages of the open folder's conversations matching `text`, newest first. */
  searchMessages: (text: string) => invoke<MessageHitView[]>("search_messages", { text }),

  // Replays: recorded questions asked again with another model, without side effects
  /** Replays the picked questions one after the other; their events follow on `onEvent`, `cancelTurn(runId)` stops them. */
  replayQuestions: (pick: ReplayPick, with_: ReplayWith, runId: string, onEvent: (event: Event) => void) =>
    invoke<ReplayOutcome[]>("replay_questions", { pick, with: with_, runId, onEvent: new Channel<Event>(onEvent) }),
  /** The replay `turnId` beside the question it asked again; null when that turn is not a replay. */
  replayComparison: (turnId: string) => invoke<ReplayComparison | null>("replay_comparison", { turnId }),
  /** The models tried on the open folder's questions, ranked, and as Markdown. */
  replayTable: () => invoke<ReplayTableView>("replay_table"),
  /** Saves the table as JSON to `path`, or where the native save dialog says; null when it was closed. */
  saveReplayTable: (path?: string) => invoke<string | null>("save_replay_table", { path: path ?? null }),

  // Approval rules of the open folder
  listRules: () => invoke<RuleView[]>("list_rules"),
  /** `command` is the command's first words, e.g. "cargo test". */
  addRule: (kind: RuleKind, command: string) => invoke<RuleView>("add_rule", { kind, command }),
  revokeRule: (id: string) => invoke<RuleView>("revoke_rule", { id }),

  // Snippets of the open folder
  /** By name, or best matches first for `query` (every word must occur; `word*` for a prefix). */
  listSnippets: (query: string | null) => invoke<SnippetSummary[]>("list_snippets", { query }),
  getSnippet: (name: string) => invoke<Snippet>("get_snippet", { name }),
  deleteSnippet: (name: string) => invoke<void>("delete_snippet", { name }),

  // Settings
  getSettings: () => invoke<AppSettings>("get_settings"),
  saveProvider: (provider: ProviderInput, activate: boolean) => invoke<ProviderView>("save_provider", { provider, activate }),
  deleteProvider: (id: string) => invoke<void>("delete_provider", { id }),
  activateProvider: (id: string) => invoke<void>("activate_provider", { id }),
  /** Lists the endpoint's models; uses the stored key of `provider.id` unless `api_key` is given. */
  testConnection: (provider: ProviderInput) => invoke<ConnectionTest>("test_connection", { provider }),
  /** Forgets that `model` at `baseUrl` needed prompt mode; the next question tries native tools. */
  forgetToolMode: (baseUrl: string, model: string) => invoke<void>("forget_tool_mode", { baseUrl, model }),
  saveLimits: (limits: Limits) => invoke<Limits>("save_limits", { limits }),
  setToolEnabled: (name: string, enabled: boolean) => invoke<void>("set_tool_enabled", { name, enabled }),
  sandboxStatus: () => invoke<SandboxView>("sandbox_status"),
  saveReadOnlyFolders: (folders: string[]) => invoke<SandboxView>("save_read_only_folders", { folders }),
  saveNetworkCommands: (commands: string[]) => invoke<SandboxView>("save_network_commands", { commands }),
  telemetrySettings: () => invoke<TelemetryView>("telemetry_settings"),
  saveTelemetry: (form: TelemetryForm) => invoke<TelemetryView>("save_telemetry", { form }),
  /** Sends one span and waits for the collector; the test trace's id. */
  sendTestTrace: () => invoke<string>("send_test_trace"),
  mcpConfig: () => invoke<McpConfigView>("mcp_config"),
  /** Adds a server, or replaces `previousName` (which may differ when renamed). */
  saveMcpServer: (previousName: string | null, server: McpServerConfig) => invoke<void>("save_mcp_server", { previousName, server }),
  removeMcpServer: (name: string) => invoke<void>("remove_mcp_server", { name }),

  // Models: the first-run guide and Settings → Models
  /** Whether a question can be answered now, and the model servers found on this computer. */
  modelGuide: () => invoke<GuideView>("model_guide"),
  /** Questions go to the server at `baseUrl` from now on (its first model that calls tools when `model` is null). */
  useServer: (baseUrl: string, model: string | null) => invoke<ChosenServer>("use_server", { baseUrl, model }),
  listModels: () => invoke<ModelsView>("list_models"),
  /** Starts a download in the backend; resolves with the name it installs under. Steps follow as `model-pull` events. */
  pullModel: (reference: string, useAfter: boolean) => invoke<string>("pull_model", { reference, useAfter }),
  /** Stops a download, keeping what arrived; false when none of that name was running. */
  cancelPull: (name: string) => invoke<boolean>("cancel_pull", { name }),
  /** The downloads running now, each at its latest step. */
  downloads: () => invoke<PullUpdate[]>("downloads"),
  onPull: (handler: (update: PullUpdate) => void): Promise<UnlistenFn> => listen<PullUpdate>("model-pull", (event) => handler(event.payload)),
  /** Copies a GGUF file in (`path`, or the one picked in the native dialog); null when the dialog was closed. */
  importModel: (path: string | null, useAfter: boolean) => invoke<Imported | null>("import_model", { path, useAfter }),
  removeModel: (name: string) => invoke<void>("remove_model", { name }),
  useModel: (name: string) => invoke<ModelView>("use_model", { name }),
  /** The local model starting for a question, being prepared, then ready (`local-model` events). */
  onLocalModel: (handler: (status: LocalModelStatus) => void): Promise<UnlistenFn> =>
    listen<LocalModelStatus>("local-model", (event) => handler(event.payload)),
  /** Stops the local model now; the name of the model it served, or null when none ran. */
  stopRuntime: () => invoke<string | null>("stop_runtime"),
  /** The open folder's project instructions (AGENTS.md, ...), looked for anew. */
  projectInstructions: () => invoke<InstructionsView>("project_instructions"),
  /** Turns the open folder's project instructions on or off for its new conversations. */
  setProjectInstructions: (on: boolean) => invoke<InstructionsView>("set_project_instructions", { on }),

  // Updates
  updateSettings: () => invoke<UpdateSettings>("update_settings"),
  /** Whether Tooltrail looks for a new version when it starts (`[updates] check`). */
  saveUpdateCheck: (checkAtStart: boolean) => invoke<UpdateSettings>("save_update_check", { checkAtStart }),
  /**
   * The newer version, or null when there is none. `atStart`: the check made once when the app
   * started (null when Settings turned it off, or when it failed); otherwise a new look.
   */
  checkForUpdate: (atStart: boolean) => invoke<UpdateInfo | null>("check_for_update", { atStart }),
  /** Downloads the version found last, checks its signature, installs it and restarts; steps follow on `onProgress`. */
  installUpdate: (onProgress: (progress: UpdateProgress) => void) => invoke<void>("install_update", { progress: new Channel<UpdateProgress>(onProgress) }),
};
