// A stand-in for the Rust side, for browser tests of the built UI: it answers the app's
// commands through Tauri's IPC mock and lets a test push protocol events down a turn's Channel
// exactly as Rust would. Bundled to one script and injected before the page's own scripts.
import { mockIPC } from "@tauri-apps/api/mocks";
import type { Event, InstructionsView } from "../src/bindings";
import * as stream from "../src/fixtures/stream";
import * as views from "../src/fixtures/views";
import { historyCommand, type HistoryConfig } from "./mock-history";
import { modelsCommand, type ModelsConfig } from "./mock-models";
import { settingsCommand, type SettingsConfig } from "./mock-settings";
import { snippetsCommand, type SnippetsConfig } from "./mock-snippets";
import { telemetryCommand, type TelemetryConfig } from "./mock-telemetry";
import { updateInstall, updatesCommand, type UpdatesConfig } from "./mock-updates";
import { viewsCommand, type ViewsConfig } from "./mock-views";

interface Config extends HistoryConfig, ModelsConfig, SettingsConfig, SnippetsConfig, TelemetryConfig, UpdatesConfig, ViewsConfig {
  info?: unknown;
  workspace?: unknown;
  recent?: unknown[];
  conversations?: unknown[];
  loaded?: Record<string, Event[]>;
  conversationId?: string;
  mcp?: unknown;
  /** When set, send_message fails with this error. */
  sendError?: { code: string; message: string } | null;
  /** What turn_changes answers: the turns that wrote files. */
  turnChanges?: unknown[];
  /** When set, undo_changes fails with this error. */
  undoError?: { code: string; message: string } | null;
  undoReport?: unknown;
  /** The open folder's project instructions (project_instructions); none by default. */
  instructions?: Partial<InstructionsView>;
  /** The composer's `@` and `/`: what mcp_content, workspace_files and read_attachment answer. */
  content?: { resources: unknown[]; prompts: unknown[]; problems: string[] };
  files?: string[];
  /** By `file:PATH` or `SERVER:URI`: what read_attachment answers. */
  attachments?: Record<string, unknown>;
  /** By prompt name: the messages get_mcp_prompt answers. */
  promptMessages?: Record<string, unknown[]>;
  /** By argument name: the values complete_prompt_argument offers (filtered by what is typed). */
  completions?: Record<string, string[]>;
}

interface Invocation {
  cmd: string;
  args: Record<string, unknown>;
}

interface ChannelLike {
  id: number;
}

declare global {
  interface Window {
    __mockConfig?: Config;
    __mock: {
      calls: Invocation[];
      /** Sends events down the last turn's channel. */
      deliver: (events: Event[]) => void;
      /** Sends events one per `everyMs`, resolving when all are out. */
      play: (events: Event[], everyMs: number) => Promise<void>;
      emit: (event: string, payload: unknown) => void;
      /** The update being installed: steps down its channel, then its refusal. */
      install: ReturnType<typeof updateInstall>;
      stream: typeof stream;
      /** Streams of calls with an MCP App view. */
      views: typeof views;
      config: Config;
      /** Ends the running replay with these outcomes (ReplayOutcome[]). */
      finishReplay: (outcomes: unknown) => void;
    };
  }
}

const config: Config = window.__mockConfig ?? {};
const calls: Invocation[] = [];
const channels: { channel: ChannelLike; next: number }[] = [];
const listeners = new Map<string, number[]>();
const replayEnds: ((outcomes: unknown) => void)[] = [];

/** The folder's instructions as the shell reports them: none, on, nothing left out by default. */
function instructionsView(given: Partial<InstructionsView> | undefined): InstructionsView {
  return { file: null, on: true, cut: false, limit_kib: 16, left_out: [], ...given };
}

function internals() {
  return (window as unknown as { __TAURI_INTERNALS__: { runCallback: (id: number, data: unknown) => void } }).__TAURI_INTERNALS__;
}

function deliver(events: Event[]) {
  const target = channels.at(-1);
  if (!target) throw new Error("no turn is streaming");
  for (const message of events) internals().runCallback(target.channel.id, { index: target.next++, message });
}

mockIPC((cmd, payload) => {
  const args = (payload ?? {}) as Record<string, unknown>;
  calls.push({ cmd, args: Object.fromEntries(Object.entries(args).filter(([key]) => key !== "onEvent")) });
  switch (cmd) {
    case "app_info":
      return config.info ?? { version: "0.1.0", endpoint: { base_url: "http://localhost:11434/v1", model: null, api_key_set: false, config_path: "/home/me/.config/tooltrail/config.toml", problem: null } };
    case "current_workspace":
      return config.workspace ?? null;
    case "window_ready":
      return null;
    case "recent_workspaces":
      return config.recent ?? [];
    case "open_workspace":
      return config.workspace ?? null;
    case "list_conversations":
      return config.conversations ?? [];
    case "load_conversation": {
      const id = String(args.conversationId);
      return { summary: { id, title: "Loaded", workspace: "/home/me/demo", updated_ms: 0, turns: 1, running: false }, events: config.loaded?.[id] ?? [] };
    }
    case "send_message": {
      if (config.sendError) return Promise.reject(config.sendError);
      channels.push({ channel: args.onEvent as ChannelLike, next: 0 });
      return config.conversationId ?? "conv_1";
    }
    case "mcp_servers":
      return config.mcp ?? { servers: [] };
    // Signing in happens in the real app's browser; the mock has nothing to sign in to.
    case "mcp_sign_in":
    case "mcp_sign_out":
      return null;
    // A replay streams down its channel like a turn; `__mock.finishReplay` ends it with its outcomes.
    case "replay_questions":
      channels.push({ channel: args.onEvent as ChannelLike, next: 0 });
      return new Promise((resolve) => {
        replayEnds.push(resolve);
      });
    case "cancel_turn":
      return true;
    case "answer_approval":
      return null;
    case "answer_question":
      return null;
    case "answer_elicitation":
    case "answer_sampling":
    case "open_elicitation_url":
      return null;
    case "project_instructions":
      return instructionsView(config.instructions);
    case "set_project_instructions":
      config.instructions = { ...config.instructions, on: Boolean(args.on) };
      return instructionsView(config.instructions);
    case "turn_changes":
      return config.turnChanges ?? [];
    case "undo_changes":
      if (config.undoError) return Promise.reject(config.undoError);
      return config.undoReport ?? { restored: [], removed: [] };
    case "mcp_content":
      return config.content ?? { resources: [], prompts: [], problems: [] };
    case "workspace_files":
      return (config.files ?? []).filter((path) => path.toLowerCase().includes(String(args.query).toLowerCase()));
    case "read_attachment": {
      const source = args.source as { kind: string; path?: string; server?: string; uri?: string };
      const key = source.kind === "file" ? `file:${source.path}` : `${source.server}:${source.uri}`;
      const found = config.attachments?.[key];
      return found ? found : Promise.reject({ code: "content", message: `Could not read ${key}.` });
    }
    case "get_mcp_prompt":
      return config.promptMessages?.[String(args.prompt)] ?? [];
    case "complete_prompt_argument":
      return (config.completions?.[String(args.argument)] ?? []).filter((value) => value.startsWith(String(args.value)));
    // A call's MCP App view (ui/tests/mock-views.ts).
    case "prepare_view":
    case "start_view":
    case "view_call_tool":
    case "view_read_resource":
    case "close_view":
    case "open_view_link":
    case "save_view_file":
      return viewsCommand(cmd, args, config, config.conversationId ?? "conv_1", (id, data) => internals().runCallback(id, data));
    case "plugin:event|listen": {
      const list = listeners.get(String(args.event)) ?? [];
      list.push(Number(args.handler));
      listeners.set(String(args.event), list);
      return Number(args.handler);
    }
    case "plugin:event|unlisten":
      return null;
    default: {
      // Each screen's commands answer from its own module; `undefined` means "not mine".
      // (`null` is an answer: commands that return nothing resolve with it.)
      const fromHistory = historyCommand(cmd, args, config);
      if (fromHistory !== undefined) return fromHistory;
      const fromSettings = settingsCommand(cmd, args, config);
      if (fromSettings !== undefined) return fromSettings;
      const fromSnippets = snippetsCommand(cmd, args, config);
      if (fromSnippets !== undefined) return fromSnippets;
      const fromTelemetry = telemetryCommand(cmd, args, config);
      if (fromTelemetry !== undefined) return fromTelemetry;
      const fromUpdates = updatesCommand(cmd, args, config);
      if (fromUpdates !== undefined) return fromUpdates;
      const fromModels = modelsCommand(cmd, args, config, emit);
      if (fromModels !== undefined) return fromModels;
      return Promise.reject({ code: "unknown", message: `unknown command ${cmd}` });
    }
  }
});

function emit(event: string, payload: unknown) {
  for (const handler of listeners.get(event) ?? []) internals().runCallback(handler, { event, id: handler, payload });
}

window.__mock = {
  calls,
  deliver,
  play: async (events, everyMs) => {
    for (const event of events) {
      deliver([event]);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  },
  emit,
  install: updateInstall((id, data) => internals().runCallback(id, data)),
  stream,
  views,
  finishReplay: (outcomes) => replayEnds.shift()?.(outcomes),
  config,
};
