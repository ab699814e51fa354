// The timeline on a time axis: per turn, the model's rounds and every tool call as bars, the
// way a browser's network panel draws requests. Calls that ran side by side are rows whose bars
// overlap; an approval's wait is a hatched piece before the run. Rows are one fixed height and
// virtualised, so ten thousand calls draw only the few dozen in view.
import { useVirtualizer } from "@tanstack/react-virtual";
import { memo, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import { formatDuration, summarizeArguments } from "../format";
import { useI18n, type Translate } from "../i18n";
import type { CallView, TurnView } from "../state/chat";
import { axisTicks, callSegments, modelSegments, placeOnAxis, turnSpan, waitMs, waterfallRows, type Segment, type Span, type WaterfallRow } from "../state/waterfall";

const ROW_HEIGHT = 24;

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

export default memo(function Waterfall({ turns: turnList, calls, selected, reveal, onSelect }: Props) {
  const { t } = useI18n();
  const scroller = useRef<HTMLDivElement>(null);
  const stickToBottom = useRef(true);
  const [hover, setHover] = useState<Hover | null>(null);
  const rows = useMemo(() => waterfallRows(turnList), [turnList]);
  const turns = useMemo(() => new Map(turnList.map((turn) => [turn.id, turn])), [turnList]);
  const live = turnList.some((turn) => turn.status === "running");
  const now = useNow(live);

  // The compiler cannot memoise around this hook; the component is memoised as a whole instead.
  // eslint-disable-next-line react-hooks/incompatible-library
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 12,
    getItemKey: (index) => rows[index]?.key ?? index,
  });

  useLayoutEffect(() => {
    if (stickToBottom.current && rows.length > 0) virtualizer.scrollToIndex(rows.length - 1, { align: "end" });
  }, [rows.length, virtualizer]);

  useEffect(() => {
    if (!selected || reveal === 0) return;
    const index = rows.findIndex((row) => row.kind === "call" && row.callId === selected);
    if (index < 0) return;
    stickToBottom.current = false;
    virtualizer.scrollToIndex(index, { align: "center" });
    // Only a new reveal request moves the view.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [reveal]);

  // The axis of each turn, worked out for the turns in view and kept while scrolling: working it
  // out walks every call of the turn. A turn's new events make a new turn object, and a new map.
  const spanOf = useMemo(() => {
    const spans = new WeakMap<TurnView, Span>();
    return (turn: TurnView) => {
      let span = spans.get(turn);
      if (!span) spans.set(turn, (span = turnSpan(turn, calls, now)));
      return span;
    };
  }, [calls, now]);

  const onScroll = () => {
    const el = scroller.current;
    if (el) stickToBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 48;
    setHover(null);
  };

  return (
    <div className="waterfall" data-testid="waterfall">
      <Legend t={t} />
      <div className="waterfall-scroll" ref={scroller} onScroll={onScroll} onMouseLeave={() => setHover(null)}>
        <div style={{ height: virtualizer.getTotalSize(), position: "relative" }}>
          {virtualizer.getVirtualItems().map((item) => {
            const row = rows[item.index]!;
            const turn = turns.get(row.turnId);
            if (!turn) return null;
            return (
              <div key={item.key} className={`wf-row wf-${row.kind}`} style={{ transform: `translateY(${item.start}px)`, height: ROW_HEIGHT }}>
                <RowContent
                  row={row}
                  turn={turn}
                  span={spanOf(turn)}
                  calls={calls}
                  now={now}
                  selected={selected}
                  t={t}
                  onSelect={onSelect}
                  onHover={(lines) => setHover(lines ? { lines, top: item.start - (scroller.current?.scrollTop ?? 0) } : null)}
                />
              </div>
            );
          })}
        </div>
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
  row: WaterfallRow;
  turn: TurnView;
  span: Span;
  calls: Record<string, CallView>;
  now: number;
  selected: string | null;
  t: Translate;
  onSelect: (callId: string) => void;
  onHover: (lines: string[] | null) => void;
}

function RowContent({ row, turn, span, calls, now, selected, t, onSelect, onHover }: RowProps) {
  switch (row.kind) {
    case "turn": {
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
      const round = turn.rounds.find((r) => r.round === row.round);
      if (!round) return null;
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
      const call = calls[row.callId];
      if (!call) return null;
      const segments = callSegments(call, now);
      const name = `${call.tool || "…"} ${summarizeArguments(call.arguments, call.argumentsText)}`;
      const lines = describe(t, span, segments, `${name} — ${t(`phase_${call.phase}`)}`, waitMs(call, now));
      return (
        <button
          type="button"
          className={`wf-call${selected === call.callId ? " selected" : ""}`}
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
