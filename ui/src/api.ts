// The app's commands, typed. Protocol types come from ./bindings (generated from Rust); the
// small payloads of the shell's own commands are described here.
import { Channel, invoke } from "@tauri-apps/api/core";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import type { ApprovalReply, Event } from "./bindings";

export interface EndpointInfo {
  base_url: string;
  model: string | null;
  api_key_set: boolean;
  config_path: string;
  problem: string | null;
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
};
