// The state of a call as an icon, a label and a time: a live timer while it runs.
import { useEffect, useState } from "react";
import { formatDuration } from "../format";
import { useI18n } from "../i18n";
import type { CallPhase, CallView } from "../state/chat";

const ICONS: Record<CallPhase, string> = {
  streaming: "…",
  waiting: "?",
  running: "",
  success: "✓",
  error: "✕",
  denied: "⊘",
  cancelled: "■",
  timeout: "⏱",
};

export function StatusIcon({ phase }: { phase: CallPhase }) {
  const { t } = useI18n();
  return (
    <span className={`status-icon phase-${phase}`} role="img" aria-label={t(`phase_${phase}`)} title={t(`phase_${phase}`)}>
      {phase === "running" ? <span className="spinner" /> : ICONS[phase]}
    </span>
  );
}

/** Re-renders every `intervalMs` while mounted. */
function useNow(intervalMs: number, active: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [intervalMs, active]);
  return now;
}

export function CallTime({ call }: { call: CallView }) {
  const running = call.phase === "running" && call.startedMs !== undefined;
  const now = useNow(100, running);
  if (call.durationMs !== undefined) return <span className="call-time">{formatDuration(call.durationMs)}</span>;
  if (running) {
    // A task's steps are counted by the task's own line on the card, not here.
    const progress = call.task ? undefined : call.progress;
    const step = progress && (progress.total !== undefined ? `${progress.progress}/${progress.total}` : `${progress.progress}`);
    return (
      <span className="call-time live">
        {formatDuration(Math.max(0, now - (call.startedMs ?? now)))}
        {progress && <span className="call-progress" title={progress.message}> · {step}</span>}
      </span>
    );
  }
  return null;
}
