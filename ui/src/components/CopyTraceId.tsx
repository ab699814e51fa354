// "Copy trace id": the OpenTelemetry trace a call belongs to is its question's, and that trace's
// id is the turn id's UUID (crates/telemetry/src/ids.rs), so it is known without asking.
import { useI18n } from "../i18n";
import { useCopy } from "./useCopy";

/** The trace id of the question `turnId`, or null when the id is not a UUID turn id. */
export function traceIdOf(turnId: string): string | null {
  const hex = turnId.replace(/^turn_/, "");
  return /^[0-9a-f]{32}$/.test(hex) ? hex : null;
}

export function CopyTraceId({ turnId }: { turnId: string }) {
  const { t } = useI18n();
  const { copied, copy } = useCopy();
  const traceId = traceIdOf(turnId);
  if (!traceId) return null;
  return (
    <button type="button" className="link-button" title={traceId} data-testid="copy-trace-id" onClick={() => void copy(traceId)}>
      {copied ? t("traceIdCopied") : t("copyTraceId")}
    </button>
  );
}
