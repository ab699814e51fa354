// What a pending turn waits for, said with figures instead of "Thinking…": Tooltrail's own model
// server starting (its step and the seconds so far), and the server reading a long prompt
// before its first token (how many tokens, how many from its cache, how long).
import { useEffect, useId, useState } from "react";
import { useI18n, type Translate } from "../i18n";
import type { PromptRead } from "../state/chat";
import type { LocalWait } from "../state/localWait";
import { formatCount } from "./history/query";

/** The local model starting or being prepared, with the seconds since the wait began. */
export function LocalModelWait({ wait }: { wait: LocalWait }) {
  const { t, lang } = useI18n();
  const now = useNow();
  const seconds = Math.max(0, Math.floor((now - wait.sinceMs) / 1000));
  return (
    <div className="wait-line" data-testid="local-model-wait">
      <span className="spinner" aria-hidden="true" />
      {/* Only the step is announced; the counting seconds would be read out every second. */}
      <span role="status">{t(wait.phase === "starting" ? "localModelStarting" : "localModelWarming", { model: wait.model })}</span>
      <span className="wait-seconds" data-testid="local-model-seconds">
        {t("waitSeconds", { seconds: formatCount(seconds, lang) })}
      </span>
    </div>
  );
}

/** The server reading a round's prompt: tokens read of all, those from its cache, the time. */
export function PromptProgress({ read }: { read: PromptRead }) {
  const { t, lang } = useI18n();
  const textId = useId();
  const line = promptLine(read, t, lang);
  return (
    <div className="wait-line prompt-progress" data-testid="prompt-progress">
      <span id={textId}>{line}</span>
      <progress className="prompt-bar" max={Math.max(1, read.total)} value={Math.min(read.processed, read.total)} aria-label={t("promptReadLabel")} aria-describedby={textId} />
    </div>
  );
}

/** "Reading the prompt: 640 of 1,200 tokens (300 from cache) · 1.2 s". */
export function promptLine(read: PromptRead, t: Translate, lang: string): string {
  const vars = {
    processed: formatCount(read.processed, lang),
    total: formatCount(read.total, lang),
    cached: formatCount(read.cached, lang),
    time: t("waitSeconds", { seconds: (read.elapsedMs / 1000).toFixed(1) }),
  };
  return t(read.cached > 0 ? "promptReadingCached" : "promptReading", vars);
}

/** The time now, again every second while shown. */
function useNow(): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  return now;
}
