// A replay running, then its outcome: the replayed turns' calls live on the timeline (as a
// question's), Stop, and when it has ended each replay beside its original.
import { useCallback, useEffect, useId, useRef, useState } from "react";
import { api, errorMessage, type Event, type ReplayOutcome, type ReplayPick, type ReplayWith } from "../../api";
import { useI18n } from "../../i18n";
import { applyEvents, emptyChat, type ChatState } from "../../state/chat";
import { Timeline } from "../Timeline";
import { useTimelineMode } from "../timelineMode";
import { useEscape } from "../useEscape";
import { ReplayComparisonView } from "./ReplayComparisonView";

interface Props {
  pick: ReplayPick;
  with_: ReplayWith;
  /** What is replayed, as a sentence. */
  what: string;
  onClose: () => void;
  /** A replay ended: the table of models tried may have changed. */
  onReplayed: () => void;
}

type RunState = { kind: "running" } | { kind: "done"; outcomes: ReplayOutcome[]; stopped: boolean } | { kind: "failed"; message: string };

let runs = 0;

export function ReplayRun({ pick, with_, what, onClose, onReplayed }: Props) {
  const { t } = useI18n();
  const [chat, setChat] = useState<ChatState>(emptyChat);
  const [state, setState] = useState<RunState>({ kind: "running" });
  const [selected, setSelected] = useState<string | null>(null);
  const [mode, setMode] = useTimelineMode();
  const [runId] = useState(() => `replay_${Date.now()}_${++runs}`);
  const stopped = useRef(false);
  const started = useRef(false);
  const titleId = useId();
  const closeButton = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    // Once per mount, even when React runs effects twice in development.
    if (started.current) return;
    started.current = true;
    const onEvent = (event: Event) => setChat((old) => applyEvents(old, [event]));
    api.replayQuestions(pick, with_, runId, onEvent).then(
      (outcomes) => {
        setState({ kind: "done", outcomes, stopped: stopped.current });
        onReplayed();
      },
      (error: unknown) => setState({ kind: "failed", message: errorMessage(error) }),
    );
  }, [pick, with_, runId, onReplayed]);

  const running = state.kind === "running";
  const stop = useCallback(() => {
    stopped.current = true;
    void api.cancelTurn(runId);
  }, [runId]);
  // Esc stops a running replay first; once it has ended, Esc closes.
  const escape = useCallback(() => (running ? stop() : onClose()), [running, stop, onClose]);
  useEscape(escape);

  useEffect(() => {
    if (!running) closeButton.current?.focus();
  }, [running]);

  const turns = chat.turns.length;
  return (
    <div className="replay-backdrop" data-overlay="replay">
      <div className="replay-run" role="dialog" aria-modal="true" aria-labelledby={titleId} data-testid="replay-run-panel">
        <header className="replay-run-head">
          <h2 id={titleId}>{t("replayRunTitle", { model: with_.model ?? with_.provider })}</h2>
          <span className="muted replay-what">{what}</span>
          <span className="replay-status" role="status" data-testid="replay-status">
            {running
              ? t("replayRunning", { n: Math.max(turns, 1) })
              : state.kind === "failed"
                ? t("replayFailed", { message: state.message })
                : state.stopped
                  ? t("replayStopped")
                  : t("replayDone")}
          </span>
          {running ? (
            <button type="button" className="danger" onClick={stop} data-testid="replay-stop">
              {t("replayStop")}
            </button>
          ) : (
            <button type="button" ref={closeButton} onClick={onClose} data-testid="replay-close">
              {t("replayClose")}
            </button>
          )}
        </header>
        <div className="replay-run-body">
          <div className="replay-results">
            {state.kind === "failed" && (
              <p className="error-text" role="alert">
                {t("replayFailed", { message: state.message })}
              </p>
            )}
            {running && <p className="muted">{t("replayWatch")}</p>}
            {state.kind === "done" && state.outcomes.length === 0 && <p className="muted">{t("replayNothingRan")}</p>}
            {state.kind === "done" &&
              state.outcomes.map((outcome, index) => (
                <article key={`${outcome.turn_id}-${index}`} className="replay-outcome">
                  <h3>{outcome.report ? t("replayOfQuestion", { question: outcome.report.comparison.original.question }) : t("replayOfTurn", { turn: outcome.turn_id })}</h3>
                  {outcome.report ? (
                    <ReplayComparisonView
                      comparison={outcome.report.comparison}
                      firstTokenMs={outcome.report.first_token_ms}
                      changedSince={outcome.report.changed_since}
                      error={outcome.report.error}
                    />
                  ) : (
                    <p className="error-text">{t("replayCouldNot", { message: outcome.error ?? "" })}</p>
                  )}
                </article>
              ))}
          </div>
          <div className="replay-timeline">
            <Timeline
              calls={chat.calls}
              timeline={chat.timeline}
              selected={selected}
              reveal={0}
              onSelect={setSelected}
              onShowInChat={setSelected}
              mode={mode}
              onMode={setMode}
              {...(mode === "waterfall" ? { turns: chat.turns } : {})}
            />
          </div>
        </div>
      </div>
    </div>
  );
}
