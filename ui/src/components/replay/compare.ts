// The comparison of a replay with its original, as the window lays it out: one line per
// aligned row, each side's call or nothing, the row where the two part marked.
import type { ComparedCall, ReplayComparison, TurnFigures } from "../../api";
import { summarizeArguments } from "../../format";

export interface ComparedLine {
  /** 1-based position along the aligned rows. */
  position: number;
  original: ComparedCall | null;
  replay: ComparedCall | null;
  /** The first call where the two part. */
  parts: boolean;
}

/** The aligned rows of `comparison`, each with the calls it names (null: that side has none). */
export function comparedLines(comparison: ReplayComparison): ComparedLine[] {
  const divergence = comparison.first_divergence;
  return comparison.rows.map((row, index) => ({
    position: index + 1,
    original: row.original === null ? null : comparison.original.calls[row.original] ?? null,
    replay: row.replay === null ? null : comparison.replay.calls[row.replay] ?? null,
    parts: divergence !== null && divergence === index + 1,
  }));
}

/** A call as one line: its tool and its arguments, short. */
export function callLine(call: ComparedCall): string {
  return summarizeArguments(call.arguments);
}

/** A share (0–1) as a whole percentage. */
export function percent(share: number): string {
  return `${Math.round(share * 100)}%`;
}

/**
 * The length of a turn's time axis on the waterfall: the turn's own total, or, when it has
 * none (it never ended), the end of its last call; never 0, so nothing divides by it.
 */
export function axisMs(figures: TurnFigures): number {
  return Math.max(1, figures.total_ms ?? 0, ...figures.calls.map((call) => call.ended_ms));
}

/** Where a call sits on its turn's axis, in percent of the axis. */
export interface CallPlace {
  /** A bar from `left` over `width`; a marker (a call not run or answered from the record takes no time) at `left`. */
  kind: "bar" | "marker";
  left: number;
  width: number;
  /** From the question, in ms. */
  startMs: number;
  endMs: number;
}

/** A call's place on an axis of `axis` ms: it ran for `duration_ms` up to `ended_ms`. */
export function placeCall(call: ComparedCall, axis: number): CallPlace {
  const endMs = Math.min(axis, Math.max(0, call.ended_ms));
  const startMs = Math.max(0, endMs - Math.max(0, call.duration_ms));
  const at = (ms: number) => (ms / axis) * 100;
  if (call.not_run || call.from_record) return { kind: "marker", left: at(endMs), width: 0, startMs: endMs, endMs };
  return { kind: "bar", left: at(startMs), width: at(endMs - startMs), startMs, endMs };
}
