// Every tool call of the conversation, newest at the bottom, as a list of cards or as a
// waterfall on a time axis (loaded when first shown). Virtualised: only the cards in view exist
// in the page, so ten thousand calls scroll like ten.
import { defaultRangeExtractor, useVirtualizer, type Range } from "@tanstack/react-virtual";
import { memo, useCallback, useEffect, useLayoutEffect, useRef, useState } from "react";
import { useI18n } from "../i18n";
import type { CallView, TurnView } from "../state/chat";
import { TimelineCard } from "./TimelineCard";
import type { TimelineMode } from "./timelineMode";
import { useOpenViews } from "../views/openViews";

/** Cards with an open view kept mounted out of sight, the latest opened first; an older one
 * that scrolls away unmounts, which closes its view. */
const KEEP_OPEN_VIEWS = 3;
/** A folded card's row, with and without its second line (styles.css: .timeline-row, .card-head). */
const FOLDED_CARD_PX = 56;
const FOLDED_CARD_BARE_PX = 38;

type WaterfallView = (typeof import("./Waterfall"))["default"];
// Loaded once, then drawn at once: with Suspense, React holds a revealed boundary back for up
// to 300 ms, which a conversation opened in the waterfall would wait for every first time.
let loadedWaterfall: WaterfallView | null = null;
const loadWaterfall = () =>
  import("./Waterfall").then((module) => {
    loadedWaterfall = module.default;
    return module.default;
  });

interface Props {
  calls: Record<string, CallView>;
  /** Call ids in timeline order. */
  timeline: string[];
  selected: string | null;
  /** Increments when the chat asks the timeline to bring `selected` into view. */
  reveal: number;
  onSelect: (callId: string) => void;
  onShowInChat: (callId: string) => void;
  mode: TimelineMode;
  onMode: (mode: TimelineMode) => void;
  /** The turns, for the waterfall; the list leaves them out, so streamed text does not redraw it. */
  turns?: TurnView[];
}

// Memoised: streamed text changes neither `calls` nor `timeline`, so it never redraws this.
export const Timeline = memo(function Timeline({ calls, timeline, selected, reveal, onSelect, onShowInChat, mode, onMode, turns }: Props) {
  const { t } = useI18n();
  const scroller = useRef<HTMLDivElement>(null);
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(() => new Set());
  const stickToBottom = useRef(true);
  const ids = timeline;
  const list = mode === "list";
  // With the waterfall chosen, its code loads at once (it is small), not with the first call.
  const [Waterfall, setWaterfall] = useState<WaterfallView | null>(() => loadedWaterfall);
  useEffect(() => {
    if (!list && !Waterfall) void loadWaterfall().then((view) => setWaterfall(() => view));
  }, [list, Waterfall]);

  // Rows out of sight whose view is open stay mounted: unmounting would tear the view down.
  const openViews = useOpenViews();
  const rangeExtractor = useCallback(
    (range: Range) => {
      const shown = defaultRangeExtractor(range);
      const kept = openViews
        .slice(-KEEP_OPEN_VIEWS)
        .map((id) => ids.indexOf(id))
        .filter((index) => index >= 0 && !shown.includes(index));
      return kept.length === 0 ? shown : [...shown, ...kept].sort((a, b) => a - b);
    },
    [openViews, ids],
  );

  const virtualizer = useVirtualizer({
    rangeExtractor,
    // The waterfall has rows of its own; the list's are not laid out meanwhile.
    count: list ? ids.length : 0,
    getScrollElement: () => scroller.current,
    // A folded card is one height (its line and, once it started, what the tool does and when):
    // an estimate that matches measures to the same, so showing new cards moves nothing and the
    // other 10,000 places are not worked out again (a jump in a long list was a long task).
    estimateSize: (index) => {
      const call = calls[ids[index] ?? ""];
      return call && (call.description || call.startedMs !== undefined) ? FOLDED_CARD_PX : FOLDED_CARD_BARE_PX;
    },
    overscan: 8,
    getItemKey: (index) => ids[index] ?? index,
  });

  const toggle = useCallback(
    (callId: string) => {
      onSelect(callId);
      setExpanded((old) => {
        const next = new Set(old);
        if (next.has(callId)) next.delete(callId);
        else next.add(callId);
        return next;
      });
    },
    [onSelect],
  );

  // Follow new calls while the user is at the bottom.
  useLayoutEffect(() => {
    if (list && stickToBottom.current && ids.length > 0) virtualizer.scrollToIndex(ids.length - 1, { align: "end" });
  }, [ids.length, virtualizer, list]);

  useEffect(() => {
    if (!list || !selected || reveal === 0) return;
    const index = ids.indexOf(selected);
    if (index < 0) return;
    stickToBottom.current = false;
    setExpanded((old) => (old.has(selected) ? old : new Set(old).add(selected)));
    virtualizer.scrollToIndex(index, { align: "center" });
    // Only a new reveal request moves the list.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [reveal]);

  // An opened or closed card, or a call whose card changed (started, finished, its result in),
  // changes height; measure the rows shown now rather than waiting for the resize observer,
  // which some webviews run a frame late or not at all in a panel that is still being laid
  // out (the cards would overlap for it).
  useLayoutEffect(() => {
    scroller.current?.querySelectorAll<HTMLElement>(".timeline-row").forEach((row) => virtualizer.measureElement(row));
  }, [expanded, calls, virtualizer]);

  const onScroll = () => {
    const el = scroller.current;
    if (el) stickToBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 48;
  };

  return (
    <aside className={`timeline mode-${mode}`} aria-label={t("timeline")}>
      <header className="pane-head">
        <h2>{t("timeline")}</h2>
        <span className="muted" data-testid="timeline-count">
          {ids.length === 1 ? t("timelineCountOne") : t("timelineCount", { count: ids.length })}
        </span>
        <span className="timeline-modes" role="radiogroup" aria-label={t("timelineViewLabel")}>
          {(["list", "waterfall"] as const).map((option) => (
            <button key={option} type="button" role="radio" aria-checked={mode === option} className={mode === option ? "active" : ""} onClick={() => onMode(option)}>
              {t(option === "list" ? "timelineList" : "timelineWaterfall")}
            </button>
          ))}
        </span>
      </header>
      {ids.length === 0 && (turns ?? []).length === 0 ? (
        <p className="muted timeline-empty">{t("timelineEmpty")}</p>
      ) : !list ? (
        Waterfall ? (
          <Waterfall turns={turns ?? []} calls={calls} selected={selected} reveal={reveal} onSelect={onSelect} />
        ) : (
          <p className="muted timeline-empty">…</p>
        )
      ) : (
        <div className="timeline-scroll" ref={scroller} onScroll={onScroll} data-testid="timeline-scroll">
          <div style={{ height: virtualizer.getTotalSize(), position: "relative" }}>
            {virtualizer.getVirtualItems().map((item) => {
              const id = ids[item.index]!;
              const call = calls[id];
              if (!call) return null;
              return (
                <div
                  key={item.key}
                  data-index={item.index}
                  ref={virtualizer.measureElement}
                  className="timeline-row"
                  style={{ position: "absolute", top: 0, left: 0, width: "100%", transform: `translateY(${item.start}px)` }}
                >
                  <TimelineCard
                    call={call}
                    expanded={expanded.has(id)}
                    selected={selected === id}
                    onToggle={toggle}
                    onShowInChat={onShowInChat}
                    {...(call.viewOf !== undefined ? { viewParentTool: calls[call.viewOf]?.tool ?? "" } : {})}
                  />
                </div>
              );
            })}
          </div>
        </div>
      )}
    </aside>
  );
});
