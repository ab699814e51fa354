// A view's frame and the bridge's life with it: the sandboxed iframe on the view's own origin,
// the handshake, the call's input and result sent in order, the frame's height, full screen,
// and the bars Tooltrail draws under the frame when the view asks to open a link, to save a file
// or to send a message. Nothing of Tooltrail's is drawn inside the frame's rectangle.
import { useCallback, useEffect, useImperativeHandle, useLayoutEffect, useRef, useState, type Ref } from "react";
import type { JsonValue } from "../../bindings";
import { api, errorMessage } from "../../api";
import { useI18n } from "../../i18n";
import type { CallView } from "../../state/chat";
import { MAX_PARTIAL_INPUT_CHARS, ViewBridge, type BridgeHost, type DisplayMode, type DownloadAsk } from "../../views/bridge";
import { contextChanges, hostContext, sandboxCsp, type HostDisplayMode } from "../../views/hostContext";
import { useTheme, type ViewHost } from "../../views/host";
import { checkLink } from "../../views/links";
import { setViewContext } from "../../views/modelContext";
import { partialArguments } from "../../views/partialInput";
import { viewGone, viewOpened } from "../../views/openViews";
import type { ViewEnd, ViewPermission, ViewPlan, ViewStart } from "../../views/types";

/** How long a view has to finish its handshake before it is closed as not starting. */
export const START_WAIT_MS = 10_000;
export const MIN_HEIGHT = 80;
export const MAX_HEIGHT = 800;
/** The view's log kept in memory: lines, and characters a line. */
const LOG_LINES = 200;
const LOG_LINE_CHARS = 1024;

const PERMISSIONS: readonly ViewPermission[] = ["camera", "microphone", "geolocation", "clipboard-write"];

export interface FrameHandle {
  /** Tells the view it is going and waits (at most 2 s) for its answer. */
  teardown: (reason: string) => Promise<void>;
}

interface Props {
  call: CallView;
  plan: ViewPlan;
  start: ViewStart;
  granted: string[];
  host: ViewHost;
  /** Full screen: the card draws its overlay and keeps the label strip. */
  mode: HostDisplayMode;
  onMode: (mode: HostDisplayMode) => void;
  /** The frame ended the view by itself (it navigated, did not start, or flooded). */
  onEnd: (reason: ViewEnd) => void;
  /** The view asked to be closed (`ui/notifications/request-teardown`): closed as by Close. */
  onRequestClose: () => void;
  /** The frame is going: `done` settles once the view answered its teardown or the wait ran out. */
  onGone: (done: Promise<void>) => void;
  handle: Ref<FrameHandle>;
}

interface LinkAsk {
  id: number;
  /** The address as it opens (checked by `checkLink`). */
  url: string;
  /** Its host as it will be looked up (ASCII, `xn--` for a Unicode name), shown emphasised. */
  host: string;
  answer: (opened: boolean) => void;
  error?: string;
}

interface FileAsk extends DownloadAsk {
  id: number;
  answer: (saved: boolean) => void;
  error?: string;
  busy?: boolean;
}

interface MessageAsk {
  id: number;
  text: string;
  answer: (sent: boolean) => void;
  busy?: boolean;
}

/** The CallToolResult a call ended with: the MCP result whole when the call kept it (an MCP
 * tool's data is `{server, tool, result}`), else its text. */
export function callToolResult(call: CallView): JsonValue {
  const data = call.data;
  const result = data && typeof data === "object" && !Array.isArray(data) ? (data as { result?: unknown }).result : undefined;
  if (call.phase === "success" && result && typeof result === "object" && !Array.isArray(result) && Array.isArray((result as { content?: unknown }).content)) {
    return result as JsonValue;
  }
  return { content: [{ type: "text", text: call.result ?? "" }], isError: call.phase !== "success" };
}

function isFinal(phase: CallView["phase"]): boolean {
  return phase !== "streaming" && phase !== "waiting" && phase !== "running";
}

/** Stands for the host in the translated sentence, which is split around it. */
const HOST_MARK = "\u0000host\u0000";

/** A size as a reader wants it. */
function sizeText(t: (key: "viewSizeBytes" | "viewSizeKiB" | "viewSizeMiB", vars: { count: string }) => string, bytes: number): string {
  if (bytes < 1024) return t("viewSizeBytes", { count: String(bytes) });
  if (bytes < 1024 * 1024) return t("viewSizeKiB", { count: (bytes / 1024).toFixed(1) });
  return t("viewSizeMiB", { count: (bytes / 1024 / 1024).toFixed(1) });
}

/** The link's question with its host emphasised where the sentence names it. */
function LinkAsk({ text, host }: { text: string; host: string }) {
  const [before, after = ""] = text.split(HOST_MARK);
  return (
    <>
      {before}
      <strong className="view-link-host">{host}</strong>
      {after}
    </>
  );
}

export function ViewFrame({ call, plan, start, granted, host, mode, onMode, onEnd, onRequestClose, onGone, handle }: Props) {
  const { t, lang } = useI18n();
  const theme = useTheme();
  const frame = useRef<HTMLIFrameElement>(null);
  const box = useRef<HTMLDivElement>(null);
  const bridgeRef = useRef<ViewBridge | null>(null);
  const goneTimer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const [height, setHeight] = useState(MIN_HEIGHT * 2);
  const [width, setWidth] = useState(0);
  const [boxHeight, setBoxHeight] = useState(0);
  const [links, setLinks] = useState<LinkAsk[]>([]);
  const [files, setFiles] = useState<FileAsk[]>([]);
  const [savedNote, setSavedNote] = useState<string | null>(null);
  const [messages, setMessages] = useState<MessageAsk[]>([]);
  const [log, setLog] = useState<string[]>([]);
  const [ready, setReady] = useState(false);
  const asks = useRef(0);

  // What the bridge's callbacks read as it is now.
  const live = useRef({ call, mode, theme, lang, width, boxHeight, onEnd, onMode, onGone, onRequestClose, host });
  useLayoutEffect(() => {
    live.current = { call, mode, theme, lang, width, boxHeight, onEnd, onMode, onGone, onRequestClose, host };
  });

  const context = useCallback(() => {
    const now = live.current;
    return hostContext({
      theme: now.theme,
      lang: now.lang,
      version: now.host.version,
      displayMode: now.mode,
      width: now.width,
      ...(now.mode === "fullscreen" ? { height: now.boxHeight } : {}),
      callId: now.call.callId,
      tool: plan.tool_info as JsonValue,
      hover: window.matchMedia?.("(hover: hover)").matches ?? true,
      touch: window.matchMedia?.("(pointer: coarse)").matches ?? false,
    });
  }, [plan.tool_info]);
  const sentContext = useRef<Record<string, JsonValue> | null>(null);
  // What has been sent of the call: the arguments as the model writes them (the text last
  // sent), its input once, then its result or its cancellation once.
  const sent = useRef({ partial: "", input: false, outcome: false });

  /** While the model writes the call, what it wrote so far; then the whole input, once. */
  const sendInput = useCallback(() => {
    const bridge = bridgeRef.current;
    if (!bridge?.initialized || sent.current.input) return;
    const now = live.current.call;
    if (now.phase === "streaming") {
      if (now.argumentsText === sent.current.partial || now.argumentsText.length > MAX_PARTIAL_INPUT_CHARS) return;
      const partial = partialArguments(now.argumentsText);
      if (!partial) return;
      sent.current.partial = now.argumentsText;
      bridge.notifyPartialInput(partial);
      return;
    }
    sent.current.input = true;
    // A live call's view may have opened before its arguments were whole: the call's own.
    const args = now.arguments && typeof now.arguments === "object" && !Array.isArray(now.arguments) ? now.arguments : (plan.input as JsonValue);
    bridge.notify("ui/notifications/tool-input", { arguments: args });
  }, [plan.input]);

  const sendOutcome = useCallback(() => {
    const bridge = bridgeRef.current;
    if (!bridge?.initialized || !sent.current.input || sent.current.outcome) return;
    const outcome = plan.outcome;
    const now = live.current.call;
    if (outcome.kind === "result") {
      bridge.notify("ui/notifications/tool-result", outcome.result as Record<string, JsonValue>);
    } else if (outcome.kind === "cancelled") {
      bridge.notify("ui/notifications/tool-cancelled", { reason: outcome.reason });
    } else if (now.phase === "cancelled") {
      bridge.notify("ui/notifications/tool-cancelled", { reason: now.error?.message ?? "The call was stopped." });
    } else if (isFinal(now.phase)) {
      bridge.notify("ui/notifications/tool-result", callToolResult(now) as Record<string, JsonValue>);
    } else {
      return;
    }
    sent.current.outcome = true;
  }, [plan.outcome]);

  // The bridge listens before the frame's page can speak, and goes with the frame.
  useLayoutEffect(() => {
    const bridgeHost: BridgeHost = {
      initializeResult: () => {
        const hostContextNow = context();
        sentContext.current = hostContextNow;
        const permissions = Object.fromEntries(granted.map((name) => [name === "clipboard-write" ? "clipboardWrite" : name, {}]));
        return {
          protocolVersion: "2026-01-26",
          hostInfo: { name: "Tooltrail", version: live.current.host.version },
          hostCapabilities: { openLinks: {}, downloadFile: {}, serverTools: {}, serverResources: {}, logging: {}, sandbox: { permissions, csp: sandboxCsp(start.csp) } },
          hostContext: hostContextNow,
        };
      },
      initialized: () => {
        setReady(true);
        const bridge = bridgeRef.current;
        if (!bridge) return;
        sendInput();
        sendOutcome();
      },
      displayMode: (): DisplayMode => live.current.mode,
      setDisplayMode: (next) => {
        live.current.mode = next;
        live.current.onMode(next);
        return next;
      },
      openLink: (url) => {
        const link = checkLink(url);
        if (!link.ok) return Promise.resolve(false);
        return new Promise<boolean>((resolve) => {
          const id = ++asks.current;
          setLinks((old) => [...old, { id, url: link.href, host: link.host, answer: resolve }]);
        });
      },
      downloadFile: (file) =>
        new Promise<boolean>((resolve) => {
          const id = ++asks.current;
          setFiles((old) => [...old, { ...file, id, answer: resolve }]);
        }),
      requestTeardown: () => live.current.onRequestClose(),
      message: (text) =>
        new Promise<boolean>((resolve) => {
          const id = ++asks.current;
          setMessages((old) => [...old, { id, text, answer: resolve }]);
        }),
      updateModelContext: (text) => setViewContext(plan.view_id, plan.server, plan.tool, text),
      callTool: (name, args) => api.viewCallTool(plan.view_id, name, args),
      readResource: (uri) => api.viewReadResource(plan.view_id, uri),
      sizeChanged: (_width, next) => {
        if (next === undefined) return;
        setHeight(Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, Math.round(next))));
      },
      log: (level, text) => {
        const line = `${level}: ${text}`.slice(0, LOG_LINE_CHARS);
        setLog((old) => [...old.slice(Math.max(0, old.length - LOG_LINES + 1)), line]);
      },
      close: (reason) => live.current.onEnd(reason),
    };
    // Mounted again at once (React's development checks unmount and remount every component):
    // the same frame, so the same bridge.
    let bridge = bridgeRef.current;
    if (bridge && goneTimer.current !== null) {
      clearTimeout(goneTimer.current);
      goneTimer.current = null;
    } else {
      bridge = new ViewBridge({ listenOn: window, frame: () => frame.current?.contentWindow ?? null, origin: start.origin, host: bridgeHost });
      bridgeRef.current = bridge;
      bridge.start();
    }
    const mine = bridge;
    // The frame is leaving the page: the view is told (a view that never started is not), and
    // the card closes it on the record once it answered or the wait ran out.
    return () => {
      goneTimer.current = setTimeout(() => {
        goneTimer.current = null;
        if (bridgeRef.current === mine) bridgeRef.current = null;
        live.current.onGone(mine.teardown("closed"));
      }, 0);
    };
  }, [context, granted, plan, sendInput, sendOutcome, start]);

  useImperativeHandle(handle, () => ({ teardown: (reason) => bridgeRef.current?.teardown(reason) ?? Promise.resolve() }), []);

  // Open, its card is kept mounted while it scrolls out of sight.
  useEffect(() => {
    viewOpened(call.callId);
    return () => viewGone(call.callId);
  }, [call.callId]);

  // A view that has not finished its handshake in time did not start.
  useEffect(() => {
    if (ready) return;
    const timer = setTimeout(() => live.current.onEnd("unresponsive"), START_WAIT_MS);
    return () => clearTimeout(timer);
  }, [ready]);

  // A live call's arguments reach the view as the model writes them, its input when the call
  // starts or waits, its result when it ends.
  useEffect(() => {
    if (!ready) return;
    sendInput();
    if (isFinal(call.phase)) sendOutcome();
  }, [ready, call.phase, call.argumentsText, call.arguments, sendInput, sendOutcome]);

  // The frame's size as laid out, for the host context.
  useLayoutEffect(() => {
    const element = box.current;
    if (!element) return;
    const measure = () => {
      setWidth(element.clientWidth);
      setBoxHeight(element.clientHeight);
    };
    measure();
    if (typeof ResizeObserver === "undefined") return;
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  // Theme, language, size and mode changes after the handshake: only what changed is sent.
  useEffect(() => {
    const bridge = bridgeRef.current;
    if (!ready || !bridge?.initialized || !sentContext.current) return;
    const now = context();
    const changes = contextChanges(sentContext.current, now);
    if (!changes) return;
    sentContext.current = now;
    bridge.notify("ui/notifications/host-context-changed", changes);
  }, [ready, theme, lang, mode, width, boxHeight, context]);

  // Links, files and messages still asked about when the frame goes are answered no.
  const pending = useRef({ links, files, messages });
  useEffect(() => {
    pending.current = { links, files, messages };
  });
  useEffect(
    () => () => {
      for (const ask of pending.current.links) ask.answer(false);
      for (const ask of pending.current.files) ask.answer(false);
      for (const ask of pending.current.messages) ask.answer(false);
    },
    [],
  );

  const answerLink = (ask: LinkAsk, open: boolean) => {
    if (!open) {
      ask.answer(false);
      setLinks((old) => old.filter((known) => known.id !== ask.id));
      return;
    }
    api.openViewLink(plan.view_id, ask.url).then(
      () => {
        ask.answer(true);
        setLinks((old) => old.filter((known) => known.id !== ask.id));
      },
      (error: unknown) => {
        ask.answer(false);
        setLinks((old) => old.map((known) => (known.id === ask.id ? { ...known, error: errorMessage(error) } : known)));
      },
    );
  };

  const answerFile = (ask: FileAsk, save: boolean) => {
    const gone = () => setFiles((old) => old.filter((known) => known.id !== ask.id));
    if (!save) {
      ask.answer(false);
      gone();
      return;
    }
    setFiles((old) => old.map((known) => (known.id === ask.id ? { ...known, busy: true, error: undefined } : known)));
    api.saveViewFile(plan.view_id, ask.file).then(
      (saved) => {
        ask.answer(saved !== null);
        gone();
        if (saved) setSavedNote(t("viewDownloadSaved", { name: ask.name, path: saved.path }));
      },
      (error: unknown) => {
        ask.answer(false);
        setFiles((old) => old.map((known) => (known.id === ask.id ? { ...known, busy: false, error: errorMessage(error) } : known)));
      },
    );
  };
  const answerMessage = (ask: MessageAsk, send: boolean) => {
    if (send && !host.ask(ask.text)) {
      setMessages((old) => old.map((known) => (known.id === ask.id ? { ...known, busy: true } : known)));
      return;
    }
    ask.answer(send);
    setMessages((old) => old.filter((known) => known.id !== ask.id));
  };

  const allow = granted.filter((name): name is ViewPermission => (PERMISSIONS as readonly string[]).includes(name)).join("; ");
  // The first load is the view's page; any other is the frame going somewhere else.
  const onLoad = () => bridgeRef.current?.frameLoaded();

  return (
    <>
      <div
        ref={box}
        className={`view-frame-box${plan.prefers_border === false ? " borderless" : ""}`}
        style={mode === "fullscreen" ? undefined : { height }}
        data-testid="view-frame-box"
      >
        <iframe
          ref={frame}
          className="view-frame"
          src={start.url}
          title={t("viewFrameTitle", { tool: plan.tool, server: plan.server })}
          sandbox="allow-scripts allow-same-origin allow-forms"
          {...(allow ? { allow } : {})}
          referrerPolicy="no-referrer"
          data-view-id={plan.view_id}
          onLoad={onLoad}
        />
      </div>
      {links.map((ask) => (
        <div className="view-bar" role="group" aria-label={t("viewOpenLinkAsk", { host: ask.host })} key={`link-${ask.id}`} data-testid="view-link-bar">
          <span className="view-bar-text">
            <LinkAsk text={t("viewOpenLinkAsk", { host: HOST_MARK })} host={ask.host} />
          </span>
          <span className="view-bar-text muted view-link-address">{t("viewOpenLinkAddress", { url: ask.url })}</span>
          {ask.error && <span className="view-bar-error">{t("viewLinkFailed", { message: ask.error })}</span>}
          <span className="view-bar-actions">
            <button type="button" className="primary" onClick={() => answerLink(ask, true)}>
              {t("viewOpenLink")}
            </button>
            <button type="button" onClick={() => answerLink(ask, false)}>
              {t("viewCancel")}
            </button>
          </span>
        </div>
      ))}
      {files.map((ask) => {
        const question = ask.host ? t("viewDownloadAsk", { host: HOST_MARK, name: ask.name }) : t("viewDownloadAskInline", { name: ask.name, size: sizeText(t, ask.size ?? 0) });
        const label = ask.host ? t("viewDownloadAsk", { host: ask.host, name: ask.name }) : question;
        return (
          <div className="view-bar" role="group" aria-label={label} key={`file-${ask.id}`} data-testid="view-download-bar">
            <span className="view-bar-text">{ask.host ? <LinkAsk text={question} host={ask.host} /> : question}</span>
            {ask.file.source.kind === "url" && ask.host && <span className="view-bar-text muted view-link-address">{t("viewOpenLinkAddress", { url: ask.file.source.url })}</span>}
            {ask.error && <span className="view-bar-error">{t("viewDownloadFailed", { message: ask.error })}</span>}
            <span className="view-bar-actions">
              <button type="button" className="primary" disabled={ask.busy} onClick={() => answerFile(ask, true)}>
                {t("viewDownloadSave")}
              </button>
              <button type="button" onClick={() => answerFile(ask, false)}>
                {t("viewCancel")}
              </button>
            </span>
          </div>
        );
      })}
      {savedNote && (
        <p className="view-note muted" role="status" data-testid="view-download-saved">
          {savedNote}
        </p>
      )}
      {messages.map((ask) => (
        <div className="view-bar" role="group" aria-label={t("viewMessageAsk")} key={`message-${ask.id}`}>
          <span className="view-bar-text">{t("viewMessageAsk")}</span>
          <pre className="view-bar-message">{ask.text}</pre>
          {ask.busy && <span className="view-bar-error">{t("viewMessageBusy")}</span>}
          <span className="view-bar-actions">
            <button type="button" className="primary" onClick={() => answerMessage(ask, true)}>
              {t("viewMessageSend")}
            </button>
            <button type="button" onClick={() => answerMessage(ask, false)}>
              {t("viewMessageDismiss")}
            </button>
          </span>
        </div>
      ))}
      {log.length > 0 && (
        <details className="view-log">
          <summary>{t("viewLog", { count: log.length })}</summary>
          <pre>{log.join("\n")}</pre>
        </details>
      )}
    </>
  );
}
