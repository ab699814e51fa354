// "Copy trace id": the OpenTelemetry trace a call belongs to is its question's, and that trace's
// id is the turn id's UUID (crates/telemetry/src/ids.rs), so it is known without asking.
import { useState } from "react";
import { useI18n } from "../i18n";

/** The trace id of the question `turnId`, or null when the id is not a UUID turn id. */
export function traceIdOf(turnId: string): string | null {
  const hex = turnId.replace(/^turn_/, "");
  return /^[0-9a-f]{32}$/.test(hex) ? hex : null;
}

export function CopyTraceId({ turnId }: { turnId: string }) {
  const { t } = useI18n();
  const [copied, setCopied] = useState(false);
  const traceId = traceIdOf(turnId);
  if (!traceId) return null;
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(traceId);
    } catch {
      // Fallback for webviews without the async clipboard.
      const area = document.createElement("textarea");
      area.value = traceId;
      document.body.appendChild(area);
      area.select();
      document.execCommand("copy");
      area.remove();
    }
    setCopied(true);
    setTimeout(() => setCopied(false), 1200);
  };
  return (
    <button type="button" className="link-button" title={traceId} data-testid="copy-trace-id" onClick={() => void copy()}>
      {copied ? t("traceIdCopied") : t("copyTraceId")}
    </button>
  );
}
