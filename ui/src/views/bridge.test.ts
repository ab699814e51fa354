// The window's side of a view's JSON-RPC: who it listens to, what it answers before and after
// the view's handshake, what it sends and in which order, and how a hostile view is stopped.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { JsonValue } from "../bindings";
import { APPS_EXTENSION, ERROR, FLOOD_REFUSALS, MAX_IN_FLIGHT, MAX_MESSAGE_CHARS, MAX_PARTIAL_INPUT_CHARS, RATE_LIMIT, TEARDOWN_WAIT_MS, ViewBridge, type BridgeHost, type DisplayMode, type DownloadAsk } from "./bridge";
import type { ViewEnd } from "./types";

const ORIGIN = "http://127.0.0.1:40123";

/** The app's window: messages handed to the bridge as the browser would. */
class AppWindow {
  private listeners: ((event: MessageEvent) => void)[] = [];
  addEventListener(_type: "message", listener: (event: MessageEvent) => void) {
    this.listeners.push(listener);
  }
  removeEventListener(_type: "message", listener: (event: MessageEvent) => void) {
    this.listeners = this.listeners.filter((known) => known !== listener);
  }
  deliver(data: unknown, from: { source: unknown; origin: string }) {
    for (const listener of this.listeners) listener({ data, source: from.source, origin: from.origin } as MessageEvent);
  }
}

/** The frame's window: what the bridge posts to it, and where. */
class Frame {
  readonly sent: { message: Record<string, unknown>; origin: string }[] = [];
  postMessage(message: unknown, origin: string) {
    this.sent.push({ message: message as Record<string, unknown>, origin });
  }
  messages() {
    return this.sent.map((entry) => entry.message);
  }
}

interface Setup {
  app: AppWindow;
  frame: Frame;
  bridge: ViewBridge;
  host: BridgeHost & { closed: ViewEnd[]; mode: DisplayMode; calls: string[]; context: string[]; logs: string[] };
  clock: { now: number };
  /** A message from the view itself. */
  fromView: (data: unknown) => void;
  /** The handshake a view built on the SDK makes. */
  handshake: (modes?: string[]) => void;
}

/** A bridge to a frame whose page has loaded (`loaded: false`: not yet). */
function setup(overrides: Partial<BridgeHost> = {}, { loaded = true } = {}): Setup {
  const app = new AppWindow();
  const frame = new Frame();
  const clock = { now: 0 };
  const host: Setup["host"] = {
    closed: [],
    mode: "inline",
    calls: [],
    context: [],
    logs: [],
    initializeResult: () => ({ protocolVersion: "2026-01-26", hostInfo: { name: "Tooltrail", version: "test" }, hostCapabilities: {}, hostContext: { theme: "light" } }),
    initialized: () => {},
    displayMode: () => host.mode,
    setDisplayMode: (mode) => (host.mode = mode),
    openLink: () => Promise.resolve(true),
    downloadFile: () => Promise.resolve(true),
    requestTeardown: () => {},
    message: () => Promise.resolve(true),
    updateModelContext: (text) => host.context.push(text),
    callTool: (name) => {
      host.calls.push(name);
      return Promise.resolve({ content: [{ type: "text", text: "12:00" }] });
    },
    readResource: () => Promise.resolve({ contents: [] }),
    sizeChanged: () => {},
    log: (_level, text) => host.logs.push(text),
    close: (reason) => host.closed.push(reason),
    ...overrides,
  };
  const bridge = new ViewBridge({ listenOn: app, frame: () => frame, origin: ORIGIN, host, now: () => clock.now });
  bridge.start();
  if (loaded) bridge.frameLoaded();
  const fromView = (data: unknown) => app.deliver(data, { source: frame, origin: ORIGIN });
  const handshake = (modes?: string[]) => {
    fromView({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: { protocolVersion: "2026-01-26", appInfo: { name: "test" }, appCapabilities: modes ? { availableDisplayModes: modes } : {} } });
    fromView({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
  };
  return { app, frame, bridge, host, clock, fromView, handshake };
}

/** Lets the bridge's awaited answers go out. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("the view bridge", () => {
  it("attack_views_message_from_another_frame_or_origin_is_dropped", async () => {
    const { app, frame, host } = setup();
    const other = new Frame();
    const ask = { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "get-time" } };
    app.deliver({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: {} }, { source: other, origin: ORIGIN });
    app.deliver({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: {} }, { source: frame, origin: "http://127.0.0.1:40124" });
    app.deliver({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: {} }, { source: frame, origin: "null" });
    app.deliver(ask, { source: other, origin: ORIGIN });
    await settle();
    expect(frame.sent).toEqual([]);
    expect(other.sent).toEqual([]);
    expect(host.calls).toEqual([]);
  });

  it("attack_views_request_before_initialized_is_refused_and_nothing_is_sent", async () => {
    const { frame, bridge, host, fromView } = setup();
    fromView({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "get-time", arguments: {} } });
    fromView({ jsonrpc: "2.0", id: 3, method: "ui/open-link", params: { url: "https://example.com/" } });
    fromView({ jsonrpc: "2.0", id: 4, method: "ping" });
    await settle();
    // Nothing the host starts reaches a view that has not said it is ready.
    expect(bridge.notify("ui/notifications/tool-input", { arguments: {} })).toBe(false);
    expect(host.calls).toEqual([]);
    expect(frame.messages()).toEqual([
      { jsonrpc: "2.0", id: 2, error: { code: ERROR.notInitialized, message: expect.any(String) } },
      { jsonrpc: "2.0", id: 3, error: { code: ERROR.notInitialized, message: expect.any(String) } },
      { jsonrpc: "2.0", id: 4, result: {} },
    ]);
    expect(frame.sent.every((entry) => entry.origin === ORIGIN)).toBe(true);
  });

  it("answers ui/initialize, then sends tool-input before tool-result, to the view's origin only", async () => {
    const initialized = vi.fn();
    const { frame, bridge, handshake } = setup({ initialized });
    handshake();
    expect(initialized).toHaveBeenCalledTimes(1);
    expect(bridge.initialized).toBe(true);
    bridge.notify("ui/notifications/tool-input", { arguments: { zone: "UTC" } });
    bridge.notify("ui/notifications/tool-result", { content: [{ type: "text", text: "12:00" }] });
    const methods = frame.messages().map((message) => message.method ?? `answer ${String(message.id)}`);
    expect(methods).toEqual(["answer 1", "ui/notifications/tool-input", "ui/notifications/tool-result"]);
    expect(frame.messages()[0]).toMatchObject({ result: { protocolVersion: "2026-01-26", hostInfo: { name: "Tooltrail" } } });
    expect(frame.messages()[2]).toEqual({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: { content: [{ type: "text", text: "12:00" }] } });
    expect(new Set(frame.sent.map((entry) => entry.origin))).toEqual(new Set([ORIGIN]));
  });

  it("attack_views_initialized_without_initialize_does_not_unlock_the_bridge", async () => {
    const { frame, bridge, host, fromView } = setup();
    fromView({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
    fromView({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "get-time" } });
    await settle();
    expect(bridge.initialized).toBe(false);
    expect(host.calls).toEqual([]);
    expect(frame.messages()).toEqual([{ jsonrpc: "2.0", id: 9, error: { code: ERROR.notInitialized, message: expect.any(String) } }]);
  });

  it("attack_views_malformed_and_oversized_messages_are_dropped", async () => {
    const { frame, host, handshake, fromView } = setup();
    handshake();
    frame.sent.length = 0;
    fromView("not an object");
    fromView(["jsonrpc", "2.0"]);
    fromView(null);
    fromView({ jsonrpc: "1.0", id: 5, method: "tools/call", params: { name: "get-time" } });
    fromView({ id: 6, method: "tools/call", params: { name: "get-time" } });
    fromView({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "get-time", arguments: { pad: "x".repeat(MAX_MESSAGE_CHARS) } } });
    await settle();
    expect(frame.sent).toEqual([]);
    expect(host.calls).toEqual([]);
    // Just under the limit is still read.
    fromView({ jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "get-time", arguments: { pad: "x".repeat(MAX_MESSAGE_CHARS - 200) } } });
    await settle();
    expect(host.calls).toEqual(["get-time"]);
  });

  it("answers an unknown method with method not found", async () => {
    const { frame, handshake, fromView } = setup();
    handshake();
    fromView({ jsonrpc: "2.0", id: 11, method: "ui/some-later-method", params: {} });
    await settle();
    expect(frame.messages().at(-1)).toEqual({ jsonrpc: "2.0", id: 11, error: { code: ERROR.methodNotFound, message: expect.any(String) } });
  });

  it("attack_views_handshake_is_answered_only_once_the_frames_page_has_loaded", async () => {
    const initialized = vi.fn();
    const { frame, bridge, fromView, handshake } = setup({ initialized }, { loaded: false });
    // Heard before the page's load was seen, the view could leave at once and the next page's
    // load be taken for its own: the answer waits, and a second ask meanwhile is refused.
    handshake();
    fromView({ jsonrpc: "2.0", id: 5, method: "ui/initialize", params: {} });
    await settle();
    expect(frame.messages()).toEqual([{ jsonrpc: "2.0", id: 5, error: { code: ERROR.refused, message: expect.any(String) } }]);
    expect(bridge.initialized).toBe(false);
    expect(initialized).not.toHaveBeenCalled();
    bridge.frameLoaded();
    expect(frame.messages()[1]).toMatchObject({ id: 1, result: { protocolVersion: "2026-01-26" } });
    expect(frame.sent[1]!.origin).toBe(ORIGIN);
    // Its `initialized` sent before the answer counted for nothing; after it, the view is ready.
    expect(bridge.initialized).toBe(false);
    fromView({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
    expect(bridge.initialized).toBe(true);
    expect(initialized).toHaveBeenCalledTimes(1);
  });

  it("attack_views_frame_loading_another_page_stops_the_bridge_and_closes_as_navigated", async () => {
    const { frame, bridge, host, fromView, handshake } = setup();
    handshake();
    const before = frame.sent.length;
    bridge.frameLoaded();
    expect(host.closed).toEqual(["navigated"]);
    // Whatever the frame shows now is not the view: it is not heard, and it is sent nothing.
    fromView({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "get-time", arguments: {} } });
    await settle();
    expect(bridge.notify("ui/notifications/tool-input", { arguments: {} })).toBe(false);
    await bridge.teardown("closed");
    bridge.frameLoaded();
    expect(host.calls).toEqual([]);
    expect(frame.sent.length).toBe(before);
    expect(host.closed).toEqual(["navigated"]);
  });

  it("attack_views_message_flood_is_refused_then_closes_the_view", async () => {
    const { frame, host, handshake, fromView, clock } = setup();
    handshake();
    frame.sent.length = 0;
    // Within one 100 ms window, past the limit: the rest are refused as too many.
    for (let i = 0; i < RATE_LIMIT + 10; i++) fromView({ jsonrpc: "2.0", id: 100 + i, method: "ping" });
    const refusals = frame.messages().filter((message) => (message.error as { message?: string } | undefined)?.message === "too many requests");
    expect(refusals.length).toBeGreaterThanOrEqual(10);
    expect(host.closed).toEqual([]);
    // Kept up, the view is closed as flooding the window, and then nothing more is read or sent.
    for (let i = 0; i < FLOOD_REFUSALS * 2 && host.closed.length === 0; i++) {
      clock.now += 0.1;
      fromView({ jsonrpc: "2.0", id: 1000 + i, method: "ping" });
    }
    expect(host.closed).toEqual(["flooded"]);
    const before = frame.sent.length;
    fromView({ jsonrpc: "2.0", id: 99_999, method: "ping" });
    await settle();
    expect(frame.sent.length).toBe(before);
  });

  it("attack_views_too_many_requests_in_flight_are_refused", async () => {
    const waiting: (() => void)[] = [];
    const { frame, host, handshake, fromView, clock } = setup({
      callTool: () =>
        new Promise<JsonValue>((resolve) => {
          waiting.push(() => resolve({ content: [] }));
        }),
    });
    handshake();
    frame.sent.length = 0;
    for (let i = 0; i < MAX_IN_FLIGHT + 2; i++) {
      clock.now += 50;
      fromView({ jsonrpc: "2.0", id: 200 + i, method: "tools/call", params: { name: "slow" } });
    }
    await settle();
    expect(waiting.length).toBe(MAX_IN_FLIGHT);
    expect(frame.messages()).toEqual([
      { jsonrpc: "2.0", id: 200 + MAX_IN_FLIGHT, error: { code: ERROR.refused, message: "too many requests" } },
      { jsonrpc: "2.0", id: 201 + MAX_IN_FLIGHT, error: { code: ERROR.refused, message: "too many requests" } },
    ]);
    expect(host.closed).toEqual([]);
  });

  it("answers a display mode request with the mode that resulted", async () => {
    const { frame, host, handshake, fromView } = setup();
    handshake(["inline", "fullscreen"]);
    const ask = (id: number, mode: string) => fromView({ jsonrpc: "2.0", id, method: "ui/request-display-mode", params: { mode } });
    ask(21, "fullscreen");
    ask(22, "pip");
    ask(23, "inline");
    await settle();
    const answers = frame.messages().filter((message) => typeof message.id === "number" && message.id > 20);
    expect(answers).toEqual([
      { jsonrpc: "2.0", id: 21, result: { mode: "fullscreen" } },
      // pip is not a mode of this window: the view stays where it was.
      { jsonrpc: "2.0", id: 22, result: { mode: "fullscreen" } },
      { jsonrpc: "2.0", id: 23, result: { mode: "inline" } },
    ]);
    expect(host.mode).toBe("inline");
  });

  it("keeps a view that did not declare fullscreen inline", async () => {
    const { frame, host, handshake, fromView } = setup();
    handshake(["inline"]);
    fromView({ jsonrpc: "2.0", id: 31, method: "ui/request-display-mode", params: { mode: "fullscreen" } });
    await settle();
    expect(frame.messages().at(-1)).toEqual({ jsonrpc: "2.0", id: 31, result: { mode: "inline" } });
    expect(host.mode).toBe("inline");
  });

  it("attack_views_open_link_other_than_http_is_refused_without_asking", async () => {
    const openLink = vi.fn(() => Promise.resolve(true));
    const { frame, handshake, fromView } = setup({ openLink });
    handshake();
    for (const [id, url] of [[41, "file:///etc/passwd"], [42, "javascript:alert(1)"], [43, "tauri://localhost/"], [44, "not a url"]] as const) {
      fromView({ jsonrpc: "2.0", id, method: "ui/open-link", params: { url } });
    }
    await settle();
    expect(openLink).not.toHaveBeenCalled();
    expect(frame.messages().filter((message) => typeof message.id === "number" && message.id > 40).map((message) => (message.error as { code: number }).code)).toEqual([
      ERROR.refused,
      ERROR.refused,
      ERROR.refused,
      ERROR.refused,
    ]);
  });

  it("attack_views_open_link_with_a_user_name_or_password_is_refused_without_asking", async () => {
    const openLink = vi.fn(() => Promise.resolve(true));
    const { frame, handshake, fromView } = setup({ openLink });
    handshake();
    for (const [id, url] of [[45, "https://bank.example@evil.example/"], [46, "https://user:pass@evil.example/"], [47, "http://:secret@evil.example/"]] as const) {
      fromView({ jsonrpc: "2.0", id, method: "ui/open-link", params: { url } });
    }
    await settle();
    expect(openLink).not.toHaveBeenCalled();
    expect(frame.messages().filter((message) => typeof message.id === "number" && message.id > 44).map((message) => message.error)).toEqual([
      { code: ERROR.refused, message: "Links that carry a user name or password are not opened." },
      { code: ERROR.refused, message: "Links that carry a user name or password are not opened." },
      { code: ERROR.refused, message: "Links that carry a user name or password are not opened." },
    ]);
    // A Unicode host is asked about as it will be looked up.
    fromView({ jsonrpc: "2.0", id: 48, method: "ui/open-link", params: { url: "https://bücher.example/a" } });
    await settle();
    expect(openLink).toHaveBeenCalledWith("https://xn--bcher-kva.example/a");
  });

  it("answers an open-link the user declined with an error, and one opened with {}", async () => {
    let yes = false;
    const { frame, handshake, fromView } = setup({ openLink: () => Promise.resolve(yes) });
    handshake();
    fromView({ jsonrpc: "2.0", id: 51, method: "ui/open-link", params: { url: "https://modelcontextprotocol.io/" } });
    await settle();
    yes = true;
    fromView({ jsonrpc: "2.0", id: 52, method: "ui/open-link", params: { url: "https://modelcontextprotocol.io/" } });
    await settle();
    expect(frame.messages().slice(-2)).toEqual([
      { jsonrpc: "2.0", id: 51, error: { code: ERROR.refused, message: expect.any(String) } },
      { jsonrpc: "2.0", id: 52, result: {} },
    ]);
  });

  it("takes a ui/message's content as one block or a list, and answers isError when dismissed", async () => {
    const texts: string[] = [];
    let accept = true;
    const { frame, handshake, fromView } = setup({
      message: (text) => {
        texts.push(text);
        return Promise.resolve(accept);
      },
    });
    handshake();
    fromView({ jsonrpc: "2.0", id: 61, method: "ui/message", params: { role: "user", content: { type: "text", text: "one block" } } });
    fromView({ jsonrpc: "2.0", id: 62, method: "ui/message", params: { role: "user", content: [{ type: "text", text: "first" }, { type: "text", text: "second" }] } });
    await settle();
    accept = false;
    fromView({ jsonrpc: "2.0", id: 63, method: "ui/message", params: { role: "user", content: [{ type: "text", text: "no" }] } });
    await settle();
    expect(texts).toEqual(["one block", "first\nsecond", "no"]);
    expect(frame.messages().slice(-3)).toEqual([
      { jsonrpc: "2.0", id: 61, result: {} },
      { jsonrpc: "2.0", id: 62, result: {} },
      { jsonrpc: "2.0", id: 63, result: { isError: true } },
    ]);
  });

  it("keeps the latest model context, and passes a call's refusal back as its error", async () => {
    const { frame, host, handshake, fromView } = setup({ callTool: () => Promise.reject({ code: "views", message: "This view is closed." }) });
    handshake();
    fromView({ jsonrpc: "2.0", id: 71, method: "ui/update-model-context", params: { content: [{ type: "text", text: "Showing 12:00 UTC" }], structuredContent: { zone: "UTC" } } });
    fromView({ jsonrpc: "2.0", id: 72, method: "tools/call", params: { name: "get-time", arguments: {} } });
    await settle();
    expect(host.context).toEqual(['Showing 12:00 UTC\n{"zone":"UTC"}']);
    expect(frame.messages().slice(-2)).toEqual([
      { jsonrpc: "2.0", id: 71, result: {} },
      { jsonrpc: "2.0", id: 72, error: { code: ERROR.refused, message: "This view is closed." } },
    ]);
  });

  describe("teardown", () => {
    beforeEach(() => vi.useFakeTimers());
    afterEach(() => vi.useRealTimers());

    it("asks the view first and ends when it answers", async () => {
      const { frame, bridge, handshake, fromView } = setup();
      handshake();
      let done = false;
      const teardown = bridge.teardown("closed").then(() => (done = true));
      const asked = frame.messages().at(-1)!;
      expect(asked).toMatchObject({ jsonrpc: "2.0", method: "ui/resource-teardown", params: { reason: "closed" } });
      await Promise.resolve();
      expect(done).toBe(false);
      fromView({ jsonrpc: "2.0", id: asked.id, result: {} });
      await teardown;
      expect(done).toBe(true);
      // Stopped: nothing more goes to the view.
      expect(bridge.notify("ui/notifications/tool-result", { content: [] })).toBe(false);
    });

    it("ends after the wait when the view does not answer", async () => {
      const { frame, bridge, handshake } = setup();
      handshake();
      let done = false;
      const teardown = bridge.teardown("closed").then(() => (done = true));
      await vi.advanceTimersByTimeAsync(TEARDOWN_WAIT_MS - 1);
      expect(done).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      await teardown;
      expect(done).toBe(true);
      expect(frame.messages().filter((message) => message.method === "ui/resource-teardown")).toHaveLength(1);
    });

    it("sends nothing to a view that never finished its handshake", async () => {
      const { frame, bridge } = setup();
      await bridge.teardown("closed");
      expect(frame.sent).toEqual([]);
    });
  });
  describe("what the 2.0.4 SDK and the next one send", () => {
    const download = (id: number, contents: unknown) => ({ jsonrpc: "2.0", id, method: "ui/download-file", params: { contents } });

    it("attack_views_download_other_than_http_or_inline_is_refused_without_asking", async () => {
      const downloadFile = vi.fn(() => Promise.resolve(true));
      const { frame, handshake, fromView } = setup({ downloadFile });
      handshake();
      const link = (uri: string) => [{ type: "resource_link", uri, name: "x.csv" }];
      const asks: [number, unknown][] = [
        [61, link("file:///etc/passwd")],
        [62, link("javascript:alert(1)")],
        [63, link("https://bank.example@evil.example/x.csv")],
        [64, link("tauri://localhost/")],
        [65, []],
        [66, [...link("https://example.com/a.csv"), ...link("https://example.com/b.csv")]],
        [67, [{ type: "text", text: "not a file" }]],
        [68, "not a list"],
      ];
      for (const [id, contents] of asks) fromView(download(id, contents));
      await settle();
      expect(downloadFile).not.toHaveBeenCalled();
      const answers = frame.messages().filter((message) => typeof message.id === "number" && message.id > 60);
      expect(answers.map((message) => (message.error as { code: number }).code)).toEqual(asks.map(() => ERROR.refused));
      expect((answers[0]!.error as { message: string }).message).toBe("Only files from http and https addresses, or handed over inline, are saved.");
      expect((answers[2]!.error as { message: string }).message).toBe("Addresses that carry a user name or password are not downloaded.");
    });

    it("attack_views_oversized_data_url_download_is_dropped_unread", async () => {
      const downloadFile = vi.fn(() => Promise.resolve(true));
      const { frame, handshake, fromView } = setup({ downloadFile });
      handshake();
      const sent = frame.sent.length;
      fromView(download(69, [{ type: "resource_link", uri: `data:text/plain,${"a".repeat(MAX_MESSAGE_CHARS)}`, name: "big.txt" }]));
      await settle();
      expect(downloadFile).not.toHaveBeenCalled();
      expect(frame.sent.length).toBe(sent);
    });

    it("asks about a linked or embedded file and answers {} when saved, isError when not", async () => {
      const asked: DownloadAsk[] = [];
      let saved = true;
      const { frame, handshake, fromView } = setup({
        downloadFile: (ask) => {
          asked.push(ask);
          return Promise.resolve(saved);
        },
      });
      handshake();
      fromView(download(71, [{ type: "resource_link", uri: "https://bücher.example/exports/report.csv", name: "report.csv", mimeType: "text/csv" }]));
      await settle();
      saved = false;
      fromView(download(72, [{ type: "resource", resource: { uri: "file:///tmp/notes.txt", mimeType: "text/plain", text: "héllo" } }]));
      fromView(download(73, [{ type: "resource", resource: { uri: "ui://app/chart.png", mimeType: "image/png", blob: "iVBORw0KGgo=" } }]));
      await settle();
      expect(asked).toEqual([
        { file: { name: "report.csv", mime_type: "text/csv", source: { kind: "url", url: "https://xn--bcher-kva.example/exports/report.csv" } }, name: "report.csv", host: "xn--bcher-kva.example" },
        // An embedded resource's address is only its name: nothing is read from it.
        { file: { name: "notes.txt", mime_type: "text/plain", source: { kind: "text", text: "héllo" } }, name: "notes.txt", size: 6 },
        { file: { name: "chart.png", mime_type: "image/png", source: { kind: "blob", blob: "iVBORw0KGgo=" } }, name: "chart.png", size: 9 },
      ]);
      expect(frame.messages().slice(-3)).toEqual([
        { jsonrpc: "2.0", id: 71, result: {} },
        { jsonrpc: "2.0", id: 72, result: { isError: true } },
        { jsonrpc: "2.0", id: 73, result: { isError: true } },
      ]);
    });

    it("attack_views_teardown_request_from_another_frame_or_before_the_handshake_is_ignored", async () => {
      const requestTeardown = vi.fn();
      const { app, handshake, fromView } = setup({ requestTeardown });
      const other = new Frame();
      const teardown = { jsonrpc: "2.0", method: "ui/notifications/request-teardown", params: {} };
      fromView(teardown);
      app.deliver(teardown, { source: other, origin: ORIGIN });
      handshake();
      app.deliver(teardown, { source: other, origin: ORIGIN });
      app.deliver(teardown, { source: {}, origin: "http://127.0.0.1:40124" });
      expect(requestTeardown).not.toHaveBeenCalled();
      // Its own view, after the handshake: closed, once however often it asks.
      fromView(teardown);
      fromView(teardown);
      expect(requestTeardown).toHaveBeenCalledTimes(1);
    });

    it("takes ui/log as notifications/message, and answers MCP's initialize without unlocking anything", async () => {
      const { frame, bridge, host, fromView, handshake } = setup();
      fromView({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: { extensions: { [APPS_EXTENSION]: {} } }, clientInfo: { name: "next" } } });
      fromView({ jsonrpc: "2.0", method: "notifications/initialized" });
      fromView({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
      expect(bridge.initialized).toBe(false);
      expect(frame.messages()[0]).toEqual({
        jsonrpc: "2.0",
        id: 1,
        result: {
          protocolVersion: "2025-11-25",
          capabilities: { tools: {}, resources: {}, logging: {}, extensions: { [APPS_EXTENSION]: {} } },
          serverInfo: { name: "Tooltrail", version: "test" },
        },
      });
      handshake();
      expect(bridge.initialized).toBe(true);
      fromView({ jsonrpc: "2.0", method: "ui/log", params: { level: "info", data: "from the next SDK" } });
      fromView({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "from 2.0.4" } });
      expect(host.logs).toEqual(["from the next SDK", "from 2.0.4"]);
      // The host's calls of a view's own tools go the other way; a view that sends them is told so.
      fromView({ jsonrpc: "2.0", id: 9, method: "ui/call-view-tool", params: { name: "x" } });
      await settle();
      expect(frame.messages().at(-1)).toMatchObject({ id: 9, error: { code: ERROR.methodNotFound } });
    });

    it("attack_views_oversized_partial_input_is_not_sent", () => {
      const { frame, bridge, handshake } = setup();
      expect(bridge.notifyPartialInput({ query: "wea" })).toBe(false);
      handshake();
      expect(bridge.notifyPartialInput({ query: "wea" })).toBe(true);
      expect(bridge.notifyPartialInput({ query: "x".repeat(MAX_PARTIAL_INPUT_CHARS) })).toBe(false);
      expect(frame.messages().filter((message) => message.method === "ui/notifications/tool-input-partial")).toEqual([
        { jsonrpc: "2.0", method: "ui/notifications/tool-input-partial", params: { arguments: { query: "wea" } } },
      ]);
    });
  });
});
