// The chat's state and the pure reducer that folds protocol events into it. The window applies
// live events and replays stored ones through the same function, so a redrawn conversation
// looks exactly like the live one did.
import type { ApprovalRecord, ErrorCode, Event, FileChange, JsonValue, ToolError, ToolMode, ToolStatus, TurnEnd, Usage } from "../bindings";
import type { ElicitationAction, ElicitationRequest, SamplingMessage } from "../bindings";
import { instructionsIn, type InstructionsUse } from "./instructions";
import type { TaskProgress, ViewEnd, ViewLink } from "../bindings";

/** Where a tool call is: its arguments streaming, waiting for approval, running, or ended. */
export type CallPhase = "streaming" | "waiting" | "running" | ToolStatus;

export interface ApprovalAsk {
  summary: string;
  cwd?: string;
  reason: string;
  /** The rule "always allow in this folder" would keep, when the call can have one. */
  rule?: string;
  /** The file change to approve, as a diff (`file_write`). */
  change?: FileChange;
  /** Only "allow once" or "deny": no rule or conversation allowance applies. */
  onceOnly?: boolean;
}

/** A question a running call (`ask_user`) puts to the user. */
export interface QuestionView {
  text: string;
  choices: string[];
}

/** What an MCP server asked while one of its tools ran, and how it was answered. */
export type ServerRequestView =
  | {
      kind: "elicitation";
      requestId: string;
      server: string;
      message: string;
      request: ElicitationRequest;
      answer?: { action: ElicitationAction; content?: JsonValue; reason?: string };
    }
  | {
      kind: "sampling";
      requestId: string;
      server: string;
      systemPrompt?: string;
      messages: SamplingMessage[];
      maxTokens: number;
      answer?: { approved: boolean; text?: string; model?: string; usage?: Usage; reason?: string };
    };

export interface CallView {
  callId: string;
  turnId: string;
  round: number;
  tool: string;
  /** The arguments as streamed (fragments of JSON text); `arguments` once parsed. */
  argumentsText: string;
  arguments?: JsonValue;
  phase: CallPhase;
  /** When the call began to wait for the user's approval (ms since the epoch, Rust's clock). */
  askedMs?: number;
  /** When the call began running (ms since the epoch, Rust's clock). */
  startedMs?: number;
  finishedMs?: number;
  durationMs?: number;
  description?: string;
  result?: string;
  /** The result as structured data (an MCP result whole, with its images), where there is one. */
  data?: JsonValue;
  error?: ToolError;
  approval?: ApprovalRecord;
  ask?: ApprovalAsk;
  /** The question the call asks the user, while and after it waits for the answer. */
  question?: QuestionView;
  /** The forms, pages and uses of the model its MCP server asked for while it ran. */
  requests?: ServerRequestView[];
  truncatedForModel?: boolean;
  /** The MCP server the tool belongs to (built-in tools have none). */
  server?: string;
  /** The latest progress the tool reported while running. */
  progress?: { progress: number; total?: number; message?: string };
  /** The task the MCP server runs the call as (MCP Tasks): where it stands, as last reported. */
  task?: TaskProgress;
  /** The MCP App view the tool renders its result with. */
  view?: ViewLink;
  /** For a call a view made: the call whose view made it. */
  viewOf?: string;
  /** The view turn: on a call with a view, its latest one; on a view's call, the one that made it. */
  viewId?: string;
  /** How the latest view of this call ended, once it has. */
  viewEnd?: ViewEnd;
}

export interface RoundView {
  round: number;
  text: string;
  callIds: string[];
  /** When the request of this round was made ready to send (its `context_usage`). */
  requestMs?: number;
  /** The model's first streamed piece of text or of a call: until then it was thinking. */
  firstOutputMs?: number;
  /** When the model's answer of this round was complete (its assistant message). */
  endMs?: number;
  /** How far the server has read this round's prompt, while it reads a long one; gone once the
   * round's first piece streams, its answer is complete, or the turn ends. */
  prompt?: PromptRead;
}

/** The server reading a round's prompt before its first token (`prompt_progress`). */
export interface PromptRead {
  processed: number;
  total: number;
  /** Tokens taken from the server's cache instead of read. */
  cached: number;
  elapsedMs: number;
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
  /** How the tools were offered (native function calling or prompt mode), once known. */
  toolMode?: ToolMode;
  /** The server refused native tools in this turn, and prompt mode took over. */
  toolModeFellBack?: boolean;
  usage: Usage;
  /** The context window use of the turn's latest request to the model, estimated before it went. */
  context?: { usedTokens: number; windowTokens: number };
  /** Rounds whose answer was cut short by the model's token limit or context window. */
  truncatedRounds?: number[];
  /** Rounds whose answer Tooltrail stopped because the model repeated itself. */
  repetitions?: { round: number; tool?: string; repeats: number; tokens: number }[];
  /** Assistant messages seen: the n-th is the answer of round n. */
  assistantMessages: number;
  /** The project instructions (AGENTS.md, ...) the system prompt this turn began carries. */
  instructions?: InstructionsUse;
}

export interface ChatState {
  conversationId: string | null;
  turns: TurnView[];
  calls: Record<string, CallView>;
  /** Call ids in the order they appeared: the timeline. */
  timeline: string[];
  /** Calls waiting for the user's decision, oldest first. */
  waiting: string[];
  /** View turns seen, by their id (the view's): the call whose view each is. */
  viewTurns: Record<string, string>;
}

export const emptyChat: ChatState = {
  conversationId: null,
  turns: [],
  calls: {},
  timeline: [],
  waiting: [],
  viewTurns: {},
};

/** Folds one event into the state. Pure: the state passed in is left as it was. */
export function applyEvent(state: ChatState, event: Event): ChatState {
  return applyEvents(state, [event]);
}

/**
 * Folds many events at once (a redraw, or a frame's worth of a live stream). Pure: objects of
 * the old state are copied before they change, each at most once per call, so folding ten
 * thousand calls costs about as much as reading them.
 */
export function applyEvents(state: ChatState, events: readonly Event[]): ChatState {
  if (events.length === 0) return state;
  const draft = new Draft(state);
  for (const event of events) fold(draft, event);
  return draft.state;
}

/** Copy-on-write access to a state: whatever is about to change is copied first, once. */
class Draft {
  readonly state: ChatState;
  private readonly own = new Set<object>();

  constructor(base: ChatState) {
    this.state = { ...base };
  }

  private mine<T extends object>(value: T): T {
    if (this.own.has(value)) return value;
    const copy = (Array.isArray(value) ? value.slice() : { ...value }) as T;
    this.own.add(copy);
    return copy;
  }

  /** A list of the state, ready to change. */
  list<T>(items: T[]): T[] {
    return this.mine(items);
  }

  calls(): Record<string, CallView> {
    return (this.state.calls = this.mine(this.state.calls));
  }

  timeline(): string[] {
    return (this.state.timeline = this.mine(this.state.timeline));
  }

  waiting(): string[] {
    return (this.state.waiting = this.mine(this.state.waiting));
  }

  viewTurns(): Record<string, string> {
    return (this.state.viewTurns = this.mine(this.state.viewTurns));
  }

  turns(): TurnView[] {
    return (this.state.turns = this.mine(this.state.turns));
  }

  /** The turn `turnId`, ready to change; the live turn is the last one, so search from the end. */
  turn(turnId: string): TurnView | undefined {
    const turns = this.state.turns;
    for (let i = turns.length - 1; i >= 0; i--) {
      const turn = turns[i];
      if (turn && turn.id === turnId) {
        const copy = this.mine(turn);
        if (copy !== turn) this.turns()[i] = copy;
        return copy;
      }
    }
    return undefined;
  }

  hasTurn(turnId: string): boolean {
    return this.state.turns.some((turn) => turn.id === turnId);
  }

  /** The round `round` of a turn (from `turn()`), created when new, ready to change. */
  round(turn: TurnView, round: number): RoundView {
    turn.rounds = this.mine(turn.rounds);
    // Events almost always belong to the newest round.
    let at = turn.rounds.length - 1;
    const last = turn.rounds[at];
    // A round after the newest is new: no need to look through the others for it.
    if (last?.round !== round) at = last !== undefined && round > last.round ? -1 : turn.rounds.findIndex((r) => r.round === round);
    if (at < 0) {
      const created: RoundView = { round, text: "", callIds: [] };
      this.own.add(created);
      this.own.add(created.callIds);
      // In order: a new round almost always goes last, so look for its place from the end
      // (sorting on every new round made a long turn's redraw quadratic).
      let place = turn.rounds.length;
      while (place > 0 && turn.rounds[place - 1]!.round > round) place--;
      turn.rounds.splice(place, 0, created);
      return created;
    }
    const copy = this.mine(turn.rounds[at]!);
    turn.rounds[at] = copy;
    return copy;
  }

  call(callId: string): CallView | undefined {
    const call = this.state.calls[callId];
    if (!call) return undefined;
    const copy = this.mine(call);
    if (copy !== call) this.calls()[callId] = copy;
    return copy;
  }

  addCall(call: CallView) {
    this.own.add(call);
    this.calls()[call.callId] = call;
    const timeline = this.timeline();
    const parent = call.viewOf;
    const at = parent === undefined ? -1 : timeline.indexOf(parent);
    if (at < 0) {
      timeline.push(call.callId);
      return;
    }
    // A view's call goes under the call whose view made it, after that view's earlier calls.
    let place = at + 1;
    while (place < timeline.length && this.state.calls[timeline[place]!]?.viewOf === parent) place++;
    timeline.splice(place, 0, call.callId);
  }
}

function ensureCall(draft: Draft, event: Event, callId: string, round: number, tool: string): CallView {
  let call = draft.call(callId);
  if (!call) {
    call = { callId, turnId: event.turn_id, round, tool, argumentsText: "", phase: "streaming" };
    // A view turn's calls belong to no round: they hang under the call whose view made them.
    const parent = draft.state.viewTurns[event.turn_id];
    if (parent !== undefined) {
      call.round = 0;
      call.viewOf = parent;
      call.viewId = event.turn_id;
    }
    draft.addCall(call);
    const turn = draft.turn(event.turn_id);
    if (turn) {
      const view = draft.round(turn, round);
      view.callIds = draft.list(view.callIds);
      view.callIds.push(callId);
    }
  }
  if (tool && !call.tool) call.tool = tool;
  return call;
}

function setArguments(call: CallView, args: JsonValue) {
  // Pretty-printed only when a card opens: a long history should not pay for it up front.
  call.arguments = args;
}

/** The arguments as a reader wants them: pretty JSON once parsed, else the streamed text. */
export function argumentsText(call: CallView): string {
  if (call.arguments === undefined) return call.argumentsText;
  return typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments, null, 2);
}

/** One kind of event, for the function that folds it in. */
type EventOf<K extends Event["type"]> = Extract<Event, { type: K }>;

function stopWaiting(draft: Draft, callId: string) {
  if (!draft.state.waiting.includes(callId)) return;
  const waiting = draft.waiting();
  waiting.splice(waiting.indexOf(callId), 1);
}

/** A new question: its turn, with nothing in it yet. */
function startTurn(draft: Draft, event: EventOf<"turn_started">) {
  draft.state.conversationId = event.conversation_id;
  if (draft.hasTurn(event.turn_id)) return;
  draft.turns().push({
    id: event.turn_id,
    question: event.user_message,
    model: event.model,
    startedMs: event.time_ms,
    status: "running",
    rounds: [],
    errors: [],
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    assistantMessages: 0,
  });
}

/** A message of the conversation: the project's instructions a turn read, or an assistant's text. */
function addMessage(draft: Draft, event: EventOf<"message_added">) {
  // The chat is drawn from the other events, but a stored conversation keeps no text
  // pieces, only the assistant's messages: the n-th of a turn is the text of round n.
  if (event.message.role === "system") {
    const turn = draft.turn(event.turn_id);
    const instructions = instructionsIn(event.message.content);
    if (turn && instructions) turn.instructions = instructions;
    return;
  }
  if (event.message.role !== "assistant") return;
  const turn = draft.turn(event.turn_id);
  if (!turn) return;
  turn.assistantMessages += 1;
  const content = event.message.content;
  const streamed = turn.rounds.find((r) => r.round === turn.assistantMessages)?.text ?? "";
  const round = draft.round(turn, turn.assistantMessages);
  if (content && !streamed) round.text = content;
  round.endMs = event.time_ms;
  delete round.prompt;
}

/** A call waits for the user's yes: what it would do, and why it asks. */
function askApproval(draft: Draft, event: EventOf<"approval_requested">) {
  const known = draft.state.calls[event.call_id];
  const latest = draft.state.viewTurns[event.turn_id] !== undefined ? 0 : (draft.state.turns.find((t) => t.id === event.turn_id)?.rounds.at(-1)?.round ?? 1);
  const call = ensureCall(draft, event, event.call_id, known?.round ?? latest, event.tool);
  call.tool = event.tool;
  setArguments(call, event.arguments);
  call.phase = "waiting";
  call.askedMs ??= event.time_ms;
  call.ask = {
    summary: event.summary,
    reason: event.reason,
    ...(event.cwd !== undefined ? { cwd: event.cwd } : {}),
    ...(event.rule !== undefined ? { rule: event.rule } : {}),
    ...(event.change !== undefined ? { change: event.change } : {}),
    ...(event.once_only ? { onceOnly: true } : {}),
  };
  if (!draft.state.waiting.includes(event.call_id)) draft.waiting().push(event.call_id);
}

/** An MCP server asks, while its tool runs, for input or for the model. */
function addServerRequest(draft: Draft, event: EventOf<"elicitation_requested" | "sampling_requested">) {
  if (!draft.state.calls[event.call_id]) return;
  const call = draft.call(event.call_id)!;
  const request: ServerRequestView =
    event.type === "elicitation_requested"
      ? { kind: "elicitation", requestId: event.request_id, server: event.server, message: event.message, request: event.request }
      : {
          kind: "sampling",
          requestId: event.request_id,
          server: event.server,
          messages: event.messages,
          maxTokens: event.max_tokens,
          ...(event.system_prompt !== undefined ? { systemPrompt: event.system_prompt } : {}),
        };
  call.requests = [...(call.requests ?? []).filter((known) => known.requestId !== event.request_id), request];
}

/** How a server's request was answered. */
function answerServerRequest(draft: Draft, event: EventOf<"elicitation_answered" | "sampling_answered">) {
  if (!draft.state.calls[event.call_id]) return;
  const call = draft.call(event.call_id)!;
  call.requests = (call.requests ?? []).map((request): ServerRequestView => {
    if (request.requestId !== event.request_id) return request;
    if (request.kind === "elicitation" && event.type === "elicitation_answered") {
      return {
        ...request,
        answer: {
          action: event.action,
          ...(event.content !== undefined ? { content: event.content } : {}),
          ...(event.reason !== undefined ? { reason: event.reason } : {}),
        },
      };
    }
    if (request.kind === "sampling" && event.type === "sampling_answered") {
      return {
        ...request,
        answer: {
          approved: event.approved,
          ...(event.text !== undefined ? { text: event.text } : {}),
          ...(event.model !== undefined ? { model: event.model } : {}),
          ...(event.usage !== undefined ? { usage: event.usage } : {}),
          ...(event.reason !== undefined ? { reason: event.reason } : {}),
        },
      };
    }
    return request;
  });
}

/** A call begins to run. */
function startCall(draft: Draft, event: EventOf<"tool_call_started">) {
  const call = ensureCall(draft, event, event.call_id, event.round, event.tool);
  call.tool = event.tool;
  setArguments(call, event.arguments);
  call.phase = "running";
  call.startedMs = event.time_ms;
  // Known from the start, so a call stopped before it finished still says what it does.
  if (event.description) call.description = event.description;
  call.approval = event.approval;
  if (event.source.kind === "mcp") call.server = event.source.server;
  if (event.view) call.view = event.view;
  stopWaiting(draft, event.call_id);
}

/** A call ended: its result, error, time and how it was let run. */
function finishCall(draft: Draft, event: EventOf<"tool_call_finished">) {
  const call = ensureCall(draft, event, event.call_id, event.round, event.tool);
  call.tool = event.tool;
  setArguments(call, event.arguments);
  call.phase = event.status;
  call.durationMs = event.duration_ms;
  if (event.source.kind === "mcp") call.server = event.source.server;
  call.finishedMs = event.time_ms;
  call.startedMs ??= event.time_ms - event.duration_ms;
  if (event.description || call.description === undefined) call.description = event.description;
  call.result = event.result;
  if (event.data !== undefined) call.data = event.data;
  call.truncatedForModel = event.truncated_for_model;
  call.approval = event.approval;
  if (event.error) call.error = event.error;
  if (event.view) call.view = event.view;
  stopWaiting(draft, event.call_id);
}

/** A view of a call's result was shown: its turn's calls will hang under that call. */
function openView(draft: Draft, event: EventOf<"view_opened">) {
  draft.state.conversationId ??= event.conversation_id;
  if (draft.state.viewTurns[event.turn_id] !== event.parent_call_id) draft.viewTurns()[event.turn_id] = event.parent_call_id;
  const parent = draft.call(event.parent_call_id);
  if (!parent) return;
  parent.viewId = event.turn_id;
  parent.view ??= { resource_uri: event.resource_uri };
  delete parent.viewEnd;
}

/** A view was closed: a call it left waiting or running ends with it. */
function closeView(draft: Draft, event: EventOf<"view_closed">) {
  const parentId = draft.state.viewTurns[event.turn_id];
  if (parentId === undefined) return;
  const parent = draft.state.calls[parentId];
  if (parent && parent.viewId === event.turn_id) draft.call(parentId)!.viewEnd = event.reason;
  for (const id of draft.state.timeline) {
    const call = draft.state.calls[id];
    if (!call || call.viewId !== event.turn_id || call.viewOf === undefined || !isActive(call.phase)) continue;
    const ended = draft.call(id)!;
    ended.phase = "cancelled";
    ended.finishedMs = event.time_ms;
    if (ended.startedMs !== undefined) ended.durationMs = Math.max(0, event.time_ms - ended.startedMs);
    stopWaiting(draft, id);
  }
}

/** The model repeated itself and was stopped: the calls it had begun are dropped. */
function stopRepetition(draft: Draft, event: EventOf<"repetition_stopped">) {
  // Calls that began to stream but were cut off never run: off the timeline.
  for (const callId of event.dropped ?? []) {
    const call = draft.state.calls[callId];
    if (!call) continue;
    const calls = draft.calls();
    delete calls[callId];
    const timeline = draft.timeline();
    const at = timeline.indexOf(callId);
    if (at >= 0) timeline.splice(at, 1);
    const owner = draft.turn(call.turnId);
    if (owner) {
      const round = draft.round(owner, call.round);
      round.callIds = round.callIds.filter((id) => id !== callId);
    }
  }
  const turn = draft.turn(event.turn_id);
  if (turn && !(turn.repetitions ?? []).some((r) => r.round === event.round)) {
    turn.repetitions = [
      ...(turn.repetitions ?? []),
      { round: event.round, tool: event.tool, repeats: event.repeats, tokens: event.tokens },
    ];
  }
}

/** The server reads a long prompt: how far, until the round's first piece streams. */
function readPrompt(draft: Draft, event: EventOf<"prompt_progress">) {
  const live = draft.state.turns.find((turn) => turn.id === event.turn_id);
  if (!live || live.status !== "running") return;
  const known = live.rounds.find((round) => round.round === event.round);
  // A report that arrives after the round began to answer is old news.
  if (known && (known.firstOutputMs !== undefined || known.endMs !== undefined)) return;
  const round = draft.round(draft.turn(event.turn_id)!, event.round);
  round.prompt = { processed: event.processed, total: event.total, cached: event.cached, elapsedMs: event.elapsed_ms };
}

/** The turn ended, and with it every call it left unfinished. */
function finishTurn(draft: Draft, event: EventOf<"turn_finished">) {
  const turn = draft.turn(event.turn_id);
  if (!turn) return;
  turn.status = event.reason;
  turn.finishedMs = event.time_ms;
  // A finished turn reads nothing more: a stored conversation's progress must not show.
  for (const round of turn.rounds) {
    if (round.prompt) delete draft.round(turn, round.round).prompt;
  }
  // A call the turn left behind did not finish: it was stopped with the turn.
  for (const round of turn.rounds) {
    for (const callId of round.callIds) {
      const phase = draft.state.calls[callId]?.phase;
      if (phase === "streaming" || phase === "waiting" || phase === "running") {
        const call = draft.call(callId)!;
        call.phase = "cancelled";
        call.finishedMs = event.time_ms;
        if (call.startedMs !== undefined) call.durationMs = Math.max(0, event.time_ms - call.startedMs);
      }
      stopWaiting(draft, callId);
    }
  }
}

function fold(draft: Draft, event: Event) {
  switch (event.type) {
    case "turn_started":
      startTurn(draft, event);
      return;
    case "message_added":
      addMessage(draft, event);
      return;
    case "text_delta": {
      const turn = draft.turn(event.turn_id);
      if (!turn) return;
      const round = draft.round(turn, event.round);
      round.text += event.text;
      round.firstOutputMs ??= event.time_ms;
      delete round.prompt;
      return;
    }
    case "tool_call_delta": {
      const call = ensureCall(draft, event, event.call_id, event.round, event.tool ?? "");
      if (call.phase === "streaming") call.argumentsText += event.arguments_delta;
      // Named on the delta that names the tool: a live call's view opens while it streams.
      if (event.view) call.view = event.view;
      const turn = draft.turn(event.turn_id);
      if (turn) {
        const round = draft.round(turn, event.round);
        round.firstOutputMs ??= event.time_ms;
        delete round.prompt;
      }
      return;
    }
    case "approval_requested":
      askApproval(draft, event);
      return;
    case "user_question": {
      const call = draft.state.calls[event.call_id];
      if (!call) return;
      draft.call(event.call_id)!.question = { text: event.question, choices: event.choices };
      return;
    }
    case "elicitation_requested":
    case "sampling_requested":
      addServerRequest(draft, event);
      return;
    case "elicitation_answered":
    case "sampling_answered":
      answerServerRequest(draft, event);
      return;
    case "tool_call_started":
      startCall(draft, event);
      return;
    case "tool_call_progress": {
      const call = draft.state.calls[event.call_id];
      if (!call || call.phase !== "running") return;
      const running = draft.call(event.call_id)!;
      running.progress = {
        progress: event.progress,
        ...(event.total !== undefined ? { total: event.total } : {}),
        ...(event.message !== undefined ? { message: event.message } : {}),
      };
      // A task's state stays on the card after the call ends (how the task ended).
      if (event.task) running.task = event.task;
      return;
    }
    case "tool_call_finished":
      finishCall(draft, event);
      return;
    case "prompt_progress":
      readPrompt(draft, event);
      return;
    case "tool_mode_used": {
      const turn = draft.turn(event.turn_id);
      if (turn) {
        turn.toolMode = event.mode;
        turn.toolModeFellBack = (turn.toolModeFellBack ?? false) || event.fell_back;
      }
      return;
    }
    case "round_limit_reached": {
      const turn = draft.turn(event.turn_id);
      if (turn) turn.roundLimit = event.limit;
      return;
    }
    case "usage": {
      const turn = draft.turn(event.turn_id);
      if (turn) {
        turn.usage = {
          prompt_tokens: turn.usage.prompt_tokens + event.prompt_tokens,
          completion_tokens: turn.usage.completion_tokens + event.completion_tokens,
          total_tokens: turn.usage.total_tokens + event.total_tokens,
        };
      }
      return;
    }
    case "context_usage": {
      const turn = draft.turn(event.turn_id);
      if (!turn) return;
      turn.context = { usedTokens: event.used_tokens, windowTokens: event.window_tokens };
      draft.round(turn, event.round).requestMs ??= event.time_ms;
      return;
    }
    case "answer_truncated": {
      const turn = draft.turn(event.turn_id);
      if (turn && !(turn.truncatedRounds ?? []).includes(event.round)) {
        turn.truncatedRounds = [...(turn.truncatedRounds ?? []), event.round];
      }
      return;
    }
    case "repetition_stopped":
      stopRepetition(draft, event);
      return;
    case "error": {
      const turn = draft.turn(event.turn_id);
      if (turn) turn.errors = [...turn.errors, { code: event.code, message: event.message, fatal: event.fatal }];
      return;
    }
    case "turn_finished":
      finishTurn(draft, event);
      return;
    case "view_opened":
      openView(draft, event);
      return;
    case "view_closed":
      closeView(draft, event);
      return;
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
