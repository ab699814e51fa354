// The conversation: each question, the answer as it streams (markdown, block by block), the
// calls each round made (linked to the timeline), approval cards in place, errors with a retry.
import { memo, useEffect, useLayoutEffect, useRef, useState, type ReactNode } from "react";
import type { ApprovalReply, TurnChanges, UndoReport } from "../bindings";
import { summarizeArguments } from "../format";
import { useI18n } from "../i18n";
import type { Outgoing } from "../session";
import type { CallView, ChatState, RoundView, TurnView } from "../state/chat";
import type { LocalWait } from "../state/localWait";
import { ApprovalCard } from "./ApprovalCard";
import { QuestionCard } from "./QuestionCard";
import { ElicitationCard } from "./ElicitationCard";
import { SamplingCard } from "./SamplingCard";
import { UndoChanges } from "./UndoChanges";
import { Markdown } from "./lazyRenderers";
import { formatCount } from "./history/query";
import { CallTime, StatusIcon } from "./Status";
import { InstructionsLine } from "./Welcome";
import { QuestionText } from "./composer/QuestionText";
import { LocalModelWait, PromptProgress } from "./Waiting";

interface Props {
  chat: ChatState;
  outgoing: Outgoing | null;
  /** The local model starting for the pending question, shown instead of "Thinking…". */
  localWait?: LocalWait | null;
  folder: string;
  selected: string | null;
  /** Increments when the timeline asks the chat to bring `selected` into view. */
  reveal: number;
  onSelectCall: (callId: string) => void;
  onAnswer: (callId: string, reply: ApprovalReply) => Promise<void>;
  onAnswerQuestion: (callId: string, answer: string | null) => Promise<void>;
  /** The turns that wrote files, by turn id. */
  changes: Record<string, TurnChanges>;
  onUndo: (turnId: string, force: boolean) => Promise<UndoReport>;
  onRetry: () => void;
  /** Opens the guide to choosing a model, offered when the endpoint could not be reached. */
  onOpenGuide?: () => void;
}

export function Chat({ chat, outgoing, localWait = null, folder, selected, reveal, onSelectCall, onAnswer, onAnswerQuestion, changes, onUndo, onRetry, onOpenGuide }: Props) {
  const { t } = useI18n();
  const scroller = useRef<HTMLDivElement>(null);
  const stickToBottom = useRef(true);
  const lastTurn = chat.turns.at(-1);
  const lastRound = lastTurn?.rounds.at(-1);
  const contentKey = `${chat.turns.length}:${lastTurn?.rounds.length}:${lastRound?.text.length}:${lastRound?.callIds.length}:${chat.waiting.length}:${lastTurn?.status}:${outgoing?.text}:${outgoing?.error}:${localWait?.phase}:${lastRound?.prompt ? 1 : 0}:${lastTurn ? (changes[lastTurn.id]?.undone ?? "-") : ""}`;

  useLayoutEffect(() => {
    const el = scroller.current;
    if (el && stickToBottom.current) el.scrollTop = el.scrollHeight;
  }, [contentKey]);

  useEffect(() => {
    if (!selected || reveal === 0) return;
    const el = scroller.current?.querySelector(`[data-chip-id="${CSS.escape(selected)}"]`);
    if (el) {
      stickToBottom.current = false;
      el.scrollIntoView({ block: "center" });
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [reveal]);

  const onScroll = () => {
    const el = scroller.current;
    if (el) stickToBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 64;
  };

  const firstWaiting = chat.waiting[0];
  return (
    <div className="chat-scroll" ref={scroller} onScroll={onScroll} data-testid="chat">
      {chat.turns.length === 0 && !outgoing && <p className="chat-empty muted">{t("emptyChat", { folder })}</p>}
      {chat.turns.length === 0 && !outgoing && <InstructionsLine />}
      {chat.turns.map((turn, i) => (
        <Turn
          key={turn.id}
          turn={turn}
          calls={chat.calls}
          isLast={i === chat.turns.length - 1 && !outgoing}
          localWait={i === chat.turns.length - 1 && !outgoing ? localWait : null}
          firstWaiting={firstWaiting}
          waiting={chat.waiting}
          selected={selected}
          onSelectCall={onSelectCall}
          onAnswer={onAnswer}
          onAnswerQuestion={onAnswerQuestion}
          changes={changes[turn.id]}
          onUndo={onUndo}
          onRetry={onRetry}
          onOpenGuide={onOpenGuide}
        />
      ))}
      {outgoing && (
        <div className="turn">
          <div className="bubble user">
            <div className="who">{t("you")}</div>
            <div className="user-text">{outgoing.text}</div>
          </div>
          {outgoing.error ? (
            <div className="turn-error" role="alert">
              <span>{t("sendFailed", { message: outgoing.error })}</span>
              <button type="button" onClick={onRetry}>
                {t("retry")}
              </button>
              {outgoing.code === "unreachable" && onOpenGuide && (
                <button type="button" onClick={onOpenGuide}>
                  {t("guideOpen")}
                </button>
              )}
            </div>
          ) : localWait ? (
            <LocalModelWait wait={localWait} />
          ) : (
            <div className="muted thinking">{t("thinking")}</div>
          )}
        </div>
      )}
    </div>
  );
}

interface TurnProps {
  turn: TurnView;
  calls: Record<string, CallView>;
  isLast: boolean;
  localWait: LocalWait | null;
  firstWaiting: string | undefined;
  /** Every call waiting for the user: those a call's view made are asked about under it. */
  waiting: string[];
  selected: string | null;
  onSelectCall: (callId: string) => void;
  onAnswer: (callId: string, reply: ApprovalReply) => Promise<void>;
  onAnswerQuestion: (callId: string, answer: string | null) => Promise<void>;
  changes: TurnChanges | undefined;
  onUndo: (turnId: string, force: boolean) => Promise<UndoReport>;
  onRetry: () => void;
  onOpenGuide: (() => void) | undefined;
}

const Turn = memo(function Turn({ turn, calls, isLast, localWait, firstWaiting, waiting, selected, onSelectCall, onAnswer, onAnswerQuestion, changes, onUndo, onRetry, onOpenGuide }: TurnProps) {
  const { t, lang } = useI18n();
  const [expanded, setExpanded] = useState(false);
  const hasText = turn.rounds.some((round) => round.text.length > 0);
  const fatal = turn.errors.find((error) => error.fatal);
  const running = turn.status === "running";
  // A finished turn (a stored one too) shows no reading: it ended long ago.
  const reading = running && turn.rounds.some((round) => round.prompt);
  return (
    <div className="turn" data-turn-id={turn.id}>
      <div className="bubble user">
        <div className="who">{t("you")}</div>
        <div className="user-text">
          <QuestionText text={turn.question} />
        </div>
      </div>
      <div className="bubble assistant" aria-busy={turn.status === "running"}>
        <div className="who">{t("assistant")}</div>
        {renderRounds(turn.rounds, calls, expanded, selected, (callIds, rounds, key) => (
          <button type="button" className="collapsed-calls" key={key} onClick={() => setExpanded(true)}>
            {t("collapsedCalls", { count: callIds.length, rounds })}
          </button>
        ), (round) => (
          <div className="round" key={round.round}>
            {running && round.prompt && <PromptProgress read={round.prompt} />}
            {round.text && <Markdown text={round.text} />}
            {round.callIds.length > 0 && (
              <ul className="call-chips">
                {round.callIds.map((callId) => {
                  const call = calls[callId];
                  if (!call) return null;
                  return (
                    <CallChip
                      key={callId}
                      call={call}
                      selected={selected === callId}
                      firstWaiting={firstWaiting}
                      viewCalls={call.view ? calls : undefined}
                      waiting={call.view ? waiting : undefined}
                      onSelectCall={onSelectCall}
                      onAnswer={onAnswer}
                      onAnswerQuestion={onAnswerQuestion}
                    />
                  );
                })}
              </ul>
            )}
          </div>
        ))}
        {running && !hasText && !reading && turn.rounds.every((r) => r.callIds.length === 0) &&
          (localWait ? <LocalModelWait wait={localWait} /> : <div className="muted thinking">{t("thinking")}</div>)}
        {turn.toolMode === "prompt" && (
          <div className="turn-note">{t(turn.toolModeFellBack ? "toolModeFellBack" : "toolModePrompt")}</div>
        )}
        {turn.truncatedRounds?.map((round) => (
          <div className="turn-note truncated-note" key={`cut-${round}`}>
            {t("answerTruncated", { round })}
          </div>
        ))}
        {turn.repetitions?.map((r) => (
          <div className="turn-note truncated-note" key={`loop-${r.round}`}>
            {r.tool
              ? t("repeatedCall", { tool: r.tool, repeats: r.repeats, round: r.round, tokens: r.tokens })
              : r.repeats <= 1
                ? t("repeatedInstructions", { round: r.round, tokens: r.tokens })
                : t("repeatedText", { repeats: r.repeats, round: r.round, tokens: r.tokens })}
          </div>
        ))}
        {turn.roundLimit !== undefined && <div className="turn-note">{t("roundLimit", { limit: turn.roundLimit })}</div>}
        {turn.errors.map((error, i) => (
          <div className="turn-error" role="alert" key={i}>
            <span>{error.message}</span>
            {error.fatal && isLast && error === fatal && (
              <button type="button" onClick={onRetry}>
                {t("retry")}
              </button>
            )}
            {error.fatal && isLast && error === fatal && error.code === "unreachable" && onOpenGuide && (
              <button type="button" onClick={onOpenGuide}>
                {t("guideOpen")}
              </button>
            )}
          </div>
        ))}
        {turn.status === "cancelled" && <div className="turn-note">{t("stopped")}</div>}
        {changes && turn.status !== "running" && <UndoChanges changes={changes} onUndo={onUndo} />}
        {turn.usage.total_tokens > 0 && (
          <div
            className="turn-tokens muted"
            data-testid="turn-tokens"
            title={t("turnTokensTitle", { prompt: formatCount(turn.usage.prompt_tokens, lang), completion: formatCount(turn.usage.completion_tokens, lang), total: formatCount(turn.usage.total_tokens, lang) })}
          >
            {t("turnTokens", { tokens: formatCount(turn.usage.total_tokens, lang) })}
          </div>
        )}
      </div>
    </div>
  );
});

/** Calls in one turn above which quiet rounds fold into one line (the timeline has them all). */
const FOLD_ABOVE = 40;

interface CallChipProps {
  call: CallView;
  selected: boolean;
  firstWaiting: string | undefined;
  /** A call with a view: the calls and the waiting list, for the view's own calls that ask. */
  viewCalls: Record<string, CallView> | undefined;
  waiting: string[] | undefined;
  onSelectCall: (callId: string) => void;
  onAnswer: (callId: string, reply: ApprovalReply) => Promise<void>;
  onAnswerQuestion: (callId: string, answer: string | null) => Promise<void>;
}

// Memoised: a streamed piece of text redraws the growing message, not every call of its turn.
const CallChip = memo(function CallChip({ call, selected, firstWaiting, viewCalls, waiting, onSelectCall, onAnswer, onAnswerQuestion }: CallChipProps) {
  const { t } = useI18n();
  const callId = call.callId;
  return (
    <li>
      <button
        type="button"
        className={`call-chip phase-${call.phase}${selected ? " selected" : ""}`}
        data-chip-id={callId}
        onClick={() => onSelectCall(callId)}
        title={t("showInTimeline")}
      >
        <StatusIcon phase={call.phase} />
        <span className="chip-tool">{call.tool || "…"}</span>
        <span className="chip-args">{summarizeArguments(call.arguments, call.argumentsText)}</span>
        <CallTime call={call} />
      </button>
      {call.phase === "waiting" && <ApprovalCard call={call} primary={firstWaiting === callId} onAnswer={onAnswer} />}
      {viewCalls &&
        waiting?.map((id) => {
          const asked = viewCalls[id];
          if (!asked || asked.viewOf !== callId || asked.phase !== "waiting") return null;
          return (
            <div className="view-call-ask" key={id}>
              <div className="turn-note">{t("viewCallAsk", { tool: call.tool })}</div>
              <ApprovalCard call={asked} primary={firstWaiting === id} onAnswer={onAnswer} />
            </div>
          );
        })}
      {call.phase === "running" && call.question && <QuestionCard call={call} primary={firstWaiting === undefined} onAnswer={onAnswerQuestion} />}
      {call.requests?.map((request) =>
        request.kind === "elicitation" ? (
          <ElicitationCard key={request.requestId} request={request} live={call.phase === "running"} />
        ) : (
          <SamplingCard key={request.requestId} request={request} live={call.phase === "running"} />
        ),
      )}
    </li>
  );
});

/**
 * Draws a turn's rounds. In a turn with many calls, runs of rounds without text — except the
 * last two, and any holding a waiting or selected call — fold into one line, so a turn of
 * thousands of calls stays quick to draw.
 */
function renderRounds(
  rounds: RoundView[],
  calls: Record<string, CallView>,
  expanded: boolean,
  selected: string | null,
  folded: (callIds: string[], rounds: number, key: string) => ReactNode,
  whole: (round: RoundView) => ReactNode,
): ReactNode[] {
  const total = rounds.reduce((sum, round) => sum + round.callIds.length, 0);
  if (expanded || total <= FOLD_ABOVE) return rounds.map(whole);
  const out: ReactNode[] = [];
  let group: RoundView[] = [];
  const flush = () => {
    if (group.length > 0) out.push(folded(group.flatMap((r) => r.callIds), group.length, `fold-${group[0]!.round}`));
    group = [];
  };
  rounds.forEach((round, i) => {
    const keep =
      round.text.length > 0 ||
      i >= rounds.length - 2 ||
      round.callIds.some((id) => id === selected || calls[id]?.phase === "waiting");
    if (keep) {
      flush();
      out.push(whole(round));
    } else {
      group.push(round);
    }
  });
  flush();
  return out;
}
