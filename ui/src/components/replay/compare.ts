// The comparison of a replay with its original, as the window lays it out: one line per
// aligned row, each side's call or nothing, the row where the two part marked.
import type { ComparedCall, ReplayComparison } from "../../api";
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
