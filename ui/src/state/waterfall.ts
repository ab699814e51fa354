// The timeline on a time axis, as a browser's network panel draws requests: per turn, a row for
// the model's part of each round and a row for each tool call, every bar placed on the turn's
// own axis. Calls that ran in parallel are rows whose bars overlap in time. Pure functions of
// the chat state, so the component only draws and the tests check the geometry.
import type { CallPhase, CallView, ChatState, RoundView, TurnView } from "./chat";

export type WaterfallRow =
  | { kind: "turn"; key: string; turnId: string }
  | { kind: "model"; key: string; turnId: string; round: number }
  | { kind: "call"; key: string; turnId: string; callId: string };

/** The rows in order: each turn's head, then per round the model's row and the calls' rows. */
export function waterfallRows(turns: readonly TurnView[]): WaterfallRow[] {
  const rows: WaterfallRow[] = [];
  for (const turn of turns) {
    rows.push({ kind: "turn", key: `t:${turn.id}`, turnId: turn.id });
    for (const round of turn.rounds) {
      rows.push({ kind: "model", key: `m:${turn.id}:${round.round}`, turnId: turn.id, round: round.round });
      for (const callId of round.callIds) rows.push({ kind: "call", key: `c:${callId}`, turnId: turn.id, callId });
    }
  }
  return rows;
}

/** A turn's axis: from its question to its end (or now, while it runs). */
export interface Span {
  startMs: number;
  endMs: number;
}

export function turnSpan(turn: TurnView, calls: Record<string, CallView>, nowMs: number): Span {
  let end = turn.finishedMs ?? nowMs;
  // Clocks are the engine's; a stored turn's last event may sit after `finishedMs` by a hair.
  for (const round of turn.rounds) {
    if (round.endMs !== undefined) end = Math.max(end, round.endMs);
    for (const id of round.callIds) {
      const finished = calls[id]?.finishedMs;
      if (finished !== undefined) end = Math.max(end, finished);
    }
  }
  return { startMs: turn.startedMs, endMs: Math.max(end, turn.startedMs + 1) };
}

/** What a bar piece stands for: the model thinking, the model streaming, a wait, a run. */
export type SegmentKind = "thinking" | "streaming" | "wait" | "run";

export interface Segment {
  kind: SegmentKind;
  startMs: number;
  endMs: number;
  /** Set while the piece is still growing. */
  live: boolean;
}

/**
 * The model's part of a round: from the request (or, for a record without that, from the end
 * of the round before) to its first streamed piece (thinking), then to the complete answer
 * (streaming). A round still streaming ends at `nowMs`.
 */
export function modelSegments(turn: TurnView, round: RoundView, calls: Record<string, CallView>, nowMs: number): Segment[] {
  const start = round.requestMs ?? roundStart(turn, round, calls);
  const running = turn.status === "running" && round === turn.rounds.at(-1) && round.endMs === undefined;
  const end = Math.max(start, round.endMs ?? (running ? nowMs : (turn.finishedMs ?? start)));
  const first = round.firstOutputMs;
  if (first === undefined) {
    // A live round with nothing streamed yet is thinking; a stored one kept no pieces' times.
    return [{ kind: running ? "thinking" : "streaming", startMs: start, endMs: end, live: running }];
  }
  const from = Math.min(Math.max(first, start), end);
  const out: Segment[] = [];
  if (from > start) out.push({ kind: "thinking", startMs: start, endMs: from, live: false });
  out.push({ kind: "streaming", startMs: from, endMs: end, live: running });
  return out;
}

/** Where a round's request began when the record does not say: after the round before it. */
function roundStart(turn: TurnView, round: RoundView, calls: Record<string, CallView>): number {
  const at = turn.rounds.indexOf(round);
  const before = at > 0 ? turn.rounds[at - 1] : undefined;
  if (!before) return turn.startedMs;
  let start = before.endMs ?? turn.startedMs;
  for (const id of before.callIds) {
    const call = calls[id];
    if (call?.finishedMs !== undefined) start = Math.max(start, call.finishedMs);
  }
  return start;
}

/**
 * A call's bar: the wait for the user's approval (from the question to the start, or to the
 * refusal), then the run (from its start to its end, or to `nowMs` while it runs).
 */
export function callSegments(call: CallView, nowMs: number): Segment[] {
  const out: Segment[] = [];
  if (call.askedMs !== undefined) {
    const waitEnd = call.phase === "waiting" ? nowMs : call.phase === "denied" ? (call.finishedMs ?? call.askedMs) : (call.startedMs ?? call.finishedMs ?? nowMs);
    out.push({ kind: "wait", startMs: call.askedMs, endMs: Math.max(call.askedMs, waitEnd), live: call.phase === "waiting" });
  }
  if (call.startedMs !== undefined && call.phase !== "denied") {
    const running = call.phase === "running";
    const end = running ? nowMs : (call.finishedMs ?? call.startedMs + (call.durationMs ?? 0));
    out.push({ kind: "run", startMs: call.startedMs, endMs: Math.max(call.startedMs, end), live: running });
  }
  return out;
}

/** How long a call waited for approval, when it did. */
export function waitMs(call: CallView, nowMs: number): number | undefined {
  const wait = callSegments(call, nowMs).find((s) => s.kind === "wait");
  return wait && wait.endMs - wait.startMs;
}

/** A piece's place on the axis, in percent of its width (never narrower than a sliver). */
export function placeOnAxis(segment: Segment, span: Span): { left: number; width: number } {
  const total = span.endMs - span.startMs;
  const left = clamp(((segment.startMs - span.startMs) / total) * 100);
  const right = clamp(((segment.endMs - span.startMs) / total) * 100);
  return { left, width: Math.max(0, right - left) };
}

function clamp(percent: number): number {
  return Math.min(100, Math.max(0, percent));
}

/** Whether any bar still grows: the view then redraws on a timer. */
export function anyLive(chat: ChatState): boolean {
  return chat.turns.some((turn) => turn.status === "running");
}

/** The colour class of a call's run, by how it ended. */
export function phaseClass(phase: CallPhase): string {
  return `phase-${phase}`;
}

/** Tick marks of an axis: about four, at round numbers of milliseconds. */
export function axisTicks(span: Span): number[] {
  const total = span.endMs - span.startMs;
  const steps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_800_000, 3_600_000];
  const step = steps.find((s) => total / s <= 4) ?? total / 4;
  const ticks: number[] = [];
  for (let at = step; at < total; at += step) ticks.push(at);
  return ticks;
}
