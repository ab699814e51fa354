// The window's side of an MCP App view: JSON-RPC 2.0 over postMessage with the one frame that
// shows the view, speaking the stable MCP Apps specification (2026-01-26).
//
// Written here rather than taken from the extension's SDK: its host bridge posts to any origin
// and checks only the sender's window, lets requests through before the view said it was ready,
// and brings a schema library that tries `new Function` (refused by this window's CSP) at the
// cost of half a megabyte. Views built on the SDK's App class only need the protocol spoken
// exactly, which this small router does, with the window's own limits: one origin, one frame,
// one page (its handshake answered only once its load was seen, and the view closed at the
// frame's next load), nothing sent before `ui/notifications/initialized`, and a view that
// floods it is closed.
import type { JsonValue, ViewFile } from "../bindings";
import { checkLink } from "./links";
import type { ViewEnd } from "./types";

export const PROTOCOL_VERSION = "2026-01-26";

/** A message larger than this (as JSON text) is dropped unread. */
export const MAX_MESSAGE_CHARS = 1024 * 1024;
/** More messages than this within `RATE_WINDOW_MS` are refused. */
export const RATE_LIMIT = 50;
export const RATE_WINDOW_MS = 100;
/** Requests to the host (calls, reads, links, messages) the view may have waiting at once. */
export const MAX_IN_FLIGHT = 4;
/** Refusals within `FLOOD_WINDOW_MS` after which the view is closed as flooding the window. */
export const FLOOD_REFUSALS = 200;
export const FLOOD_WINDOW_MS = 10_000;
/** How long the view has to answer `ui/resource-teardown` before it is closed anyway. */
export const TEARDOWN_WAIT_MS = 2_000;
/** The most a `ui/notifications/tool-input-partial` may weigh (as JSON text); a larger one is
 * not sent, and the view waits for the whole input. */
export const MAX_PARTIAL_INPUT_CHARS = 64 * 1024;
/** The MCP protocol version answered to a view that opens with MCP's own `initialize` (the
 * next SDK's views) and names none. */
export const MCP_PROTOCOL_VERSION = "2025-11-25";
/** The key under which the next SDK looks for the host's MCP Apps capabilities (SEP-2133). */
export const APPS_EXTENSION = "io.modelcontextprotocol/ui";

/** JSON-RPC error codes the bridge answers with. */
export const ERROR = {
  /** Refused: too many requests, a link not opened, a call the host would not make. */
  refused: -32000,
  /** A request before the view finished `ui/initialize` → `initialized`. */
  notInitialized: -32002,
  methodNotFound: -32601,
  invalidParams: -32602,
} as const;

export type DisplayMode = "inline" | "fullscreen" | "pip";

/** A request or notification of the view's, refused with a JSON-RPC error. */
export class BridgeError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** What the bridge asks of the card that shows the view. */
export interface BridgeHost {
  /** The `ui/initialize` result: protocol version, host info, capabilities and context. */
  initializeResult(): Record<string, JsonValue>;
  /** The view finished its handshake: the host may now send it the call's input. */
  initialized(): void;
  /** The mode the view is shown in now. */
  displayMode(): DisplayMode;
  /** Switches to `mode` (one both sides allow); answers the mode that resulted. */
  setDisplayMode(mode: "inline" | "fullscreen"): DisplayMode;
  /** Asks the user whether to open `url` (http or https, no user name or password, as
   * `checkLink` wrote it) in the browser; true when opened. */
  openLink(url: string): Promise<boolean>;
  /** Asks the user whether to save `file` (checked by `checkDownload`) where they choose;
   * true when saved. */
  downloadFile(file: DownloadAsk): Promise<boolean>;
  /** The view asked to be closed (`ui/notifications/request-teardown`): closed as by Close. */
  requestTeardown(): void;
  /** Asks the user whether to send `text` to the conversation; true when sent. */
  message(text: string): Promise<boolean>;
  /** The view's latest context for the model (each update replaces the last). */
  updateModelContext(text: string): void;
  /** A `tools/call` of the view's: a CallToolResult. */
  callTool(name: string, args: JsonValue): Promise<JsonValue>;
  /** A `resources/read` of the view's: a ReadResourceResult. */
  readResource(uri: string): Promise<JsonValue>;
  /** The view asked for a height (and width) for its frame. */
  sizeChanged(width: number | undefined, height: number | undefined): void;
  /** A log line of the view's (`notifications/message`, or `ui/log` from the next SDK). */
  log(level: string, text: string): void;
  /** The bridge stopped the view (it flooded the window); the card closes it. */
  close(reason: ViewEnd): void;
}

/** The frame's window, as far as the bridge uses it. */
export interface FrameWindow {
  postMessage(message: unknown, targetOrigin: string): void;
}

/** The app's window, as far as the bridge uses it. */
export interface MessageSource {
  addEventListener(type: "message", listener: (event: MessageEvent) => void): void;
  removeEventListener(type: "message", listener: (event: MessageEvent) => void): void;
}

export interface BridgeOptions {
  /** The window the view's messages arrive on (the app's own). */
  listenOn: MessageSource;
  /** The frame's window, the one sender accepted and the one receiver posted to. */
  frame: () => FrameWindow | null;
  /** The view's origin, exactly (`http://127.0.0.1:PORT`). */
  origin: string;
  host: BridgeHost;
  /** Milliseconds, for the rate limits; `performance.now` by default. */
  now?: () => number;
}

type Id = string | number;

/** A file a view asks to save, as the bar shows it and Rust is asked to save it. */
export interface DownloadAsk {
  file: ViewFile;
  /** The name offered (the view's, or the address's last part; Rust cleans it again). */
  name: string;
  /** The host the file is fetched from, as it will be looked up; absent for inline data. */
  host?: string;
  /** Its size in bytes when known (inline data). */
  size?: number;
}

/** A `ui/download-file`'s one file, or the sentence that refuses it before anyone is asked. */
export function checkDownload(params: Record<string, unknown>): { ok: true; ask: DownloadAsk } | { ok: false; reason: string } {
  const contents = Array.isArray(params.contents) ? params.contents : [];
  if (contents.length !== 1) return { ok: false, reason: "A download names exactly one file." };
  const item: unknown = contents[0];
  if (!isObject(item)) return { ok: false, reason: "A download names exactly one file." };
  const lastPart = (uri: string) => uri.split(/[?#]/)[0]!.split("/").filter((part) => part.length > 0).at(-1) ?? "download";
  if (item.type === "resource_link") {
    const uri = typeof item.uri === "string" ? item.uri : "";
    const mimeType = typeof item.mimeType === "string" ? item.mimeType : undefined;
    const name = typeof item.name === "string" && item.name.length > 0 ? item.name : lastPart(uri);
    const file: ViewFile = { name, source: { kind: "url", url: uri }, ...(mimeType ? { mime_type: mimeType } : {}) };
    if (/^data:/i.test(uri.trim())) return { ok: true, ask: { file, name: name === lastPart(uri) ? "download" : name, size: uri.length } };
    const link = checkLink(uri);
    if (!link.ok) {
      return { ok: false, reason: link.reason === "credentials" ? "Addresses that carry a user name or password are not downloaded." : "Only files from http and https addresses, or handed over inline, are saved." };
    }
    return { ok: true, ask: { file: { ...file, source: { kind: "url", url: link.href } }, name, host: link.host } };
  }
  if (item.type === "resource" && isObject(item.resource)) {
    const resource = item.resource;
    const uri = typeof resource.uri === "string" ? resource.uri : "";
    const mimeType = typeof resource.mimeType === "string" ? resource.mimeType : undefined;
    const name = lastPart(uri);
    const extra = mimeType ? { mime_type: mimeType } : {};
    if (typeof resource.text === "string") return { ok: true, ask: { file: { name, source: { kind: "text", text: resource.text }, ...extra }, name, size: new TextEncoder().encode(resource.text).length } };
    if (typeof resource.blob === "string") return { ok: true, ask: { file: { name, source: { kind: "blob", blob: resource.blob }, ...extra }, name, size: Math.floor((resource.blob.length * 3) / 4) } };
  }
  return { ok: false, reason: "A download is a link to an http or https address or an embedded resource." };
}

/** The text of MCP content blocks: one block or a list; anything but text is named by its type. */
export function contentText(content: unknown): string {
  const blocks = Array.isArray(content) ? content : content === undefined || content === null ? [] : [content];
  return blocks
    .map((block) => {
      if (!block || typeof block !== "object") return "";
      const { type, text } = block as { type?: unknown; text?: unknown };
      if (type === "text" && typeof text === "string") return text;
      return typeof type === "string" ? `[${type}]` : "";
    })
    .filter((text) => text.length > 0)
    .join("\n");
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export class ViewBridge {
  private readonly options: BridgeOptions;
  private readonly now: () => number;
  private readonly listener = (event: MessageEvent) => this.receive(event);
  private listening = false;
  private stopped = false;
  private answeredInitialize = false;
  /** Whether the frame's first load, its view's page, was seen; any later one is a page it went to. */
  private loaded = false;
  /** A `ui/initialize` that came before the frame's first load, answered at that load. */
  private heldInitialize: { id: Id; params: Record<string, unknown> } | null = null;
  private teardownAsked = false;
  private ready = false;
  private declaredModes: DisplayMode[] = [];
  private recent: number[] = [];
  private refusals: number[] = [];
  private inFlight = 0;
  private nextId = 1;
  private readonly pending = new Map<Id, () => void>();

  constructor(options: BridgeOptions) {
    this.options = options;
    this.now = options.now ?? (() => performance.now());
  }

  /** Whether the view finished its handshake. */
  get initialized(): boolean {
    return this.ready;
  }

  start() {
    if (this.listening || this.stopped) return;
    this.listening = true;
    this.options.listenOn.addEventListener("message", this.listener);
  }

  /**
   * The frame finished loading a page. The first is the view's: a `ui/initialize` it sent
   * before is answered now, and none is answered earlier. An engine may never report the load
   * of a page that left before it finished, so a view that heard its answer before its load was
   * seen could leave and have the next page's load taken for its own. Any load after the first
   * is the frame showing another page: the bridge stops and the card closes the view as
   * navigated.
   */
  frameLoaded() {
    if (this.stopped) return;
    if (this.loaded) {
      this.stop();
      this.options.host.close("navigated");
      return;
    }
    this.loaded = true;
    const held = this.heldInitialize;
    this.heldInitialize = null;
    if (held) this.initialize(held.id, held.params);
  }

  /** Stops listening and sending; answers still owed to the view are dropped. */
  stop() {
    this.stopped = true;
    if (this.listening) this.options.listenOn.removeEventListener("message", this.listener);
    this.listening = false;
    const owed = [...this.pending.values()];
    this.pending.clear();
    for (const settle of owed) settle();
  }

  /** Sends a notification, once the view is initialized; before that, and once stopped, nothing. */
  notify(method: string, params: Record<string, JsonValue>): boolean {
    if (!this.ready || this.stopped) return false;
    this.post({ jsonrpc: "2.0", method, params });
    return true;
  }

  /**
   * `ui/notifications/tool-input-partial`: the arguments as the model writes them so far, once
   * the view is initialized; not sent past `MAX_PARTIAL_INPUT_CHARS` (the view gets the whole
   * input when the call starts).
   */
  notifyPartialInput(args: Record<string, JsonValue>): boolean {
    let size: number;
    try {
      size = JSON.stringify(args).length;
    } catch {
      return false;
    }
    if (size > MAX_PARTIAL_INPUT_CHARS) return false;
    return this.notify("ui/notifications/tool-input-partial", { arguments: args });
  }

  /**
   * `ui/resource-teardown`: tells the view it is going and waits for its answer, at most
   * `TEARDOWN_WAIT_MS`; resolves either way, then the bridge is stopped. A view that never
   * finished its handshake is sent nothing.
   */
  teardown(reason: string): Promise<void> {
    if (!this.ready || this.stopped) {
      this.stop();
      return Promise.resolve();
    }
    const id = `tooltrail-${this.nextId++}`;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => done(), TEARDOWN_WAIT_MS);
      const done = () => {
        clearTimeout(timer);
        this.pending.delete(id);
        this.stop();
        resolve();
      };
      this.pending.set(id, done);
      this.post({ jsonrpc: "2.0", id, method: "ui/resource-teardown", params: { reason } });
    });
  }

  private post(message: Record<string, JsonValue>) {
    const frame = this.options.frame();
    // Posted to the view's origin alone: if the frame now shows another page, it gets nothing.
    frame?.postMessage(message, this.options.origin);
  }

  private receive(event: MessageEvent) {
    if (this.stopped) return;
    // The cheap checks first: the one frame, from its one origin.
    const frame = this.options.frame();
    if (!frame || event.source !== frame || event.origin !== this.options.origin) return;
    const data: unknown = event.data;
    if (!isObject(data) || data.jsonrpc !== "2.0") return;
    let size: number;
    try {
      size = JSON.stringify(data).length;
    } catch {
      return;
    }
    if (size > MAX_MESSAGE_CHARS) return;
    const id = data.id;
    const hasId = typeof id === "string" || typeof id === "number";
    const method = typeof data.method === "string" ? data.method : undefined;
    if (!this.withinRate()) {
      if (hasId && method !== undefined) this.refuse(id, ERROR.refused, "too many requests");
      else this.refused();
      return;
    }
    if (method === undefined) {
      if (hasId) this.pending.get(id)?.();
      return;
    }
    const params = isObject(data.params) ? data.params : {};
    if (!hasId) {
      this.notification(method, params);
      return;
    }
    void this.request(id, method, params);
  }

  /** Counts a message; false when the view sent more than the window takes. */
  private withinRate(): boolean {
    const now = this.now();
    const recent = this.recent.filter((at) => now - at < RATE_WINDOW_MS);
    recent.push(now);
    this.recent = recent;
    return recent.length <= RATE_LIMIT;
  }

  /** Counts a refusal; a view refused too often is closed as flooding. */
  private refused() {
    const now = this.now();
    this.refusals = this.refusals.filter((at) => now - at < FLOOD_WINDOW_MS);
    this.refusals.push(now);
    if (this.refusals.length >= FLOOD_REFUSALS && !this.stopped) {
      this.stop();
      this.options.host.close("flooded");
    }
  }

  private refuse(id: Id, code: number, message: string) {
    this.post({ jsonrpc: "2.0", id, error: { code, message } });
    this.refused();
  }

  private answer(id: Id, result: JsonValue) {
    if (this.stopped) return;
    this.post({ jsonrpc: "2.0", id, result });
  }

  private notification(method: string, params: Record<string, unknown>) {
    const host = this.options.host;
    switch (method) {
      case "ui/notifications/initialized":
        if (this.answeredInitialize && !this.ready) {
          this.ready = true;
          host.initialized();
        }
        return;
      case "ui/notifications/size-changed": {
        const width = typeof params.width === "number" && Number.isFinite(params.width) ? params.width : undefined;
        const height = typeof params.height === "number" && Number.isFinite(params.height) ? params.height : undefined;
        host.sizeChanged(width, height);
        return;
      }
      case "ui/notifications/request-teardown":
        // Only a view that finished its handshake, once: the card closes it as by Close.
        if (this.ready && !this.teardownAsked) {
          this.teardownAsked = true;
          host.requestTeardown();
        }
        return;
      case "ui/log":
      case "notifications/message": {
        const level = typeof params.level === "string" ? params.level : "info";
        const data = params.data;
        let text: string;
        try {
          text = typeof data === "string" ? data : JSON.stringify(data ?? null);
        } catch {
          text = "";
        }
        host.log(level, text);
        return;
      }
      default:
        // Notifications the host does not know are dropped, as JSON-RPC has it.
        return;
    }
  }

  private async request(id: Id, method: string, params: Record<string, unknown>) {
    if (!this.ready && method !== "ui/initialize" && method !== "initialize" && method !== "ping") {
      this.refuse(id, ERROR.notInitialized, "The view has not finished initializing.");
      return;
    }
    const host = this.options.host;
    try {
      switch (method) {
        case "ui/initialize": {
          if (this.loaded) {
            this.initialize(id, params);
            return;
          }
          // Answered when the page's load is seen; one waits at a time.
          if (this.heldInitialize) {
            this.refuse(id, ERROR.refused, "An earlier ui/initialize is waiting for the view's page to load.");
            return;
          }
          this.heldInitialize = { id, params };
          return;
        }
        case "initialize": {
          // The next SDK's views open with MCP's own handshake, the host's capabilities under
          // the Apps extension, then `ui/initialize` as before; nothing is unlocked by it.
          const ui = host.initializeResult();
          const version = typeof params.protocolVersion === "string" && /^\d{4}-\d{2}-\d{2}$/.test(params.protocolVersion) ? params.protocolVersion : MCP_PROTOCOL_VERSION;
          this.answer(id, {
            protocolVersion: version,
            capabilities: { tools: {}, resources: {}, logging: {}, extensions: { [APPS_EXTENSION]: ui.hostCapabilities ?? {} } },
            serverInfo: ui.hostInfo ?? { name: "Tooltrail", version: "" },
          });
          return;
        }
        case "ping":
          this.answer(id, {});
          return;
        case "ui/request-display-mode": {
          const mode = params.mode;
          // Only a mode this window has and the view said it supports; otherwise it stays.
          const allowed = (mode === "inline" || mode === "fullscreen") && (mode === "inline" || this.declaredModes.includes(mode));
          const result = allowed ? host.setDisplayMode(mode) : host.displayMode();
          this.answer(id, { mode: result });
          return;
        }
        case "ui/update-model-context": {
          const parts = [contentText(params.content)];
          if (isObject(params.structuredContent)) parts.push(JSON.stringify(params.structuredContent));
          host.updateModelContext(parts.filter((part) => part.length > 0).join("\n"));
          this.answer(id, {});
          return;
        }
        case "ui/open-link": {
          const link = typeof params.url === "string" ? checkLink(params.url) : ({ ok: false, reason: "not_web" } as const);
          if (!link.ok) {
            this.refuse(id, ERROR.refused, link.reason === "credentials" ? "Links that carry a user name or password are not opened." : "Only http and https links are opened.");
            return;
          }
          const opened = await this.inFlightOf(() => host.openLink(link.href));
          if (opened) this.answer(id, {});
          else this.refuse(id, ERROR.refused, "The user did not open the link.");
          return;
        }
        case "ui/download-file": {
          const checked = checkDownload(params);
          if (!checked.ok) {
            this.refuse(id, ERROR.refused, checked.reason);
            return;
          }
          const saved = await this.inFlightOf(() => host.downloadFile(checked.ask));
          this.answer(id, saved ? {} : { isError: true });
          return;
        }
        case "ui/message": {
          const text = contentText(params.content);
          if (text.length === 0) {
            this.refuse(id, ERROR.invalidParams, "The message has no text.");
            return;
          }
          const sent = await this.inFlightOf(() => host.message(text));
          this.answer(id, sent ? {} : { isError: true });
          return;
        }
        case "tools/call": {
          const name = params.name;
          if (typeof name !== "string" || name.length === 0) {
            this.refuse(id, ERROR.invalidParams, "A tool call needs the tool's name.");
            return;
          }
          const args = isObject(params.arguments) ? (params.arguments as JsonValue) : {};
          this.answer(id, await this.inFlightOf(() => host.callTool(name, args)));
          return;
        }
        case "resources/read": {
          const uri = params.uri;
          if (typeof uri !== "string" || uri.length === 0) {
            this.refuse(id, ERROR.invalidParams, "A resource read needs the resource's URI.");
            return;
          }
          this.answer(id, await this.inFlightOf(() => host.readResource(uri)));
          return;
        }
        default:
          this.refuse(id, ERROR.methodNotFound, `The host has no method ${method.slice(0, 80)}.`);
          return;
      }
    } catch (error) {
      if (this.stopped) return;
      const code = error instanceof BridgeError ? error.code : ERROR.refused;
      this.refuse(id, code, messageOf(error));
    }
  }

  /** Answers `ui/initialize`: the modes the view can be shown in, and the host's side. */
  private initialize(id: Id, params: Record<string, unknown>) {
    const capabilities = isObject(params.appCapabilities) ? params.appCapabilities : {};
    const modes = Array.isArray(capabilities.availableDisplayModes) ? capabilities.availableDisplayModes : [];
    this.declaredModes = modes.filter((mode): mode is DisplayMode => mode === "inline" || mode === "fullscreen" || mode === "pip");
    this.answer(id, this.options.host.initializeResult());
    this.answeredInitialize = true;
  }

  /** Runs one of the host's slow answers, refused when the view already waits on too many. */
  private async inFlightOf<T>(work: () => Promise<T>): Promise<T> {
    if (this.inFlight >= MAX_IN_FLIGHT) throw new BridgeError(ERROR.refused, "too many requests");
    this.inFlight++;
    try {
      return await work();
    } finally {
      this.inFlight--;
    }
  }
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (isObject(error) && typeof error.message === "string") return error.message;
  return typeof error === "string" ? error : "The request failed.";
}
