// Whether the OS confines the commands the model runs, and how.
import { useEffect, useState } from "react";
import { api, errorMessage, type SandboxView } from "../../api";
import { useI18n } from "../../i18n";

export function SandboxSection() {
  const { t } = useI18n();
  const [status, setStatus] = useState<SandboxView | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let gone = false;
    api.sandboxStatus().then(
      (answer) => {
        if (!gone) setStatus(answer);
      },
      (failure: unknown) => {
        if (!gone) setError(errorMessage(failure));
      },
    );
    return () => {
      gone = true;
    };
  }, []);

  if (error) return <p className="turn-error">{t("cfgLoadFailed", { message: error })}</p>;
  if (!status) return <p className="muted">{t("cfgLoading")}</p>;
  return (
    <div className={`cfg-sandbox ${status.enforced ? "cfg-sandbox-on" : "cfg-sandbox-off"}`} data-testid="cfg-sandbox">
      <div className="cfg-item-title">
        <span className={`cfg-badge ${status.enforced ? "cfg-badge-ok" : "cfg-badge-err"}`}>{status.enforced ? t("cfgSandboxEnforced") : t("cfgSandboxNotEnforced")}</span>
        <span>{status.summary}</span>
      </div>
      <p className="muted small-text">{status.enforced ? t("cfgSandboxOnHint") : t("cfgSandboxOffHint")}</p>
      {status.details.length > 0 && (
        <ul className="cfg-details">
          {status.details.map((line) => (
            <li key={line}>{line}</li>
          ))}
        </ul>
      )}
    </div>
  );
}
