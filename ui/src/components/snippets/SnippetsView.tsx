// The open folder's snippets: the named pieces of text the model kept with the `snippets` tool (or
// `tooltrail tool snippets`). Listed by name or searched (the store's full-text index),
// one shown with its content highlighted in its language, copied or deleted after a yes.
//
// Keys: ↑/↓, Home/End move through the list (↓ from the search box enters it), Delete asks to
// delete the selected snippet, Esc in the search box clears it and closes a question to delete.
import { useCallback, useEffect, useMemo, useRef, useState, type KeyboardEvent } from "react";
import { api, errorMessage, type Snippet, type SnippetSummary, type WorkspaceInfo } from "../../api";
import { useI18n } from "../../i18n";
import { CopyButton } from "../CopyButton";
import { ListLoadFailed } from "../ListLoadFailed";
import { Markdown } from "../Markdown";
import { SearchField } from "../SearchField";
import { formatFull, formatWhen, SEARCH_DELAY_MS } from "../history/query";
import { fencedCode, formatBytes } from "./format";

interface Props {
  workspace: WorkspaceInfo;
}

interface ListState {
  /** The search these rows answer; while it differs from the current one, a list is loading. */
  key: string;
  items: SnippetSummary[];
  error: string | null;
}

interface DetailState {
  name: string;
  snippet: Snippet | null;
  error: string | null;
}

/** Deleting the snippet `name`: asked, under way, or failed. */
type Removal = { kind: "idle" } | { kind: "asking"; name: string } | { kind: "busy"; name: string } | { kind: "failed"; name: string; message: string };
const IDLE: Removal = { kind: "idle" };

export function SnippetsView({ workspace }: Props) {
  const { t } = useI18n();
  const [searchInput, setSearchInput] = useState("");
  const [query, setQuery] = useState("");
  const [reload, setReload] = useState(0);
  const [list, setList] = useState<ListState>({ key: "", items: [], error: null });
  const [selected, setSelected] = useState<string | null>(null);
  const [detail, setDetail] = useState<DetailState | null>(null);
  const [removal, setRemoval] = useState<Removal>({ kind: "idle" });
  const listRef = useRef<HTMLUListElement>(null);

  // Typing searches a moment after the last key, not on every key.
  useEffect(() => {
    const timer = setTimeout(() => setQuery(searchInput.trim()), SEARCH_DELAY_MS);
    return () => clearTimeout(timer);
  }, [searchInput]);

  const listKey = JSON.stringify([workspace.path, query, reload]);
  const loading = list.key !== listKey;

  useEffect(() => {
    let gone = false;
    const [, text] = JSON.parse(listKey) as [string, string];
    api.listSnippets(text === "" ? null : text).then(
      (items) => {
        if (gone) return;
        setList({ key: listKey, items, error: null });
        // Keep the snippet shown while it is still listed; else show the first.
        setSelected((old) => (old !== null && items.some((item) => item.name === old) ? old : (items[0]?.name ?? null)));
      },
      (error: unknown) => !gone && setList({ key: listKey, items: [], error: errorMessage(error) }),
    );
    return () => {
      gone = true;
    };
  }, [listKey]);

  // The selected snippet's content.
  useEffect(() => {
    if (selected === null) return;
    let gone = false;
    api.getSnippet(selected).then(
      (snippet) => !gone && setDetail({ name: selected, snippet, error: null }),
      (error: unknown) => !gone && setDetail({ name: selected, snippet: null, error: errorMessage(error) }),
    );
    return () => {
      gone = true;
    };
  }, [selected, reload]);

  const items = useMemo(() => (loading ? [] : list.items), [loading, list.items]);
  const position = selected === null ? -1 : items.findIndex((item) => item.name === selected);

  const select = useCallback(
    (index: number) => {
      const item = items[Math.max(0, Math.min(items.length - 1, index))];
      if (!item) return;
      setSelected(item.name);
      listRef.current?.querySelector<HTMLElement>(`[data-name="${CSS.escape(item.name)}"]`)?.focus();
    },
    [items],
  );

  const remove = (name: string) => {
    setRemoval({ kind: "busy", name });
    api.deleteSnippet(name).then(
      () => {
        setRemoval({ kind: "idle" });
        // The next one takes its place, as in a file manager.
        const next = items[position + 1] ?? items[position - 1];
        setSelected(next?.name ?? null);
        setReload((n) => n + 1);
        listRef.current?.focus();
      },
      (error: unknown) => setRemoval({ kind: "failed", name, message: errorMessage(error) }),
    );
  };

  const onListKey = (event: KeyboardEvent<HTMLUListElement>) => {
    switch (event.key) {
      case "ArrowDown":
        select(position + 1);
        break;
      case "ArrowUp":
        select(position - 1);
        break;
      case "Home":
        select(0);
        break;
      case "End":
        select(items.length - 1);
        break;
      case "Delete":
        if (selected !== null) setRemoval({ kind: "asking", name: selected });
        break;
      default:
        return;
    }
    event.preventDefault();
  };

  const onSearchKey = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key === "ArrowDown" && items.length > 0) {
      event.preventDefault();
      select(Math.max(0, position));
    } else if (event.key === "Escape" && searchInput !== "") {
      event.preventDefault();
      event.stopPropagation();
      setSearchInput("");
    }
  };

  let countText: string;
  if (loading) countText = t("snipLoading");
  else countText = items.length === 1 ? t("snipCountOne") : t("snipCount", { count: items.length });

  const shown = detail !== null && detail.name === selected ? detail : null;
  // A question to delete belongs to the snippet it was asked about.
  const removing = removal.kind !== "idle" && removal.name === shown?.name ? removal : IDLE;
  return (
    <main className="page snippets-page" aria-label={t("navSnippets")}>
      <header className="hist-head">
        <h1>{t("navSnippets")}</h1>
        <span className="muted hist-scope" title={workspace.path}>
          {t("snipScope", { folder: workspace.name })}
        </span>
        <span className="muted snip-count" data-testid="snippet-count" aria-live="polite">
          {countText}
        </span>
      </header>
      <div className="history-filters">
        <SearchField className="history-search" label={t("snipSearch")} placeholder={t("snipSearchPlaceholder")} value={searchInput} onChange={setSearchInput} onKeyDown={onSearchKey} />
      </div>
      <div className="snippets-body">
        <div className="snippet-list-wrap">
          {!loading && list.error !== null ? (
            <ListLoadFailed message={t("snipLoadFailed", { message: list.error })} onRetry={() => setReload((n) => n + 1)} />
          ) : !loading && items.length === 0 ? (
            <div className="snippet-empty muted" data-testid="snippets-empty">
              {query !== "" ? (
                <p>{t("snipNoMatch", { query })}</p>
              ) : (
                <>
                  <p>{t("snipNothingYet", { folder: workspace.name })}</p>
                  <p className="small-text">{t("snipHowToSave")}</p>
                </>
              )}
            </div>
          ) : null}
          {loading && <p className="history-message muted">{t("snipLoading")}</p>}
          <ul className="snippet-list" role="listbox" aria-label={t("snipListLabel")} ref={listRef} tabIndex={-1} onKeyDown={onListKey} data-testid="snippet-list">
            {items.map((item, index) => (
              <SnippetItem key={item.name} item={item} selected={item.name === selected} focusable={item.name === selected || (selected === null && index === 0)} onSelect={() => setSelected(item.name)} />
            ))}
          </ul>
        </div>
        {shown && (
          <section className="snippet-detail" aria-label={t("snipDetail", { name: shown.name })} data-testid="snippet-detail">
            <header className="call-detail-head">
              <h2 className="hist-mono">{shown.name}</h2>
              {shown.snippet?.language && <span className="snippet-lang">{shown.snippet.language}</span>}
              {shown.snippet && <CopyButton text={shown.snippet.content} label={t("snipContent")} />}
              <button
                type="button"
                className="small danger"
                disabled={removing.kind === "busy" || removing.kind === "asking"}
                onClick={() => setRemoval({ kind: "asking", name: shown.name })}
                title={t("snipDeleteKey")}
              >
                {t("snipDelete")}
              </button>
            </header>
            <div className="call-detail-body">
              {removing.kind === "asking" || removing.kind === "busy" ? (
                <div
                  className="conversation-confirm snippet-confirm"
                  role="alertdialog"
                  aria-label={t("snipDeleteConfirm", { name: shown.name })}
                  onKeyDown={(event) => {
                    if (event.key === "Escape") {
                      event.preventDefault();
                      event.stopPropagation();
                      setRemoval({ kind: "idle" });
                      listRef.current?.querySelector<HTMLElement>('[aria-selected="true"]')?.focus();
                    }
                  }}
                >
                  <span>{t("snipDeleteConfirm", { name: shown.name })}</span>
                  <span className="small-text">{t("snipDeleteWhat")}</span>
                  <span className="confirm-actions">
                    <button type="button" className="small danger" disabled={removing.kind === "busy"} onClick={() => remove(shown.name)}>
                      {t("snipDeleteYes")}
                    </button>
                    <button type="button" className="small" disabled={removing.kind === "busy"} autoFocus onClick={() => setRemoval({ kind: "idle" })}>
                      {t("snipDeleteNo")}
                    </button>
                  </span>
                </div>
              ) : null}
              {removing.kind === "failed" && (
                <p className="error-text small-text" role="alert">
                  {t("snipDeleteFailed", { message: removing.message })}
                </p>
              )}
              {shown.error !== null ? (
                <p className="error-text small-text">{t("snipLoadOneFailed", { message: shown.error })}</p>
              ) : shown.snippet === null ? (
                <p className="muted small-text">{t("snipLoading")}</p>
              ) : (
                <SnippetFacts snippet={shown.snippet} />
              )}
            </div>
          </section>
        )}
      </div>
    </main>
  );
}

/** One snippet in the list: its name, language, description, size and when it last changed. */
function SnippetItem({ item, selected, focusable, onSelect }: { item: SnippetSummary; selected: boolean; focusable: boolean; onSelect: () => void }) {
  const { lang } = useI18n();
  return (
    <li
      role="option"
      aria-selected={selected}
      tabIndex={focusable ? 0 : -1}
      data-name={item.name}
      className={`snippet-item${selected ? " selected" : ""}`}
      onClick={onSelect}
    >
      <span className="snippet-item-head">
        <span className="snippet-name">{item.name}</span>
        {item.language && <span className="snippet-lang">{item.language}</span>}
      </span>
      {item.description && <span className="snippet-desc small-text">{item.description}</span>}
      <span className="snippet-meta small-text muted">
        {formatBytes(item.bytes, lang)} · <time title={formatFull(item.updated_ms, lang)}>{formatWhen(item.updated_ms, lang)}</time>
      </span>
    </li>
  );
}

/** The snippet shown: its description, facts and content, highlighted in its language. */
function SnippetFacts({ snippet }: { snippet: Snippet }) {
  const { t, lang } = useI18n();
  return (
    <>
      {snippet.description && <p className="snippet-description">{snippet.description}</p>}
      <dl className="detail-facts">
        <dt>{t("snipLanguage")}</dt>
        <dd>{snippet.language ?? <span className="muted">{t("snipNoLanguage")}</span>}</dd>
        <dt>{t("snipSize")}</dt>
        <dd>{formatBytes(new TextEncoder().encode(snippet.content).length, lang)}</dd>
        <dt>{t("snipUpdated")}</dt>
        <dd>{formatFull(snippet.updated_ms, lang)}</dd>
        {snippet.created_ms !== snippet.updated_ms && (
          <>
            <dt>{t("snipCreated")}</dt>
            <dd>{formatFull(snippet.created_ms, lang)}</dd>
          </>
        )}
      </dl>
      <div className="snippet-content" data-testid="snippet-content">
        <Markdown text={fencedCode(snippet.content, snippet.language)} />
      </div>
    </>
  );
}
