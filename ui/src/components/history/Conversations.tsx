// The open folder's conversations in the sidebar: open, rename (F2 or the pencil), delete (the
// bin, then confirm), and a box that filters titles at once and, from two characters, finds messages too.
import { useEffect, useRef, useState, type KeyboardEvent } from "react";
import { api, errorMessage, type ConversationSummary, type MessageHitView } from "../../api";
import { useI18n } from "../../i18n";
import { PencilIcon, TrashIcon } from "../icons";
import { SearchField } from "../SearchField";
import { SEARCH_DELAY_MS, searchWords } from "./query";

interface Props {
  conversations: ConversationSummary[];
  activeConversation: string | null;
  onOpenConversation: (id: string) => void;
  onNewConversation: () => void;
  /** A conversation was renamed or deleted here. */
  onConversationsChanged: () => void;
}

/** Message matches listed under the titles. */
const MAX_HITS = 12;

interface Search {
  text: string;
  hits: MessageHitView[];
  error: string | null;
}

/** The text to search messages for, or null when it is too short or has no words. */
export function messageSearchText(filter: string): string | null {
  const text = filter.trim();
  return text.length >= 2 && searchWords(text) !== null ? text : null;
}

export function Conversations({ conversations, activeConversation, onOpenConversation, onNewConversation, onConversationsChanged }: Props) {
  const { t } = useI18n();
  const [filter, setFilter] = useState("");
  const [editing, setEditing] = useState<{ id: string; title: string } | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<{ id: string; text: string } | null>(null);
  const [search, setSearch] = useState<Search | null>(null);
  // The rename being typed; Enter, Esc and leaving the box each end it once.
  const editRef = useRef<{ id: string; title: string } | null>(null);

  const query = messageSearchText(filter);
  useEffect(() => {
    if (query === null) return;
    let gone = false;
    const timer = setTimeout(() => {
      api.searchMessages(query).then(
        (hits) => !gone && setSearch({ text: query, hits, error: null }),
        (error: unknown) => !gone && setSearch({ text: query, hits: [], error: errorMessage(error) }),
      );
    }, SEARCH_DELAY_MS);
    return () => {
      gone = true;
      clearTimeout(timer);
    };
  }, [query]);

  const needle = filter.trim().toLowerCase();
  const shown = needle ? conversations.filter((c) => c.title.toLowerCase().includes(needle)) : conversations;
  const results = query !== null && search?.text === query ? search : null;

  const startRename = (conversation: ConversationSummary) => {
    const edit = { id: conversation.id, title: conversation.title };
    editRef.current = edit;
    setEditing(edit);
    setConfirming(null);
    setProblem(null);
  };

  const endRename = (save: boolean) => {
    const edit = editRef.current;
    if (!edit) return;
    editRef.current = null;
    const original = conversations.find((c) => c.id === edit.id)?.title;
    const title = edit.title.trim();
    if (!save || title === "" || title === original) {
      setEditing(null);
      return;
    }
    setBusy(true);
    api.renameConversation(edit.id, title).then(
      () => {
        setBusy(false);
        setEditing(null);
        onConversationsChanged();
      },
      (error: unknown) => {
        setBusy(false);
        setEditing(null);
        setProblem({ id: edit.id, text: t("convRenameFailed", { message: errorMessage(error) }) });
      },
    );
  };

  const remove = (conversation: ConversationSummary) => {
    setBusy(true);
    api.deleteConversation(conversation.id).then(
      () => {
        setBusy(false);
        setConfirming(null);
        if (conversation.id === activeConversation) onNewConversation();
        onConversationsChanged();
      },
      (error: unknown) => {
        setBusy(false);
        setConfirming(null);
        setProblem({ id: conversation.id, text: t("convDeleteFailed", { message: errorMessage(error) }) });
      },
    );
  };

  const onItemKey = (event: KeyboardEvent<HTMLButtonElement>, conversation: ConversationSummary) => {
    if (event.key === "F2") {
      event.preventDefault();
      startRename(conversation);
    } else if (event.key === "Delete") {
      event.preventDefault();
      setConfirming(conversation.id);
    }
  };

  const onEditKey = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key === "Enter") {
      event.preventDefault();
      endRename(true);
    } else if (event.key === "Escape") {
      // Esc here cancels the rename and nothing else (not a running turn).
      event.preventDefault();
      event.stopPropagation();
      endRename(false);
    }
  };

  return (
    <section className="side-section conversations" data-testid="conversations">
      <h2>{t("conversations")}</h2>
      <button type="button" className="new-conversation" onClick={onNewConversation}>
        + {t("newConversation")}
      </button>
      {conversations.length > 0 && (
        <SearchField
          className="conversation-filter"
          label={t("convFilter")}
          placeholder={t("convFilterPlaceholder")}
          value={filter}
          onChange={setFilter}
          onKeyDown={(event) => {
            if (event.key === "Escape" && filter) {
              event.stopPropagation();
              setFilter("");
            }
          }}
        />
      )}
      {conversations.length === 0 ? (
        <p className="muted small-text">{t("noConversations")}</p>
      ) : shown.length === 0 ? (
        <p className="muted small-text">{t("convNoTitles")}</p>
      ) : (
        <ul className="side-list">
          {shown.map((c) => (
            <li key={c.id} className="conversation-item" data-conversation-id={c.id}>
              {editing?.id === c.id ? (
                <input
                  className="conversation-rename"
                  aria-label={t("convRenameLabel")}
                  value={editing.title}
                  disabled={busy}
                  autoFocus
                  onFocus={(event) => event.target.select()}
                  onChange={(event) => {
                    const edit = { id: c.id, title: event.target.value };
                    editRef.current = edit;
                    setEditing(edit);
                  }}
                  onKeyDown={onEditKey}
                  onBlur={() => endRename(true)}
                />
              ) : confirming === c.id ? (
                <div className="conversation-confirm" role="group" aria-label={t("convDeleteConfirm", { title: c.title })}>
                  <span className="small-text">{t("convDeleteConfirm", { title: c.title })}</span>
                  <span className="confirm-actions">
                    <button type="button" className="small danger" disabled={busy} onClick={() => remove(c)}>
                      {t("convDeleteYes")}
                    </button>
                    <button type="button" className="small" disabled={busy} onClick={() => setConfirming(null)}>
                      {t("convDeleteNo")}
                    </button>
                  </span>
                </div>
              ) : (
                <div className="conversation-row">
                  <button
                    type="button"
                    className={`side-item${c.id === activeConversation ? " active" : ""}`}
                    onClick={() => onOpenConversation(c.id)}
                    onKeyDown={(event) => onItemKey(event, c)}
                    title={c.title}
                  >
                    <span className="side-title">{c.title}</span>
                    <span className="muted small-text">
                      {c.running ? "● " : ""}
                      {c.turns === 1 ? t("turnsCountOne") : t("turnsCount", { count: c.turns })}
                    </span>
                  </button>
                  <span className="conversation-actions">
                    <button type="button" className="conv-icon" aria-label={t("convRename")} title={t("convRename")} onClick={() => startRename(c)}>
                      <PencilIcon />
                    </button>
                    <button
                      type="button"
                      className="conv-icon"
                      aria-label={t("convDelete")}
                      title={t("convDelete")}
                      onClick={() => {
                        setConfirming(c.id);
                        setProblem(null);
                      }}
                    >
                      <TrashIcon />
                    </button>
                  </span>
                </div>
              )}
              {problem?.id === c.id && <p className="error-text small-text">{problem.text}</p>}
            </li>
          ))}
        </ul>
      )}
      {query !== null && (
        <div className="message-hits" data-testid="message-hits">
          <h3>{t("convInMessages")}</h3>
          {results === null ? (
            <p className="muted small-text">{t("convSearching")}</p>
          ) : results.error !== null ? (
            <p className="error-text small-text">{t("convSearchFailed", { message: results.error })}</p>
          ) : results.hits.length === 0 ? (
            <p className="muted small-text">{t("convNoHits")}</p>
          ) : (
            <ul className="side-list">
              {results.hits.slice(0, MAX_HITS).map((hit) => (
                <li key={`${hit.conversation_id}:${hit.position}`}>
                  <button type="button" className="side-item message-hit" onClick={() => onOpenConversation(hit.conversation_id)} title={hit.snippet}>
                    <span className="side-title small-text">{t("convHitIn", { title: hit.conversation_title })}</span>
                    <span className="hit-snippet muted small-text">{hit.snippet}</span>
                  </button>
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
    </section>
  );
}
