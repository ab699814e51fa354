// The chat session: the reducer's state, the live event stream (batched per frame), and the
// actions the window offers — send, stop, answer an approval, switch conversations.
import { useCallback, useEffect, useReducer, useRef, useState } from "react";
import { api, errorCode, errorMessage } from "./api";
import { stopListening } from "./listening";
import type { ApprovalReply, AttachmentSource, Event, TurnChanges, UndoReport } from "./bindings";
import { recordTextLatency } from "./perf";
import { applyEvents, emptyChat, runningTurn, type ChatState } from "./state/chat";
import { foldLocalStatus, waitAfterEvents, type LocalWait } from "./state/localWait";

type Action = { kind: "events"; events: Event[] } | { kind: "reset"; state: ChatState };

function reducer(state: ChatState, action: Action): ChatState {
  switch (action.kind) {
    case "events":
      return applyEvents(state, action.events);
    case "reset":
      return action.state;
  }
}

/** A question that has not produced its first event yet, or that failed to send. */
export interface Outgoing {
  text: string;
  error?: string;
  /** The error's code (`unreachable`: the endpoint did not answer, so the guide is offered). */
  code?: string;
}

export interface Session {
  chat: ChatState;
  outgoing: Outgoing | null;
  /** The local model starting or being prepared for the question, until the turn moves. */
  localWait: LocalWait | null;
  busy: boolean;
  send: (text: string, attachments?: AttachmentSource[]) => void;
  retry: () => void;
  stop: () => void;
  answer: (callId: string, reply: ApprovalReply) => Promise<void>;
  /** Answers a question the model asked; `null` dismisses it. */
  answerQuestion: (callId: string, answer: string | null) => Promise<void>;
  /** The turns of this conversation that wrote files, by turn id. */
  changes: Record<string, TurnChanges>;
  /** Puts back what a turn wrote; `force` overwrites files changed since. */
  undo: (turnId: string, force: boolean) => Promise<UndoReport>;
  open: (conversationId: string) => Promise<void>;
  reset: () => void;
  /** The last question asked, for retrying a failed turn. */
  lastQuestion: string | null;
  /** Whether this window saw the call with a view start live, its view not yet opened for it. */
  sawViewStart: (callId: string) => boolean;
  /** Takes the live start of the call for its view: true once, the first time it opens. */
  claimViewStart: (callId: string) => boolean;
  /** Where a view turn's events go: into this conversation's state while it is shown. */
  viewSink: () => (event: Event) => void;
}

export function useSession(onTurnFinished: () => void): Session {
  const [chat, dispatch] = useReducer(reducer, emptyChat);
  const [outgoing, setOutgoing] = useState<Outgoing | null>(null);
  const [changes, setChanges] = useState<Record<string, TurnChanges>>({});
  const [localWait, setLocalWait] = useState<LocalWait | null>(null);
  const queue = useRef<Event[]>([]);
  // Calls with a view whose start came down a live channel, not from the record, and those whose
  // view has opened by itself since (a card scrolled back into view does not open it again).
  const liveViews = useRef(new Set<string>());
  const claimedViews = useRef(new Set<string>());
  const scheduled = useRef(false);
  // Events of a conversation the window has left are dropped; each view gets a new token.
  const view = useRef(0);
  const chatRef = useRef(chat);
  const finishedRef = useRef(onTurnFinished);
  useEffect(() => {
    chatRef.current = chat;
    finishedRef.current = onTurnFinished;
  });

  // Which turns wrote files (for "Undo these changes"); stale answers for a conversation the
  // window has left are dropped.
  const loadChanges = useCallback(async (conversationId: string) => {
    const token = view.current;
    const turns = await api.turnChanges(conversationId).catch(() => []);
    if (token === view.current) setChanges(Object.fromEntries(turns.map((turn) => [turn.turn_id, turn])));
  }, []);

  const flush = useCallback(() => {
    scheduled.current = false;
    const events = queue.current;
    if (events.length === 0) return;
    queue.current = [];
    dispatch({ kind: "events", events });
    setLocalWait((wait) => waitAfterEvents(wait, events));
    if (events.some((e) => e.type === "turn_started")) setOutgoing(null);
    const textTimes = events.filter((e) => e.type === "text_delta").map((e) => e.time_ms);
    if (textTimes.length > 0) {
      // The frame after React commits is the one that shows the text.
      requestAnimationFrame(() => {
        const now = Date.now();
        for (const time of textTimes) recordTextLatency(time, now);
      });
    }
    if (events.some((e) => e.type === "turn_finished")) {
      finishedRef.current();
      const id = events.find((e) => e.type === "turn_finished")?.conversation_id;
      if (id) void loadChanges(id);
    }
  }, [loadChanges]);

  const enqueue = useCallback(
    (token: number, event: Event) => {
      if (token !== view.current) return;
      // A call's view opens by itself when this window saw it live: as the model names the
      // tool (its arguments still coming) or as the call starts.
      if ((event.type === "tool_call_started" || event.type === "tool_call_delta") && event.view) liveViews.current.add(event.call_id);
      queue.current.push(event);
      if (!scheduled.current) {
        scheduled.current = true;
        // Events that arrive together are folded together; React then draws them in the next
        // frame. Waiting for a frame before folding would add up to a frame of delay.
        queueMicrotask(flush);
      }
    },
    [flush],
  );

  // The backend says while its own model server starts; the step shows in a pending turn, its
  // seconds counted from the first. It concerns the server, not a conversation, so changing
  // conversations keeps it (a start begun as a folder opened is still the one to wait for).
  useEffect(() => stopListening(api.onLocalModel((status) => setLocalWait((wait) => foldLocalStatus(wait, status, Date.now())))), []);

  const send = useCallback(
    (text: string, attachments: AttachmentSource[] = []) => {
      const question = text.trim();
      if (!question || runningTurn(chatRef.current)) return;
      const token = view.current;
      setOutgoing({ text: question });
      api.sendMessage(chatRef.current.conversationId, question, (event) => enqueue(token, event), attachments).catch((error: unknown) => {
        if (token !== view.current) return;
        setOutgoing({ text: question, error: errorMessage(error), code: errorCode(error) });
        setLocalWait(null);
      });
    },
    [enqueue],
  );

  const stop = useCallback(() => {
    const id = chatRef.current.conversationId;
    if (id && runningTurn(chatRef.current)) void api.cancelTurn(id);
  }, []);

  const answer = useCallback(async (callId: string, reply: ApprovalReply) => {
    await api.answerApproval(callId, reply);
  }, []);

  const answerQuestion = useCallback(async (callId: string, text: string | null) => {
    await api.answerQuestion(callId, text);
  }, []);

  const undo = useCallback(
    async (turnId: string, force: boolean) => {
      const id = chatRef.current.conversationId;
      if (!id) throw new Error("no conversation");
      try {
        return await api.undoChanges(id, turnId, force);
      } finally {
        await loadChanges(id);
      }
    },
    [loadChanges],
  );

  const open = useCallback(async (conversationId: string) => {
    const loaded = await api.loadConversation(conversationId);
    view.current += 1;
    queue.current = [];
    setOutgoing(null);
    const started = performance.now();
    const state = applyEvents(emptyChat, loaded.events);
    performance.measure("tooltrail:fold-conversation", { start: started });
    dispatch({ kind: "reset", state });
    setChanges({});
    void loadChanges(conversationId);
  }, [loadChanges]);

  const reset = useCallback(() => {
    view.current += 1;
    queue.current = [];
    setOutgoing(null);
    setChanges({});
    dispatch({ kind: "reset", state: emptyChat });
  }, []);

  const sawViewStart = useCallback((callId: string) => liveViews.current.has(callId) && !claimedViews.current.has(callId), []);
  const claimViewStart = useCallback(
    (callId: string) => {
      if (!sawViewStart(callId)) return false;
      claimedViews.current.add(callId);
      return true;
    },
    [sawViewStart],
  );
  const viewSink = useCallback(() => {
    const token = view.current;
    return (event: Event) => enqueue(token, event);
  }, [enqueue]);

  const lastQuestion = outgoing?.text ?? chat.turns.at(-1)?.question ?? null;

  const retry = useCallback(() => {
    if (lastQuestion) send(lastQuestion);
  }, [lastQuestion, send]);

  const busy = Boolean(runningTurn(chat)) || (outgoing !== null && outgoing.error === undefined);
  return { chat, outgoing, localWait, busy, send, retry, stop, answer, answerQuestion, changes, undo, open, reset, lastQuestion, sawViewStart, claimViewStart, viewSink };
}
