// The timeline on a time axis: per turn, the model's rounds and every tool call as bars, the
// way a browser's network panel draws requests. Calls that ran side by side are rows whose bars
// overlap; an approval's wait is a hatched piece before the run. Rows are one fixed height, so
// the rows in view follow from the scroll position alone: ten thousand calls draw only the few
// dozen in view, with no row measured, and a row is drawn again only when its own call, its
// turn's axis or (while it grows) the clock changes.
import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import { formatDuration, summarizeArguments } from "../format";
import { useI18n, type Translate } from "../i18n";
import { isActive, type CallView, type TurnView } from "../state/chat";
import { axisTicks, callSegments, modelSegments, placeOnAxis, turnSpan, waitMs, waterfallRows, type Segment, type Span, type WaterfallRow } from "../state/waterfall";

const ROW_HEIGHT = 24;
/** Rows drawn beyond the view on each side; the rows drawn change by this many at a time. */
const OVERSCAN = 12;
/** Within this of the end, the view follows new rows. */
const STICK_PX = 48;

interface Props {
  turns: TurnView[];
  calls: Record<string, CallView>;
  selected: string | null;
  /** Increments when the chat asks the timeline to bring `selected` into view. */
  reveal: number;
  onSelect: (callId: string) => void;
}

interface Hover {
  lines: string[];
  top: number;
}

/** Where the view is: its top (null: at the end, following new rows) and its height. */
interface Place {
  top: number | null;
  height: number;
}

/** The rows to draw, [start, end): those in view and OVERSCAN more, in steps of OVERSCAN so a
 * scroll of a few rows draws nothing new. */
export function rowsInView(place: Place, count: number): { start: number; end: number } {
  const inView = Math.ceil(place.height / ROW_HEIGHT) + 1;
  const first = place.top === null ? Math.max(0, count - inView) : Math.floor(place.top / ROW_HEIGHT);
  const start = Math.max(0, Math.floor((first - OVERSCAN) / OVERSCAN) * OVERSCAN);
  const end = place.top === null ? count : Math.min(count, Math.ceil((first + inView + OVERSCAN) / OVERSCAN) * OVERSCAN);
  return { start, end };
}

export default memo(function Waterfall({ turns: turnList, calls, selected, reveal, onSelect }: Props) {
  const { t } = useI18n();
  const scroller = useRef<HTMLDivElement>(null);
  const [hover, setHover] = useState<Hover | null>(null);
  // Before the view is laid out, the window's height stands for its height: never less.
  const [place, setPlace] = useState<Place>(() => ({ top: null, height: typeof window === "undefined" ? 800 : window.innerHeight }));
  const rows = useMemo(() => waterfallRows(turnList), [turnList]);
  const turns = useMemo(() => new Map(turnList.map((turn) => [turn.id, turn])), [turnList]);
  const live = turnList.some((turn) => turn.status === "running");
  const now = useNow(live);
  const { start, end } = rowsInView(place, rows.length);

  // The view follows new rows while it is at the end.
  useLayoutEffect(() => {
    const el = scroller.current;
    if (el && place.top === null) el.scrollTop = el.scrollHeight;
  }, [rows.length, place.top]);

  // Scrolling and resizing draw other rows only when the rows to draw change.
  const follow = useCallback(() => {
    const el = scroller.current;
    if (!el) return;
    const atEnd = el.scrollHeight - el.scrollTop - el.clientHeight < STICK_PX;
    const next: Place = { top: atEnd ? null : el.scrollTop, height: el.clientHeight || window.innerHeight };
    setPlace((old) => {
      if (old.height === next.height && (old.top === null) === (next.top === null)) {
        const a = rowsInView(old, Number.MAX_SAFE_INTEGER);
        const b = rowsInView(next, Number.MAX_SAFE_INTEGER);
        if (old.top === null || (a.start === b.start && a.end === b.end)) return old;
      }
      return next;
    });
  }, []);

  useEffect(() => {
    const el = scroller.current;
    if (!el || typeof ResizeObserver === "undefined") return;
    const observer = new ResizeObserver(() => follow());
    observer.observe(el);
    return () => observer.disconnect();
  }, [follow]);

  useEffect(() => {
    if (!selected || reveal === 0) return;
    const index = rows.findIndex((row) => row.kind === "call" && row.callId === selected);
    const el = scroller.current;
    if (index < 0 || !el) return;
    const height = el.clientHeight || window.innerHeight;
    const top = Math.max(0, index * ROW_HEIGHT - (height - ROW_HEIGHT) / 2);
    el.scrollTop = top;
    setPlace({ top, height });
    // Only a new reveal request moves the view.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [reveal]);

  // The axis of each turn: working it out walks every call of the turn, so once per change, not
  // per row. A row compares its axis by value, so an unchanged axis does not draw it again.
  const spans = useMemo(() => new Map(turnList.map((turn) => [turn.id, turnSpan(turn, calls, now)])), [turnList, calls, now]);

  const onHover = useCallback((index: number, lines: string[] | null) => {
    setHover(lines ? { lines, top: index * ROW_HEIGHT - (scroller.current?.scrollTop ?? 0) } : null);
  }, []);

  const onScroll = () => {
    follow();
    setHover(null);
  };

  const drawn = [];
  for (let index = start; index < end; index++) {
    const row = rows[index]!;
    const turn = turns.get(row.turnId);
    const span = spans.get(row.turnId);
    if (!turn || !span) continue;
    const running = turn.status === "running";
    let call: CallView | undefined;
    let rowNow = 0;
    if (row.kind === "call") {
      call = calls[row.callId];
      if (!call) continue;
      if (isActive(call.phase)) rowNow = now;
    } else if (running) {
      rowNow = now;
    }
    drawn.push(
      <Row
        key={row.key}
        index={index}
        row={row}
        turn={row.kind === "call" ? undefined : turn}
        span={span}
        call={call}
        calls={row.kind === "model" ? calls : undefined}
        now={rowNow}
        selected={call !== undefined && selected === call.callId}
        t={t}
        onSelect={onSelect}
        onHover={onHover}
      />,
    );
  }

  return (
    <div className="waterfall" data-testid="waterfall">
      <Legend t={t} />
      <div className="waterfall-scroll" ref={scroller} onScroll={onScroll} onMouseLeave={() => setHover(null)}>
        <div style={{ height: rows.length * ROW_HEIGHT, position: "relative" }}>{drawn}</div>
      </div>
      {hover && (
        <div className="wf-tip" role="tooltip" style={{ top: Math.max(0, hover.top + ROW_HEIGHT + 28) }}>
          {hover.lines.map((line, i) => (
            <div key={i}>{line}</div>
          ))}
        </div>
      )}
    </div>
  );
});

interface RowProps {
  index: number;
  row: WaterfallRow;
  /** A turn's or a model's row: its turn (a call's row needs none, so the turn's new events
   * leave it be). */
  turn: TurnView | undefined;
  span: Span;
  /** A call's row: its call. */
  call: CallView | undefined;
  /** A model's row: the calls (where its round began follows from the round before). */
  calls: Record<string, CallView> | undefined;
  /** The clock for a row that still grows; 0 for one that does not, so the clock leaves it be. */
  now: number;
  selected: boolean;
  t: Translate;
  onSelect: (callId: string) => void;
  onHover: (index: number, lines: string[] | null) => void;
}

// Memoised: a new token, a call elsewhere or a scroll of a few rows leaves a row as it was.
const Row = memo(
  function Row({ index, row, ...rest }: RowProps) {
    return (
      <div className={`wf-row wf-${row.kind}`} style={{ transform: `translateY(${index * ROW_HEIGHT}px)`, height: ROW_HEIGHT }}>
        <RowContent row={row} {...rest} onHover={(lines) => rest.onHover(index, lines)} />
      </div>
    );
  },
  (a, b) => {
    for (const key of Object.keys(a) as (keyof RowProps)[]) {
      // A turn's new events make all its rows and its axis anew: the same key is the same row,
      // the same ends the same axis.
      if (key === "span") {
        if (a.span.startMs !== b.span.startMs || a.span.endMs !== b.span.endMs) return false;
      } else if (key === "row") {
        if (a.row.key !== b.row.key) return false;
      } else if (a[key] !== b[key]) return false;
    }
    return true;
  },
);

interface RowContentProps extends Omit<RowProps, "index" | "row" | "onHover"> {
  row: WaterfallRow;
  onHover: (lines: string[] | null) => void;
}

function RowContent({ row, turn, span, call, calls, now, selected, t, onSelect, onHover }: RowContentProps) {
  switch (row.kind) {
    case "turn": {
      if (!turn) return null;
      const total = span.endMs - span.startMs;
      return (
        <>
          <span className="wf-label wf-question" title={turn.question}>
            {turn.question}
          </span>
          <span className="wf-track wf-axis" aria-hidden="true">
            {/* The total sits at the right end; ticks near it would run into it. */}
            {axisTicks(span).filter((at) => at / total < 0.8).map((at) => (
              <span key={at} className="wf-tick" style={{ left: `${(at / total) * 100}%` }}>
                {formatDuration(at)}
              </span>
            ))}
            <span className="wf-total">{t("wfTurnTotal", { duration: formatDuration(total) })}</span>
          </span>
        </>
      );
    }
    case "model": {
      const round = turn?.rounds.find((r) => r.round === row.round);
      if (!turn || !round || !calls) return null;
      const segments = modelSegments(turn, round, calls, now);
      const lines = describe(t, span, segments, t("wfModelRow", { round: row.round }));
      return (
        <>
          <span className="wf-label wf-model-label">{t("wfModelRow", { round: row.round })}</span>
          <Bars segments={segments} span={span} phase="model" label={lines.join(" · ")} onHover={(on) => onHover(on ? lines : null)} />
        </>
      );
    }
    case "call": {
      if (!call) return null;
      const segments = callSegments(call, now);
      const name = `${call.tool || "…"} ${summarizeArguments(call.arguments, call.argumentsText)}`;
      const lines = describe(t, span, segments, `${name} — ${t(`phase_${call.phase}`)}`, waitMs(call, now));
      return (
        <button
          type="button"
          className={`wf-call${selected ? " selected" : ""}`}
          data-call-id={call.callId}
          onClick={() => onSelect(call.callId)}
          aria-label={lines.join(" · ")}
        >
          <span className="wf-label" title={name}>
            <span className="wf-tool">{call.tool || "…"}</span> <span className="muted">{summarizeArguments(call.arguments, call.argumentsText)}</span>
          </span>
          <Bars segments={segments} span={span} phase={call.phase} label="" onHover={(on) => onHover(on ? lines : null)} />
        </button>
      );
    }
  }
}

/** The lines a hover shows: what, its start on the turn's axis, how long, how long it waited. */
function describe(t: Translate, span: Span, segments: Segment[], what: string, wait?: number): string[] {
  const first = segments[0];
  const last = segments.at(-1);
  if (!first || !last) return [what];
  const lines = [what, t("wfStart", { start: formatDuration(first.startMs - span.startMs) })];
  const run = segments.filter((s) => s.kind !== "wait");
  const runStart = run[0]?.startMs;
  if (runStart !== undefined) lines.push(t("wfDuration", { duration: formatDuration(last.endMs - runStart) }));
  if (wait !== undefined) lines.push(t("wfWaited", { wait: formatDuration(wait) }));
  return lines;
}

function Bars({ segments, span, phase, label, onHover }: { segments: Segment[]; span: Span; phase: string; label: string; onHover: (on: boolean) => void }) {
  return (
    // A labelled track is a picture of the model's round for a screen reader (a call's is inside
    // its button, which says it all); an aria-label on a plain span would not be read.
    <span className="wf-track" {...(label ? { role: "img", "aria-label": label } : {})} onMouseEnter={() => onHover(true)} onMouseLeave={() => onHover(false)}>
      {segments.map((segment, i) => {
        const { left, width } = placeOnAxis(segment, span);
        return <span key={i} className={`wf-bar wf-${segment.kind} phase-${phase}${segment.live ? " live" : ""}`} data-kind={segment.kind} style={{ left: `${left}%`, width: `${width}%` }} />;
      })}
    </span>
  );
}

function Legend({ t }: { t: Translate }) {
  return (
    <div className="wf-legend" aria-label={t("wfLegend")}>
      <span><i className="wf-bar wf-thinking" /> {t("wfThinking")}</span>
      <span><i className="wf-bar wf-streaming phase-model" /> {t("wfStreaming")}</span>
      <span><i className="wf-bar wf-wait" /> {t("wfWait")}</span>
      <span><i className="wf-bar wf-run phase-success" /> {t("wfRun")}</span>
    </div>
  );
}

/** The current time, a few times a second while something on the axis still grows. */
function useNow(active: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(timer);
  }, [active]);
  return now;
}
