// What a question waits for while Tooltrail's own model server starts: the `local-model` steps
// the backend sends before the turn has anything of its own to show. Pure, so the session keeps
// it and the tests fold steps and turn events into it without a window.
import type { Event, LocalModelStatus } from "../bindings";

/** The local model is starting or being prepared; `sinceMs` is when the wait began (window clock). */
export interface LocalWait {
  phase: "starting" | "warming";
  model: string;
  sinceMs: number;
}

/** The wait after one step of the local model's start, seen at `nowMs`; null once it is ready. */
export function foldLocalStatus(wait: LocalWait | null, status: LocalModelStatus, nowMs: number): LocalWait | null {
  switch (status.phase) {
    case "starting":
    case "warming":
      // One clock for the whole wait: preparing follows starting without starting again at 0.
      return { phase: status.phase, model: status.model, sinceMs: wait?.sinceMs ?? nowMs };
    case "ready":
      return null;
  }
  // Every phase is handled above; a new one fails to compile here.
  const unhandled: never = status;
  return unhandled;
}

/**
 * The wait after a batch of the turn's events: it is over once the turn shows something of its
 * own (the prompt being read, text, a call, an error or its end). Its start and the question's
 * message leave the wait showing, in case the server is started after the turn began.
 */
export function waitAfterEvents(wait: LocalWait | null, events: readonly Event[]): LocalWait | null {
  if (wait === null) return null;
  return events.some(movesTheTurn) ? null : wait;
}

function movesTheTurn(event: Event): boolean {
  // A view's turn (view_opened, view_closed) runs beside the question's: it says nothing of the
  // model's start.
  switch (event.type) {
    case "turn_started":
    case "message_added":
    case "context_usage":
    case "tool_mode_used":
    case "view_opened":
    case "view_closed":
      return false;
    case "prompt_progress":
    case "text_delta":
    case "tool_call_delta":
    case "approval_requested":
    case "user_question":
    case "tool_call_started":
    case "tool_call_progress":
    case "elicitation_requested":
    case "elicitation_answered":
    case "sampling_requested":
    case "sampling_answered":
    case "tool_call_finished":
    case "round_limit_reached":
    case "usage":
    case "answer_truncated":
    case "repetition_stopped":
    case "error":
    case "turn_finished":
      return true;
  }
  // Every event type is handled above; a new one fails to compile here.
  const unhandled: never = event;
  return unhandled;
}
