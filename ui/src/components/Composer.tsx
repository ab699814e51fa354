// The question box: Enter sends, Shift+Enter starts a new line; Stop (or Esc) ends a turn.
// `@` opens a list of the folder's files and the MCP servers' resources to attach (shown as
// chips above the text); `/` at the start opens the servers' prompts, whose arguments a small
// form asks for (with the server's completions) before their messages are put in the box.
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, type ReactNode } from "react";
import type { AttachmentSource, McpContent, PromptItem } from "../bindings";
import { api, errorMessage } from "../api";
import { useI18n } from "../i18n";
import { stopListening } from "../listening";
import { Chips, chipKey, type Chip } from "./composer/Chips";
import { Picker, optionId, type PickerGroup } from "./composer/Picker";
import { PromptForm } from "./composer/PromptForm";
import { useCaretRest } from "./composer/caretRest";
import { ViewContextChips } from "./views/ViewContextChips";
import { takeViewContexts } from "../views/modelContext";

interface Props {
  folder: string;
  busy: boolean;
  onSend: (text: string, attachments: AttachmentSource[]) => void;
  onStop: () => void;
  /** Shown on the hint's line, at its end: the context meter. */
  status?: ReactNode;
}

/** What the text before the caret opens: `@query` anywhere after a space, `/query` at the start. */
interface Trigger {
  kind: "@" | "/";
  query: string;
  /** Where the `@` or `/` is. */
  start: number;
}

export function triggerAt(text: string, caret: number): Trigger | null {
  const before = text.slice(0, caret);
  const slash = /^\/([^\s/]*)$/.exec(before);
  if (slash) return { kind: "/", query: slash[1] ?? "", start: 0 };
  const at = /(^|\s)@([^\s@]*)$/.exec(before);
  if (at) {
    const query = at[2] ?? "";
    return { kind: "@", query, start: before.length - query.length - 1 };
  }
  return null;
}

const LIST_ID = "composer-picker-list";
/** Resources and prompts listed at most. */
const MAX_LISTED = 30;

function matches(query: string, ...fields: (string | undefined)[]): boolean {
  const needle = query.toLowerCase();
  return fields.some((field) => field?.toLowerCase().includes(needle));
}

export function Composer({ folder, busy, onSend, onStop, status }: Props) {
  const { t } = useI18n();
  const [text, setText] = useState("");
  const [caret, setCaret] = useState(0);
  const [chips, setChips] = useState<Chip[]>([]);
  const [content, setContent] = useState<McpContent | null>(null);
  // The files found, and the query they were found for (older answers are not shown).
  const [found, setFound] = useState<{ query: string; files: string[] } | null>(null);
  const [active, setActive] = useState(0);
  const [closed, setClosed] = useState<Trigger | null>(null);
  const [prompt, setPrompt] = useState<PromptItem | null>(null);
  const area = useRef<HTMLTextAreaElement>(null);

  useEffect(() => {
    area.current?.focus();
  }, []);
  // Left alone with no question running, the box lets its caret rest (it blinks a frame a blink).
  useCaretRest(area, !busy);

  const open = triggerAt(text, caret);
  // Esc closes the list until the text before the caret changes.
  const trigger = open && !(closed && closed.kind === open.kind && closed.start === open.start && closed.query === open.query) ? open : null;

  // The servers' resources and prompts, asked for once a list first opens (and again when the
  // servers change).
  useEffect(() => {
    if (!trigger || content) return;
    let live = true;
    api
      .mcpContent()
      .then((found) => live && setContent(found))
      .catch(() => live && setContent({ resources: [], prompts: [], problems: [] }));
    return () => {
      live = false;
    };
  }, [trigger, content]);
  useEffect(() => {
    return stopListening(api.onMcpChanged(() => setContent(null)));
  }, []);

  const fileQuery = trigger?.kind === "@" ? trigger.query : null;
  useEffect(() => {
    if (fileQuery === null) return;
    let live = true;
    const timer = setTimeout(() => {
      api
        .workspaceFiles(fileQuery)
        .then((files) => live && setFound({ query: fileQuery, files }))
        .catch(() => live && setFound({ query: fileQuery, files: [] }));
    }, 80);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [fileQuery]);

  const files = found && found.query === fileQuery ? found.files : null;

  const read = useCallback((key: string, source: AttachmentSource, updated: boolean) => {
    api
      .readAttachment(source)
      .then((attachment) =>
        setChips((old) => old.map((chip) => (chip.key === key ? { ...chip, attachment, error: undefined, updated: chip.updated || updated } : chip))),
      )
      .catch((error: unknown) => setChips((old) => old.map((chip) => (chip.key === key ? { ...chip, error: errorMessage(error) } : chip))));
  }, []);

  // A server said an attached resource changed: read it again and say so on its chip.
  useEffect(() => {
    const unlisten = api
      .onResourceUpdated((update) => {
      const key = chipKey({ kind: "resource", server: update.server, uri: update.uri });
      setChips((old) => {
        const chip = old.find((candidate) => candidate.key === key);
        if (chip) read(key, chip.source, true);
        return old;
      });
      })
      .catch(() => null);
    return () => void unlisten.then((stop) => stop?.());
  }, [read]);

  type Choice = { kind: "file"; path: string } | { kind: "resource"; server: string; uri: string; name: string } | { kind: "prompt"; prompt: PromptItem };

  const { groups, choices } = useMemo(() => {
    const groups: PickerGroup[] = [];
    const choices: Choice[] = [];
    if (!trigger) return { groups, choices };
    if (trigger.kind === "@") {
      const fileOptions = (files ?? []).slice(0, MAX_LISTED).map((path) => {
        choices.push({ kind: "file", path });
        return { id: `file:${path}`, label: path };
      });
      groups.push({ label: t("pickerFiles"), options: fileOptions });
      const resources = (content?.resources ?? [])
        .filter((item) => !item.template && matches(trigger.query, item.name, item.title ?? undefined, item.uri))
        .slice(0, MAX_LISTED);
      groups.push({
        label: t("pickerResources"),
        options: resources.map((item) => {
          choices.push({ kind: "resource", server: item.server, uri: item.uri, name: item.title ?? item.name });
          return { id: `${item.server}:${item.uri}`, label: item.title ?? item.name, detail: `${item.server} · ${item.uri}` };
        }),
      });
    } else {
      const prompts = (content?.prompts ?? []).filter((item) => matches(trigger.query, item.name, item.title ?? undefined)).slice(0, MAX_LISTED);
      groups.push({
        label: t("pickerPrompts"),
        options: prompts.map((item) => {
          choices.push({ kind: "prompt", prompt: item });
          return { id: `${item.server}/${item.name}`, label: `/${item.name}`, detail: `${item.server}${item.description ? ` · ${item.description}` : ""}` };
        }),
      });
    }
    return { groups, choices };
  }, [trigger, files, content, t]);

  const shown = Math.min(active, Math.max(0, choices.length - 1));

  // Where the caret goes once new text is in the box: placed as the text is committed, before
  // the next key is handled (a caret placed a frame later moved keys typed in between).
  const caretAfter = useRef<number | null>(null);
  useLayoutEffect(() => {
    const at = caretAfter.current;
    const box = area.current;
    if (at === null || !box) return;
    caretAfter.current = null;
    box.focus();
    box.setSelectionRange(at, at);
  });

  const setTextAt = (next: string, at: number) => {
    setText(next);
    setCaret(at);
    caretAfter.current = at;
  };

  const insertPrompt = async (item: PromptItem, values: Record<string, string>) => {
    const messages = await api.getMcpPrompt(item.server, item.name, values);
    const body = messages.map((message) => (message.role === "assistant" ? t("promptAssistant", { text: message.text }) : message.text)).join("\n\n");
    setPrompt(null);
    setTextAt(body, body.length);
  };

  const choose = (index: number) => {
    const choice = choices[index];
    if (!choice || !trigger) return;
    // The `@query` or `/query` typed goes; what it chose takes its place.
    const rest = text.slice(0, trigger.start) + text.slice(caret);
    setActive(0);
    if (choice.kind === "prompt") {
      setText(rest);
      setCaret(0);
      // Even a prompt without arguments is shown first: what it is, and Insert.
      setPrompt(choice.prompt);
      return;
    }
    const source: AttachmentSource = choice.kind === "file" ? { kind: "file", path: choice.path } : { kind: "resource", server: choice.server, uri: choice.uri };
    const key = chipKey(source);
    const name = choice.kind === "file" ? (choice.path.split("/").pop() ?? choice.path) : choice.name;
    setTextAt(rest, trigger.start);
    setChips((old) => (old.some((chip) => chip.key === key) ? old : [...old, { key, source, name }]));
    read(key, source, false);
  };

  const ready = chips.every((chip) => chip.attachment && !chip.error);
  const send = () => {
    if (busy || !text.trim() || !ready) return;
    // The views' latest context goes with the question, and is then spent.
    onSend(text, [...chips.map((chip) => chip.source), ...takeViewContexts()]);
    setText("");
    setCaret(0);
    setChips([]);
  };

  return (
    <form
      className="composer"
      onSubmit={(event) => {
        event.preventDefault();
        send();
      }}
    >
      <div className="composer-top">
        <Chips chips={chips} onRemove={(key) => setChips((old) => old.filter((chip) => chip.key !== key))} />
        <ViewContextChips />
        {prompt && (
          <PromptForm
            prompt={prompt}
            onInsert={(values) => insertPrompt(prompt, values)}
            onCancel={() => {
              setPrompt(null);
              area.current?.focus();
            }}
          />
        )}
        {trigger && !prompt && (
          <Picker
            id={LIST_ID}
            label={trigger.kind === "@" ? t("pickerLabelAttach") : t("pickerLabelPrompt")}
            groups={groups}
            active={shown}
            onChoose={choose}
            empty={(trigger.kind === "@" ? files === null : content === null) ? t("pickerLoading") : t("pickerNothing", { query: trigger.query })}
          />
        )}
      </div>
      <textarea
        ref={area}
        value={text}
        rows={Math.min(8, Math.max(2, text.split("\n").length))}
        placeholder={t("composerPlaceholder", { folder })}
        aria-label={t("composerPlaceholder", { folder })}
        aria-controls={trigger && choices.length > 0 ? LIST_ID : undefined}
        aria-activedescendant={trigger && choices.length > 0 ? optionId(LIST_ID, shown) : undefined}
        onChange={(event) => {
          setText(event.target.value);
          setCaret(event.target.selectionStart);
          setActive(0);
        }}
        onSelect={(event) => setCaret(event.currentTarget.selectionStart)}
        onKeyDown={(event) => {
          if (trigger && choices.length > 0) {
            if (event.key === "ArrowDown" || event.key === "ArrowUp") {
              event.preventDefault();
              const step = event.key === "ArrowDown" ? 1 : -1;
              setActive((shown + step + choices.length) % choices.length);
              return;
            }
            if ((event.key === "Enter" || event.key === "Tab") && !event.shiftKey && !event.nativeEvent.isComposing) {
              event.preventDefault();
              choose(shown);
              return;
            }
          }
          if (trigger && event.key === "Escape") {
            event.preventDefault();
            event.stopPropagation();
            setClosed(trigger);
            return;
          }
          if (event.key === "Enter" && !event.shiftKey && !event.nativeEvent.isComposing) {
            event.preventDefault();
            send();
          }
        }}
      />
      <div className="composer-side">
        {busy ? (
          <button type="button" className="stop" onClick={onStop}>
            ■ {t("stop")}
          </button>
        ) : (
          <button type="submit" className="primary" disabled={!text.trim() || !ready}>
            {t("send")}
          </button>
        )}
      </div>
      <div className="composer-foot">
        <span className="composer-hint muted">
          {t("composerHint")} · {t("composerHintContent")}
        </span>
        {status}
      </div>
    </form>
  );
}
