// The chat's state and the pure reducer that folds protocol events into it. The window applies
// live events and replays stored ones through the same function, so a redrawn conversation
// looks exactly like the live one did.
import { produce, type Draft } from "immer";
import type { ApprovalRecord, ErrorCode, Event, JsonValue, ToolError, ToolStatus, TurnEnd, Usage } from "../bindings";

/** Where a tool call is: its arguments streaming, waiting for approval, running, or ended. */
export type CallPhase = "streaming" | "waiting" | "running" | ToolStatus;

export interface ApprovalAsk {
  summary: string;
  cwd?: string;
  reason: string;
}

export interface CallView {
  callId: string;
  turnId: string;
  round: number;
  tool: string;
  /** The arguments as text: streamed fragments until the call starts, then pretty JSON. */
  argumentsText: string;
  arguments?: JsonValue;
  phase: CallPhase;
  /** When the call began running (ms since the epoch, Rust's clock). */
  startedMs?: number;
  finishedMs?: number;
  durationMs?: number;
  description?: string;
  result?: string;
  error?: ToolError;
  approval?: ApprovalRecord;
  ask?: ApprovalAsk;
  truncatedForModel?: boolean;
}

export interface RoundView {
  round: number;
  text: string;
  callIds: string[];
}

export interface TurnError {
  code: ErrorCode;
  message: string;
  fatal: boolean;
}

export interface TurnView {
  id: string;
  question: string;
  model: string;
  startedMs: number;
  finishedMs?: number;
  status: "running" | TurnEnd;
  rounds: RoundView[];
  errors: TurnError[];
  roundLimit?: number;
  usage: Usage;
}

export interface ChatState {
  conversationId: string | null;
  turns: TurnView[];
  calls: Record<string, CallView>;
  /** Call ids in the order they appeared: the timeline. */
  timeline: string[];
  /** Calls waiting for the user's decision, oldest first. */
  waiting: string[];
}

export const emptyChat: ChatState = {
  conversationId: null,
  turns: [],
  calls: {},
  timeline: [],
  waiting: [],
};

/** Folds one event into the state. Pure: the state passed in is left as it was. */
export function applyEvent(state: ChatState, event: Event): ChatState {
  return produce(state, (draft) => fold(draft, event));
}

/** Folds many events at once (a redraw, or a frame's worth of a live stream). */
export function applyEvents(state: ChatState, events: readonly Event[]): ChatState {
  if (events.length === 0) return state;
  return produce(state, (draft) => {
    for (const event of events) fold(draft, event);
  });
}

function findTurn(draft: Draft<ChatState>, turnId: string): Draft<TurnView> | undefined {
  // The live turn is the last one; search from the end.
  for (let i = draft.turns.length - 1; i >= 0; i--) {
    const turn = draft.turns[i];
    if (turn && turn.id === turnId) return turn;
  }
  return undefined;
}

function roundOf(turn: Draft<TurnView>, round: number): Draft<RoundView> {
  let view = turn.rounds.find((r) => r.round === round);
  if (!view) {
    view = { round, text: "", callIds: [] };
    turn.rounds.push(view);
    turn.rounds.sort((a, b) => a.round - b.round);
    view = turn.rounds.find((r) => r.round === round)!;
  }
  return view;
}

function ensureCall(draft: Draft<ChatState>, event: Event, callId: string, round: number, tool: string): Draft<CallView> {
  let call = draft.calls[callId];
  if (!call) {
    draft.calls[callId] = {
      callId,
      turnId: event.turn_id,
      round,
      tool,
      argumentsText: "",
      phase: "streaming",
    };
    call = draft.calls[callId]!;
    draft.timeline.push(callId);
    const turn = findTurn(draft, event.turn_id);
    if (turn) roundOf(turn, round).callIds.push(callId);
  }
  if (tool && !call.tool) call.tool = tool;
  return call;
}

function setArguments(call: Draft<CallView>, args: JsonValue) {
  call.arguments = args as Draft<JsonValue>;
  call.argumentsText = typeof args === "string" ? args : JSON.stringify(args, null, 2);
}

function stopWaiting(draft: Draft<ChatState>, callId: string) {
  const at = draft.waiting.indexOf(callId);
  if (at >= 0) draft.waiting.splice(at, 1);
}

function fold(draft: Draft<ChatState>, event: Event) {
  switch (event.type) {
    case "turn_started": {
      draft.conversationId = event.conversation_id;
      if (findTurn(draft, event.turn_id)) return;
      draft.turns.push({
        id: event.turn_id,
        question: event.user_message,
        model: event.model,
        startedMs: event.time_ms,
        status: "running",
        rounds: [],
        errors: [],
        usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
      });
      return;
    }
    case "message_added":
      // The messages the model saw; the chat is drawn from the other events.
      return;
    case "text_delta": {
      const turn = findTurn(draft, event.turn_id);
      if (turn) roundOf(turn, event.round).text += event.text;
      return;
    }
    case "tool_call_delta": {
      const call = ensureCall(draft, event, event.call_id, event.round, event.tool ?? "");
      if (call.phase === "streaming") call.argumentsText += event.arguments_delta;
      return;
    }
    case "approval_requested": {
      const turn = findTurn(draft, event.turn_id);
      const round = turn?.rounds.at(-1)?.round ?? 1;
      const call = ensureCall(draft, event, event.call_id, draft.calls[event.call_id]?.round ?? round, event.tool);
      call.tool = event.tool;
      setArguments(call, event.arguments);
      call.phase = "waiting";
      call.ask = { summary: event.summary, reason: event.reason, ...(event.cwd !== undefined ? { cwd: event.cwd } : {}) };
      if (!draft.waiting.includes(event.call_id)) draft.waiting.push(event.call_id);
      return;
    }
    case "tool_call_started": {
      const call = ensureCall(draft, event, event.call_id, event.round, event.tool);
      call.tool = event.tool;
      setArguments(call, event.arguments);
      call.phase = "running";
      call.startedMs = event.time_ms;
      call.approval = event.approval as Draft<ApprovalRecord>;
      stopWaiting(draft, event.call_id);
      return;
    }
    case "tool_call_finished": {
      const call = ensureCall(draft, event, event.call_id, event.round, event.tool);
      call.tool = event.tool;
      setArguments(call, event.arguments);
      call.phase = event.status;
      call.durationMs = event.duration_ms;
      call.finishedMs = event.time_ms;
      call.startedMs ??= event.time_ms - event.duration_ms;
      call.description = event.description;
      call.result = event.result;
      call.truncatedForModel = event.truncated_for_model;
      call.approval = event.approval as Draft<ApprovalRecord>;
      if (event.error) call.error = event.error;
      stopWaiting(draft, event.call_id);
      return;
    }
    case "round_limit_reached": {
      const turn = findTurn(draft, event.turn_id);
      if (turn) turn.roundLimit = event.limit;
      return;
    }
    case "usage": {
      const turn = findTurn(draft, event.turn_id);
      if (turn) {
        turn.usage.prompt_tokens += event.prompt_tokens;
        turn.usage.completion_tokens += event.completion_tokens;
        turn.usage.total_tokens += event.total_tokens;
      }
      return;
    }
    case "error": {
      const turn = findTurn(draft, event.turn_id);
      if (turn) turn.errors.push({ code: event.code, message: event.message, fatal: event.fatal });
      return;
    }
    case "turn_finished": {
      const turn = findTurn(draft, event.turn_id);
      if (!turn) return;
      turn.status = event.reason;
      turn.finishedMs = event.time_ms;
      // A call the turn left behind did not finish: it was stopped with the turn.
      for (const round of turn.rounds) {
        for (const callId of round.callIds) {
          const call = draft.calls[callId];
          if (call && (call.phase === "streaming" || call.phase === "waiting" || call.phase === "running")) {
            call.phase = "cancelled";
            call.finishedMs = event.time_ms;
            if (call.startedMs !== undefined) call.durationMs = Math.max(0, event.time_ms - call.startedMs);
          }
          stopWaiting(draft, callId);
        }
      }
      return;
    }
  }
  // Every event type is handled above; a new one fails to compile here.
  const unhandled: never = event;
  return unhandled;
}

/** The running turn, if any. */
export function runningTurn(state: ChatState): TurnView | undefined {
  const last = state.turns.at(-1);
  return last && last.status === "running" ? last : undefined;
}

export function isActive(phase: CallPhase): boolean {
  return phase === "streaming" || phase === "waiting" || phase === "running";
}
