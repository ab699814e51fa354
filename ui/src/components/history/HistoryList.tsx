// The recorded calls as a virtualised list: only the rows in view exist in the page, every row
// is the same height (no measuring), and the next page is asked for before the end is reached.
// Scrolling redraws this list alone, never the filters and counts above it.
import { useVirtualizer } from "@tanstack/react-virtual";
import { memo, useCallback, useEffect, useRef, useState, type KeyboardEvent } from "react";
import type { HistoryRow } from "../../api";
import type { JsonValue } from "../../bindings";
import { formatDuration, summarizeArguments } from "../../format";
import { useI18n } from "../../i18n";
import { StatusIcon } from "../Status";
import { formatWhen } from "./query";

/** Every row is this tall, so positions never need measuring. */
export const ROW_HEIGHT = 34;
/** Ask for the next page this many rows before the end of what is loaded. */
const PREFETCH_ROWS = 80;

interface Props {
  items: HistoryRow[];
  /** Whether more rows follow those loaded. */
  more: boolean;
  /** Why the next page could not be loaded. */
  moreError: string | null;
  openedId: string | null;
  showFolder: boolean;
  label: string;
  onOpen: (row: HistoryRow) => void;
  onLoadMore: () => void;
  onRetryMore: () => void;
}

export const HistoryList = memo(function HistoryList({ items, more, moreError, openedId, showFolder, label, onOpen, onLoadMore, onRetryMore }: Props) {
  const { t, lang } = useI18n();
  const scroller = useRef<HTMLDivElement>(null);
  const [focusIndex, setFocusIndex] = useState(0);
  // One "now" for the list's life: rows say "today" by it.
  const [now] = useState(() => Date.now());
  const tail = more || moreError !== null;

  const virtualizer = useVirtualizer({
    count: items.length + (tail ? 1 : 0),
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 10,
    getItemKey: (index) => items[index]?.id ?? "tail",
  });
  const virtualItems = virtualizer.getVirtualItems();
  const lastShown = virtualItems.at(-1)?.index ?? 0;

  // Near the end of what is loaded: the next page.
  useEffect(() => {
    if (more && moreError === null && lastShown >= items.length - PREFETCH_ROWS) onLoadMore();
  }, [more, moreError, lastShown, items.length, onLoadMore]);

  // Keyboard focus follows the focused row as it moves.
  useEffect(() => {
    const box = scroller.current;
    if (!box || !box.contains(document.activeElement)) return;
    box.querySelector<HTMLElement>(`[data-index="${focusIndex}"]`)?.focus({ preventScroll: true });
  }, [focusIndex, lastShown]);

  const open = useCallback(
    (row: HistoryRow, index: number) => {
      setFocusIndex(index);
      onOpen(row);
    },
    [onOpen],
  );

  const onKey = (event: KeyboardEvent<HTMLDivElement>) => {
    if (items.length === 0) return;
    const page = Math.max(1, Math.floor((scroller.current?.clientHeight ?? ROW_HEIGHT * 10) / ROW_HEIGHT) - 1);
    let next: number;
    switch (event.key) {
      case "ArrowDown":
        next = focusIndex + 1;
        break;
      case "ArrowUp":
        next = focusIndex - 1;
        break;
      case "PageDown":
        next = focusIndex + page;
        break;
      case "PageUp":
        next = focusIndex - page;
        break;
      case "Home":
        next = 0;
        break;
      case "End":
        next = items.length - 1;
        break;
      case "Enter":
      case " ": {
        const row = items[focusIndex];
        if (row) {
          event.preventDefault();
          open(row, focusIndex);
        }
        return;
      }
      default:
        return;
    }
    event.preventDefault();
    next = Math.max(0, Math.min(items.length - 1, next));
    setFocusIndex(next);
    virtualizer.scrollToIndex(next, { align: "auto" });
  };

  return (
    <div className="history-list" ref={scroller} role="listbox" aria-label={label} tabIndex={items.length === 0 ? 0 : -1} onKeyDown={onKey} data-testid="history-list">
      <div style={{ height: virtualizer.getTotalSize(), position: "relative" }}>
        {virtualItems.map((item) => {
          const row = items[item.index];
          if (!row) {
            return (
              <div key={item.key} className="history-tail" style={{ height: ROW_HEIGHT, transform: `translateY(${item.start}px)` }}>
                {moreError !== null ? (
                  <>
                    <span className="error-text">{t("histLoadFailed", { message: moreError })}</span>
                    <button type="button" className="small" onClick={onRetryMore}>
                      {t("histRetry")}
                    </button>
                  </>
                ) : (
                  <span className="muted">{t("histLoadingMore")}</span>
                )}
              </div>
            );
          }
          return (
            <HistoryRowView
              key={item.key}
              row={row}
              index={item.index}
              start={item.start}
              selected={openedId === row.id}
              focusable={item.index === focusIndex}
              showFolder={showFolder}
              lang={lang}
              now={now}
              onOpen={open}
            />
          );
        })}
      </div>
    </div>
  );
});

interface RowProps {
  row: HistoryRow;
  index: number;
  /** Where the row sits in the list, in px. */
  start: number;
  selected: boolean;
  focusable: boolean;
  showFolder: boolean;
  lang: string;
  now: number;
  onOpen: (row: HistoryRow, index: number) => void;
}

const HistoryRowView = memo(function HistoryRowView({ row, index, start, selected, focusable, showFolder, lang, now, onOpen }: RowProps) {
  const { t } = useI18n();
  const summary = summarizeArguments(row.arguments as JsonValue);
  const folder = row.workspace ? row.workspace.replace(/[\\/]+$/, "").split(/[\\/]/).pop() : "";
  return (
    <div
      role="option"
      aria-selected={selected}
      tabIndex={focusable ? 0 : -1}
      data-index={index}
      data-id={row.id}
      className={`history-row status-${row.status}${selected ? " selected" : ""}`}
      style={{ height: ROW_HEIGHT, transform: `translateY(${start}px)` }}
      onClick={() => onOpen(row, index)}
    >
      <StatusIcon phase={row.status} />
      <span className="history-when">{formatWhen(row.started_ms, lang, now)}</span>
      <span className="history-tool">
        {row.view_of && (
          <span className="history-view-mark" title={t("histViewOf", { id: row.view_of })} aria-label={t("histViewOf", { id: row.view_of })}>
            ↳{" "}
          </span>
        )}
        {row.tool}
      </span>
      <span className="history-args" title={summary}>
        {summary}
      </span>
      {showFolder && (
        <span className="history-folder muted" title={row.workspace ?? ""}>
          {folder}
        </span>
      )}
      <span className="history-duration">{row.duration_ms !== null ? formatDuration(row.duration_ms) : row.status === "running" ? t("histRunning") : "—"}</span>
    </div>
  );
});
