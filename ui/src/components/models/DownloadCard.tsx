// A download's progress card: bytes, rate and time left while it runs; Cancel (which keeps the
// bytes for the next try); how it ended, in a sentence.
import "./models.css";
import type { PullUpdate } from "../../api";
import { isFinished, useDownloads } from "../../downloads";
import { useI18n } from "../../i18n";
import { formatBytes, formatSeconds, percent } from "./format";

export function DownloadCards() {
  const { items } = useDownloads();
  if (items.length === 0) return null;
  return (
    <div className="dl-cards" data-testid="downloads">
      {items.map((item) => (
        <DownloadCard key={item.name} update={item} />
      ))}
    </div>
  );
}

function DownloadCard({ update }: { update: PullUpdate }) {
  const { t } = useI18n();
  const { cancel, dismiss } = useDownloads();
  const name = update.name;
  const done = isFinished(update);
  const share = percent(update);
  const line = (): string => {
    switch (update.phase) {
      case "checking":
        return t("dlChecking");
      case "resuming":
        return t("dlResuming", { have: formatBytes(update.have) });
      case "downloading": {
        const parts = [update.total ? t("dlProgress", { done: formatBytes(update.done), total: formatBytes(update.total) }) : t("dlProgressNoTotal", { done: formatBytes(update.done) })];
        if (update.bytes_per_sec > 0) parts.push(t("dlRate", { rate: formatBytes(update.bytes_per_sec) }));
        if (update.seconds_left !== null) parts.push(t("dlLeft", { time: formatSeconds(update.seconds_left, t) }));
        return parts.join(" · ");
      }
      case "retrying":
        return t("dlRetrying", { reason: update.reason, attempt: update.attempt, of: update.of });
      case "verifying":
        return t("dlVerifying");
      case "done":
        return t(update.used ? "dlDoneUsed" : "dlDone", { name, size: formatBytes(update.size_bytes) });
      case "cancelled":
        return t("dlCancelled", { have: formatBytes(update.have), name });
      case "failed":
        return t("dlFailed", { name, message: update.message });
    }
  };
  const tone = update.phase === "failed" ? " dl-failed" : update.phase === "done" ? " dl-done" : "";
  return (
    <section className={`dl-card${tone}`} aria-label={t("dlProgressLabel", { name })} data-download={name}>
      <div className="dl-head">
        <strong>{done ? name : t("dlTitle", { name })}</strong>
        {done ? (
          <button type="button" className="small" onClick={() => dismiss(name)}>
            {t("dlDismiss")}
          </button>
        ) : (
          <button type="button" className="small" onClick={() => cancel(name)} aria-label={t("dlCancelNamed", { name })}>
            {t("dlCancel")}
          </button>
        )}
      </div>
      {!done && (
        <progress
          className="dl-bar"
          max={100}
          {...(share === null ? {} : { value: share })}
          aria-label={t("dlProgressLabel", { name })}
          aria-valuetext={line()}
        />
      )}
      <p className={update.phase === "failed" ? "dl-line cfg-problem" : "dl-line"} role={done ? "status" : undefined} aria-live="polite">
        {line()}
      </p>
    </section>
  );
}
